"""The lossless parser and the editor: byte-identical round trips, minimal edits."""

from __future__ import annotations

import difflib
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.optionfiles import (
    Kind,
    Node,
    OptionFileError,
    collect,
    holds_secrets,
    parse,
    render,
    set_option,
    unified_diff,
)
from app.optionfiles.syntax import SERVER_LINE_BYTES

# -- strategies ---------------------------------------------------------------------------------

_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789", min_size=1, max_size=20).filter(
    lambda s: (
        s[0].isalpha()
        and not s.startswith(("skip", "enable", "disable", "maximum", "loose", "autoset"))
    )
)
_GROUP = st.sampled_from(["mysqld", "server", "mariadb", "client", "mysqld-10.11", "galera"])
_VALUE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_VALUE = st.text(alphabet=_VALUE_CHARS, max_size=40)


@st.composite
def option_file_text(draw: st.DrawFn) -> bytes:
    """Text that looks like a my.cnf: groups, options, comments, includes, odd bytes."""
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    pieces = []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            pieces.append(
                b"[" + draw(_GROUP).encode() + b"]" + draw(st.sampled_from([b"", b" # x"]))
            )
        elif kind == 1:
            pieces.append(draw(st.sampled_from([b"# c", b";c", b"  # caf\xe9", b"#\xff\xfe"])))
        elif kind == 2:
            pieces.append(draw(st.sampled_from([b"", b"  ", b"\t"])))
        elif kind == 3:
            pieces.append(b"!include" + draw(st.sampled_from([b" /etc/x.cnf", b"", b"dir /d"])))
        else:
            key = draw(_NAME).encode()
            value = draw(st.binary(max_size=20)).replace(b"\n", b"").replace(b"\r", b"")
            sep = draw(st.sampled_from([b"=", b" = ", b"", b"\t=\t"]))
            pieces.append(draw(st.sampled_from([b"", b" "])) + key + sep + (value if sep else b""))
    data = ending.join(pieces)
    if draw(st.booleans()):
        data += ending
    return data


@st.composite
def clean_option_file(draw: st.DrawFn) -> bytes:
    """An option file the server reads without error (what set_option is allowed to edit)."""
    data = draw(option_file_text())
    parsed = parse(data)
    if parsed.errors:
        # Put a group first and drop the other rejected lines, keeping everything else.
        kept = [line.raw for line in parsed.lines if line.kind is not Kind.ERROR]
        data = b"[client]\n" + b"".join(kept)
        if parse(data).errors:
            data = b"[client]\n"
    return data


# -- round trip ---------------------------------------------------------------------------------


@given(st.binary(max_size=3000))
@settings(max_examples=300)
def test_any_bytes_round_trip(data: bytes) -> None:
    """parse → render is byte-identical for arbitrary bytes."""
    assert render(parse(data, "x.cnf")) == data


@given(option_file_text())
@settings(max_examples=300)
def test_option_file_like_text_round_trips(data: bytes) -> None:
    """parse → render is byte-identical for generated my.cnf-like text (CRLF, latin-1...)."""
    parsed = parse(data, "x.cnf")
    assert render(parsed) == data
    assert [line.number for line in parsed.lines] == list(range(1, len(parsed.lines) + 1))


def test_very_long_file_and_long_lines_round_trip() -> None:
    """A 4 MB file parses fast and comes back identical; long lines split like fgets."""
    line = b"[mysqld]\r\n" + b"innodb_buffer_pool_size = 1G # caf\xe9\n" * 100_000
    data = line + b"x=" + b"v" * 10_000 + b"\nlast=1"
    start = time.monotonic()
    parsed = parse(data, "big.cnf")
    elapsed = time.monotonic() - start
    assert render(parsed) == data
    assert elapsed < 20
    tail = parsed.lines[-4:]
    assert [len(line.raw) for line in tail[:2]] == [SERVER_LINE_BYTES, SERVER_LINE_BYTES]
    assert any("longer than" in w for w in parsed.warnings)


# -- classification, as the real my_print_defaults reads it ----------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"a=1", "--a=1"),
        (b"b = 2 # c", "--b=2"),
        (b'c="x # y" # z', "--c=x # y"),
        (b'd = "q', '--d="q'),
        (b'  key with space = v \\s\\t\\\\ \\x\\"', '--key with space=v  \t\\ \\x"'),
        (b"a#b=1", "--a"),
        (b'c"#"=2', '--c"#"=2'),
        (b'd=x\\"#y', '--d=x"#y'),
        (b"f='a\"b' # c", '--f=a"b'),
        (b"\xa0a\xa0=\xa01\xa0", "--a=1"),
        (b"a=1\x00zz", "--a=1"),
        (b"e=", "--e="),
        (b"--a=1", "----a=1"),
        (b"b=\\r", "--b=\r"),
        (b"trailing=a\\", "--trailing=a\\"),
    ],
)
def test_option_lines_read_like_my_print_defaults(line: bytes, expected: str) -> None:
    """Each expectation was printed by my_print_defaults 10.11 for the same line."""
    parsed = parse(b"[mysqld]\n" + line + b"\n")
    option = parsed.lines[1]
    assert option.kind is Kind.OPTION
    assert option.argument == expected


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"[mysqld\n", Kind.ERROR),
        (b"[mysqld]junk\n", Kind.GROUP),
        (b"!include\n", Kind.ERROR),
        (b"!includedir   \n", Kind.ERROR),
        (b"! include /x.cnf\n", Kind.INCLUDE),
        (b"!INCLUDE /x.cnf\n", Kind.DIRECTIVE),
        (b"!includex /x.cnf\n", Kind.DIRECTIVE),
        (b"!includedir\t/d/\n", Kind.INCLUDEDIR),
        (b"option=1\n", Kind.ERROR),  # before any group
        (b"   \r\n", Kind.BLANK),
        (b"; c\n", Kind.COMMENT),
    ],
)
def test_line_kinds(data: bytes, kind: Kind) -> None:
    """Directives, groups and rejected lines are told apart as the server does."""
    assert parse(data).lines[0].kind is kind


def test_include_path_loses_its_last_byte_without_a_newline() -> None:
    """The server assumes a newline and drops the last byte of a final !include line."""
    assert parse(b"[a]\n!include /etc/x.cnf").lines[1].target == "/etc/x.cn"
    assert parse(b"[a]\n!include /etc/x.cnf  \r\n").lines[1].target == "/etc/x.cnf"
    assert parse(b"[a]\n!include /etc/x.cnf # not a comment\n").lines[1].target == (
        "/etc/x.cnf # not a comment"
    )


# -- editing ------------------------------------------------------------------------------------


def _split_arg(arg: str) -> tuple[str, str | None]:
    name, eq, value = arg[2:].partition("=")
    return name.replace("-", "_"), (value if eq else None)


def _read_back(data: bytes, group: str) -> list[str]:
    def reader(path: str) -> Node:
        # any !includedir finds an empty directory, any !include nothing
        return Node("file", data=data) if path == "/t.cnf" else Node("dir")

    return [a.text for a in collect(reader, ["/t.cnf"], [group])]


@given(clean_option_file(), _GROUP, _NAME, st.one_of(st.none(), _VALUE))
@settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
def test_set_option_changes_only_what_it_must(
    data: bytes, group: str, key: str, value: str | None
) -> None:
    """After any edit, the server reads the new value, and only the target lines differ."""
    before = parse(data, "/t.cnf")
    last = before.lines[-1] if before.lines else None
    if (
        last is not None
        and not last.ending
        and last.kind in (Kind.INCLUDE, Kind.INCLUDEDIR, Kind.DIRECTIVE)
    ):
        # appending a line would change what the server reads there: refused
        with pytest.raises(OptionFileError):
            set_option(before, group, key, value)
        return
    after = set_option(before, group, key, value)
    new = render(after)
    # 1. the server (our oracle-checked reader) now ends with this key's new value
    args = _read_back(new, group)
    wanted = key.replace("-", "_")
    mine = [_split_arg(a) for a in args if _split_arg(a)[0] == wanted]
    assert mine, args
    assert mine[-1] == (wanted, value)
    # 2. every other line is byte-identical: at most one old line changed, at most a few added
    old_lines = data.split(b"\n")
    new_lines = new.split(b"\n")
    changed_old = 0
    added = 0
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed_old += i2 - i1
        added += (j2 - j1) - (i2 - i1)
    assert changed_old <= 1
    assert added <= 4  # a newline for the last line, a blank, the header, the option
    assert render(parse(new)) == new


def test_set_option_keeps_spelling_spacing_comment_and_crlf() -> None:
    """The changed line keeps its name spelling, spacing, trailing comment and CRLF."""
    data = (
        b"[client]\r\npassword = x\r\n[mysqld]\r\n"
        b"  innodb-buffer-pool-size\t=  128M   # sized for 1 GB\r\n"
    )
    after = render(set_option(parse(data), "mysqld", "innodb_buffer_pool_size", "2G"))
    assert after == data.replace(b"128M", b"2G")


def test_set_option_rewrites_a_negated_line_instead_of_keeping_skip() -> None:
    """skip-x = ON would still mean off, so the name is rewritten too."""
    data = b"[mysqld]\nskip-innodb-doublewrite  # speed\n"
    after = render(set_option(parse(data), "mysqld", "innodb_doublewrite", "ON"))
    assert after == b"[mysqld]\ninnodb_doublewrite = ON # speed\n"


def test_set_option_adds_to_the_last_section_and_creates_a_missing_one() -> None:
    """A new key goes after the section's last option; a missing section goes at the end."""
    data = b"[mysqld]\na = 1\n\n# about client\n[client]\nb=2"
    added = render(set_option(parse(data), "mysqld", "max_connections", "500"))
    assert added == b"[mysqld]\na = 1\nmax_connections = 500\n\n# about client\n[client]\nb=2"
    created = render(set_option(parse(data), "mariadb", "sync_binlog", "1"))
    assert created == data + b"\n\n[mariadb]\nsync_binlog = 1\n"


def test_set_option_builds_a_new_drop_in_from_nothing() -> None:
    """An empty (new) file becomes a one-section drop-in."""
    new = render(
        set_option(parse(b"", "/etc/mysql/mariadb.conf.d/99-innotune.cnf"), "mysqld", "a", "1")
    )
    assert new == b"[mysqld]\na = 1\n"


def test_set_option_quotes_values_the_server_would_misread() -> None:
    """Values with #, spaces, quotes or backslashes are quoted so they read back exactly."""
    for value in ["a # b", " lead", 'say "hi"', "C:\\path", "tab\there", "", "x\ny"]:
        new = render(set_option(parse(b"[mysqld]\n"), "mysqld", "v", value))
        assert _read_back(new, "mysqld")[-1] == f"--v={value}"


def test_set_option_refuses_a_file_the_server_rejects() -> None:
    """Never write on the basis of a file the server itself would not read."""
    with pytest.raises(OptionFileError, match="line 2"):
        set_option(parse(b"[mysqld]\n[broken\n", "/etc/my.cnf"), "mysqld", "a", "1")


def test_set_option_refuses_bad_names_and_values() -> None:
    """Names with '=' or blanks, and NUL in values, cannot be written faithfully."""
    for group, key, value in [
        ("mysqld", "a=b", "1"),
        ("my]sqld", "a", "1"),
        ("mysqld", "a", "x\0"),
    ]:
        with pytest.raises(ValueError):
            set_option(parse(b"[mysqld]\n"), group, key, value)


def test_unified_diff_shows_only_the_change() -> None:
    """The diff names the file and shows just the changed line."""
    old = parse(b"[mysqld]\na = 1\nb = 2\n")
    new = set_option(old, "mysqld", "b", "3")
    diff = unified_diff(old, new, "/etc/mysql/my.cnf")
    assert diff.startswith("--- a/etc/mysql/my.cnf\n+++ b/etc/mysql/my.cnf\n")
    assert "-b = 2\n+b = 3\n" in diff
    assert unified_diff(old, old, "/x") == ""
    assert "No newline at end of file" in unified_diff(b"[a]\nx=1", b"[a]\nx=2", "/x")


def test_holds_secrets() -> None:
    """A [client] password marks the file as one never to rewrite."""
    assert holds_secrets(parse(b"[client]\npassword = s3cret\n"))
    assert holds_secrets(parse(b"[mysqld]\nloose-wsrep_sst_password=x\n"))
    assert not holds_secrets(parse(b"[mysqld]\nmax_connections=1\n"))
