"""Counts and sentences in plain words, and no "(s)" or ".." in what a person reads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.domain.words import count, plural, sentence
from app.targetjob import formats

APP = Path(__file__).resolve().parents[2] / "app"

CASES = [
    (0, "change", "0 changes"),
    (1, "change", "1 change"),
    (2, "change", "2 changes"),
    (1, "server instance", "1 server instance"),
    (3, "server instance", "3 server instances"),
    (1, "other query", "1 other query"),
    (2, "other query", "2 other queries"),
    (2, "key", "2 keys"),
    (2, "process", "2 processes"),
    (1, "file", "1 file"),
    (5, "SQL statement", "5 SQL statements"),
]


@pytest.mark.parametrize(("n", "noun", "text"), CASES)
def test_count_is_singular_for_one_and_plural_otherwise(n: int, noun: str, text: str) -> None:
    assert count(n, noun) == text
    assert formats.count(n, noun) == text  # the job's copy on the target says the same


def test_count_takes_an_irregular_plural() -> None:
    assert count(2, "local copy", "local copies") == "2 local copies"
    assert plural("copy") == "copies"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Could not reach the server.", "Could not reach the server."),
        ("Could not reach the server", "Could not reach the server."),
        ("Could not reach the server..", "Could not reach the server."),
        ("is it still starting?", "is it still starting?"),
        ("Checking…", "Checking…"),
        ("", ""),
    ],
)
def test_sentence_ends_in_one_full_stop(text: str, want: str) -> None:
    assert sentence(text) == want


# Parts of the issue other helpers own (Trade-offs, Verify/Done, the planner, the
# benchmark) still carry such texts; they are checked once those parts are merged.
NOT_MINE = ("planner/", "bench/", "ui/pages/tradeoffs.py", "ui/pages/verify.py", "ui/pages/done.py")


def _texts(path: Path) -> list[tuple[int, str]]:
    """The string constants of ``path``, f-strings' literal parts included, with lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


# An error's own text (its problem, detail or message) often ends in a period already.
_ERROR_WORDS = ("exc", "problem", "detail", "reason", "error", "err")


def _period_after_an_error(path: Path) -> list[tuple[int, str]]:
    """F-strings that put a period right after an error's text: "…: {exc}." reads "..".

    ``strerror`` is left out: the C library's messages never end in a period.
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, after in zip(node.values, node.values[1:], strict=False):
            if not isinstance(value, ast.FormattedValue) or not isinstance(after, ast.Constant):
                continue
            expr = ast.unparse(value.value)
            names = {n.id for n in ast.walk(value.value) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(value.value) if isinstance(n, ast.Attribute)}
            if (
                str(after.value).startswith(".")
                and not str(after.value).startswith("..")
                and names & set(_ERROR_WORDS)
                and "strerror" not in expr
            ):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_text_counts_with_a_bracketed_plural_or_ends_in_two_periods() -> None:
    """No "change(s)", "copy(ies)", and no error text put together as "…: {exc}."
    (use :func:`app.domain.words.sentence`, which ends it in exactly one period)."""
    bad = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        if rel.startswith(NOT_MINE) or rel == "domain/words.py":
            continue
        for line, text in _texts(path):
            if "(s)" in text or "(ies)" in text or "(es)" in text:
                bad.append(f"{rel}:{line}: {text!r}")
        bad += [f"{rel}:{line}: {text}" for line, text in _period_after_an_error(path)]
    assert not bad, "\n".join(bad)
