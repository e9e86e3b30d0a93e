"""The batch client's output, unescaped the way the client escapes it."""

from __future__ import annotations

from app.mysql.session import parse_batch, render_sql


def test_escapes_and_null() -> None:
    out = "a\\tb\tNULL\tx\\ny\n\\\\z\t\t0\n"
    assert parse_batch(out) == [("a\tb", None, "x\ny"), ("\\z", "", "0")]


def test_render_quotes_arguments() -> None:
    sql = render_sql("SELECT %s, %s", ["it's", 3])
    assert sql == "SELECT 'it\\'s', 3"
