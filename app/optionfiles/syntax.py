"""A lossless parser for MySQL/MariaDB option files (my.cnf).

Every byte of the file is kept: ``render(parse(data)) == data`` for any input,
so an edit can touch only the lines it means to. Each line is classified the
way ``mysys/my_default.c`` (``search_default_file_with_ext``) reads it:

* the server reads a file with ``fgets`` into a 4095-byte buffer, so a line of
  more than 4094 bytes is read as several lines; we split it the same way so
  that line numbers match the server's messages;
* a line is a C string: everything after a NUL byte is invisible to the server;
* whitespace is ``my_isspace`` in latin1: tab, LF, VT, FF, CR, space and 0xA0;
* ``#`` or ``;`` as the first non-blank character starts a comment; after a
  value only ``#`` does, and not inside quotes;
* ``[name]`` opens a group (text after ``]`` is ignored; a line with no ``]``
  is rejected); ``!include X`` and ``!includedir D`` are directives, anything
  else after ``!`` is ignored; an option before any group is rejected.

Names and values are decoded as UTF-8 with ``surrogateescape`` so that no byte
is lost and ``str.encode("utf-8", "surrogateescape")`` gives the bytes back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

# fgets(buff, sizeof(buff) - 1, fp) with char buff[4096]: at most 4094 bytes per read.
SERVER_LINE_BYTES = 4094

# my_isspace() with my_charset_latin1 (checked byte by byte against my_print_defaults).
SPACE_BYTES = frozenset(b"\t\n\x0b\x0c\r \xa0")

_ESCAPES = {
    ord("n"): b"\n",
    ord("t"): b"\t",
    ord("r"): b"\r",
    ord("b"): b"\b",
    ord("s"): b" ",
    ord('"'): b'"',
    ord("'"): b"'",
    ord("\\"): b"\\",
}


class Kind(enum.Enum):
    """What a line is, as the server sees it."""

    BLANK = "blank"
    COMMENT = "comment"
    GROUP = "group"
    OPTION = "option"
    INCLUDE = "include"
    INCLUDEDIR = "includedir"
    DIRECTIVE = "directive"  # a "!" line that is neither include nor includedir: ignored
    ERROR = "error"  # the server stops reading this file here


def text(data: bytes) -> str:
    """Decode bytes without losing any (``surrogateescape``)."""
    return data.decode("utf-8", "surrogateescape")


def raw(value: str) -> bytes:
    """Encode text produced by :func:`text` back into the exact bytes."""
    return value.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Line:
    """One line as the server reads it, with its exact bytes.

    Attributes:
        number: 1-based line number, counted the way the server counts.
        raw: the exact bytes, including the line ending if any.
        kind: the classification.
        group: for GROUP the name; for OPTION the group it belongs to.
        key: for OPTION the name as written (may carry prefixes like ``loose-``).
        value: for OPTION the value after quotes and escapes, or None for a bare key.
        target: for INCLUDE / INCLUDEDIR the path as the server would open it.
        error: for ERROR (and odd but accepted lines) what is wrong.
    """

    number: int
    raw: bytes
    kind: Kind
    group: str | None = None
    key: str | None = None
    value: str | None = None
    target: str | None = None
    error: str | None = None

    @property
    def argument(self) -> str:
        """The command-line form the server builds: ``--key`` or ``--key=value``."""
        assert self.key is not None
        return f"--{self.key}" if self.value is None else f"--{self.key}={self.value}"

    @property
    def ending(self) -> bytes:
        """The line ending: CRLF, LF, or nothing (the last line, or a split long line)."""
        if self.raw.endswith(b"\r\n"):
            return b"\r\n"
        return b"\n" if self.raw.endswith(b"\n") else b""


@dataclass(frozen=True)
class OptionFile:
    """A parsed option file: its path, its lines, and the problems found."""

    path: str
    lines: tuple[Line, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def data(self) -> bytes:
        """The file's bytes (same as :func:`render`)."""
        return render(self)

    @property
    def errors(self) -> tuple[Line, ...]:
        """Lines the server rejects."""
        return tuple(line for line in self.lines if line.kind is Kind.ERROR)

    @property
    def first_error(self) -> Line | None:
        """The line where the server stops reading this file, if any."""
        for line in self.lines:
            if line.kind is Kind.ERROR:
                return line
        return None


def render(option_file: OptionFile) -> bytes:
    """Return the file's bytes, exactly as parsed or edited."""
    return b"".join(line.raw for line in option_file.lines)


def split_server_lines(data: bytes) -> list[bytes]:
    """Split bytes into the pieces the server's ``fgets`` loop reads."""
    pieces: list[bytes] = []
    start = 0
    size = len(data)
    while start < size:
        newline = data.find(b"\n", start, start + SERVER_LINE_BYTES)
        end = newline + 1 if newline >= 0 else min(size, start + SERVER_LINE_BYTES)
        pieces.append(data[start:end])
        start = end
    return pieces


def _lstrip(buf: bytes) -> bytes:
    i = 0
    while i < len(buf) and buf[i] in SPACE_BYTES:
        i += 1
    return buf[i:]


def _rstrip(buf: bytes) -> bytes:
    end = len(buf)
    while end > 0 and buf[end - 1] in SPACE_BYTES:
        end -= 1
    return buf[:end]


def remove_end_comment(buf: bytes) -> bytes:
    """Cut a trailing ``#`` comment, honouring quotes and backslashes inside them."""
    quote = 0
    escape = False
    for i, ch in enumerate(buf):
        if ch in (0x22, 0x27) and not escape:
            if not quote:
                quote = ch
            elif quote == ch:
                quote = 0
        if not quote and ch == 0x23:
            return buf[:i]
        escape = bool(quote) and ch == 0x5C and not escape
    return buf


def unescape_value(value: bytes) -> bytes:
    """Strip one pair of matching quotes and resolve the escapes, as the server does."""
    if len(value) > 1 and value[0] in (0x22, 0x27) and value[0] == value[-1]:
        value = value[1:-1]
    out = bytearray()
    i = 0
    n = len(value)
    while i < n:
        ch = value[i]
        if ch == 0x5C and i != n - 1:
            nxt = value[i + 1]
            out += _ESCAPES.get(nxt, bytes((0x5C, nxt)))
            i += 2
        else:
            out.append(ch)
            i += 1
    return bytes(out)


def _directive_argument(rest: bytes) -> bytes | None:
    """The argument after ``!include``/``!includedir`` as ``get_argument`` cuts it.

    The server assumes the line ends in a newline and always drops the last
    byte, so on a last line without one the final character is lost.
    """
    rest = _lstrip(rest)
    end = len(rest) - 1
    while end - 1 >= 0 and rest[end - 1] in SPACE_BYTES:
        end -= 1
    if end <= 0:
        return None
    return rest[:end]


def classify(piece: bytes, number: int, group: str | None, seen_group: bool) -> Line:
    """Classify one server line. ``seen_group`` says whether a ``[group]`` came before."""
    visible = piece.split(b"\x00", 1)[0]
    body = _lstrip(visible)
    if not body or body[0] in (0x23, 0x3B):
        return Line(number, piece, Kind.BLANK if not body else Kind.COMMENT)
    if body[0] == 0x21:  # "!"
        directive = _lstrip(body[1:])
        for word, kind in ((b"includedir", Kind.INCLUDEDIR), (b"include", Kind.INCLUDE)):
            after = directive[len(word) : len(word) + 1]
            if directive.startswith(word) and after and after[0] in SPACE_BYTES:
                argument = _directive_argument(directive[len(word) :])
                if argument is None:
                    return Line(
                        number,
                        piece,
                        Kind.ERROR,
                        error=f"Wrong '!{word.decode()}' directive: no path after it",
                    )
                return Line(number, piece, kind, target=text(argument))
        return Line(
            number,
            piece,
            Kind.DIRECTIVE,
            error="unknown directive, ignored (only !include and !includedir exist)",
        )
    if body[0] == 0x5B:  # "["
        close = body.find(b"]", 1)
        if close < 0:
            return Line(number, piece, Kind.ERROR, error="Wrong group definition: no ']'")
        return Line(number, piece, Kind.GROUP, group=text(_rstrip(body[1:close])))
    if not seen_group:
        return Line(number, piece, Kind.ERROR, error="Found option without preceding group")
    cut = remove_end_comment(body)
    eq = cut.find(b"=")
    if eq < 0:
        return Line(number, piece, Kind.OPTION, group=group, key=text(_rstrip(cut)))
    key = _rstrip(cut[:eq])
    value = unescape_value(_rstrip(_lstrip(cut[eq + 1 :])))
    odd = None
    if not key and len(body) != len(visible):
        # The server walks backwards past the start of the key here: undefined behaviour.
        odd = "option with an empty name after leading blanks: the server reads garbage"
    return Line(
        number, piece, Kind.OPTION, group=group, key=text(key), value=text(value), error=odd
    )


def parse(data: bytes, path: str = "") -> OptionFile:
    """Parse an option file's bytes, keeping every byte.

    Args:
        data: the file's contents, any bytes at all.
        path: where the file lives (used in messages only).

    Returns:
        The lines, classified. Parsing never fails: lines the server rejects are
        ``Kind.ERROR`` lines, and the server ignores everything after the first.
    """
    lines: list[Line] = []
    warnings: list[str] = []
    group: str | None = None
    seen_group = False
    for number, piece in enumerate(split_server_lines(data), start=1):
        line = classify(piece, number, group, seen_group)
        if line.kind is Kind.GROUP:
            group = line.group
            seen_group = True
        if len(piece) == SERVER_LINE_BYTES and not piece.endswith(b"\n"):
            warnings.append(
                f"{path}:{number}: line longer than {SERVER_LINE_BYTES} bytes; "
                "the server reads the rest as a separate line"
            )
        lines.append(line)
    return OptionFile(path, tuple(lines), tuple(warnings))
