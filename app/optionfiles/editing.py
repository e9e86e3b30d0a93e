"""Round-trip editing of option files: change only the lines that must change."""

from __future__ import annotations

import difflib
from dataclasses import replace

from app.optionfiles.effective import normalise, resolve
from app.optionfiles.reading import OptionFileError
from app.optionfiles.syntax import (
    SERVER_LINE_BYTES,
    SPACE_BYTES,
    Kind,
    Line,
    OptionFile,
    parse,
    raw,
    remove_end_comment,
    render,
)

_SECRET_KEYS = frozenset({"password", "passwd", "pass"})
_NEEDS_QUOTES = frozenset(b" \t\r\n\x0b\x0c\xa0#'\"\\")


def quote_value(value: str) -> bytes:
    """Write ``value`` so that the server reads back exactly ``value``."""
    data = raw(value)
    if data and not any(b in _NEEDS_QUOTES for b in data):
        return data
    out = bytearray(b'"')
    for b in data:
        if b == 0x5C:
            out += b"\\\\"
        elif b == 0x22:
            out += b'\\"'
        elif b == 0x0A:
            out += b"\\n"
        elif b == 0x0D:
            out += b"\\r"
        elif b == 0x09:
            out += b"\\t"
        elif b == 0x08:
            out += b"\\b"
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def _option_key(key: str) -> str:
    meaning = resolve(f"--{key}")
    return f"maximum_{meaning.name}" if meaning.modifier == "maximum" else meaning.name


def _same_option(line: Line, key: str) -> bool:
    if line.kind is not Kind.OPTION or line.key is None:
        return False
    return _option_key(line.key) == _option_key(key)


def _group_matches(name: str | None, group: str) -> bool:
    return name is not None and name.lower() == group.lower()


def _dominant_ending(lines: tuple[Line, ...]) -> bytes:
    crlf = sum(1 for line in lines if line.ending == b"\r\n")
    lf = sum(1 for line in lines if line.ending == b"\n")
    return b"\r\n" if crlf > lf else b"\n"


def _option_bytes(key: str, value: str | None, ending: bytes) -> bytes:
    if value is None:
        return raw(key) + ending
    return raw(key) + b" = " + quote_value(value) + ending


def _replace_value(line: Line, key: str, value: str | None) -> bytes:
    """Rewrite one option line, keeping indentation, spelling, spacing and comment."""
    body = line.raw[: len(line.raw) - len(line.ending)]
    visible = body.split(b"\x00", 1)[0]
    if len(visible) != len(body):
        return _option_bytes(line.key or key, value, line.ending)
    indent_len = 0
    while indent_len < len(body) and body[indent_len] in SPACE_BYTES:
        indent_len += 1
    indent, rest = body[:indent_len], body[indent_len:]
    cut = remove_end_comment(rest)
    comment = rest[len(cut) :]
    if resolve(f"--{line.key}").modifier in ("skip", "disable", "enable"):
        # "skip-x = ON" would still mean off: write the plain name instead.
        gap = b" " if comment else b""
        return indent + _option_bytes(key, value, b"") + gap + comment + line.ending
    eq = cut.find(b"=")
    if eq < 0:
        name_part = cut.rstrip(bytes(SPACE_BYTES))
        gap = cut[len(name_part) :]
        if value is None:
            return line.raw
        return indent + name_part + b" = " + quote_value(value) + gap + comment + line.ending
    name_part = cut[:eq]
    after = cut[eq + 1 :]
    lead = len(after) - len(after.lstrip(bytes(SPACE_BYTES)))
    stripped = after.rstrip(bytes(SPACE_BYTES))
    trail = after[len(stripped) :]
    if value is None:
        return indent + name_part.rstrip(bytes(SPACE_BYTES)) + trail + comment + line.ending
    if comment and not trail:
        trail = b" "
    new_value = quote_value(value)
    return indent + name_part + b"=" + after[:lead] + new_value + trail + comment + line.ending


def set_option(option_file: OptionFile, group: str, key: str, value: str | None) -> OptionFile:
    """Set ``key`` to ``value`` in ``[group]``, changing as few bytes as possible.

    The last line in the file that sets the same option (dashes or underscores,
    ``loose-`` or not) inside a ``[group]`` section is rewritten in place,
    keeping its spelling, spacing and trailing comment. Otherwise a line is added
    after the last option of the last ``[group]`` section, or a new section is
    added at the end. Every other byte stays.

    Args:
        option_file: the parsed file.
        group: the section, e.g. ``"mysqld"`` (matched without regard to case).
        key: the option name as it should be written if a line is added.
        value: the value (written quoted and escaped when needed), or None for a
            bare ``key``.

    Returns:
        The edited file (the input is unchanged).
    """
    _check_edit(option_file, group, key, value)
    lines = list(option_file.lines)
    last_match = None
    last_in_group = None
    in_group = False
    for index, line in enumerate(lines):
        if line.kind is Kind.ERROR:
            break
        if line.kind is Kind.GROUP:
            in_group = _group_matches(line.group, group)
            if in_group:
                last_in_group = index
            continue
        if in_group and line.kind is Kind.OPTION:
            last_in_group = index
            if _same_option(line, key):
                last_match = index
    ending = _dominant_ending(option_file.lines)
    if last_match is not None:
        old = lines[last_match]
        lines[last_match] = replace(old, raw=_replace_value(old, key, value))
        new_raw = [line.raw for line in lines]
    elif last_in_group is not None:
        new_raw = [line.raw for line in lines]
        anchor = new_raw[last_in_group]
        insert_ending = lines[last_in_group].ending or ending
        if not anchor.endswith(b"\n"):
            new_raw[last_in_group] = anchor + insert_ending
        new_raw.insert(last_in_group + 1, _option_bytes(key, value, insert_ending))
    else:
        new_raw = [line.raw for line in lines]
        prefix = b""
        data = b"".join(new_raw)
        if data and not data.endswith(b"\n"):
            prefix += ending
        if data.strip(bytes(SPACE_BYTES)):
            prefix += ending
        new_raw.append(prefix + b"[" + raw(group) + b"]" + ending)
        new_raw.append(_option_bytes(key, value, ending))
    edited = parse(b"".join(new_raw), option_file.path)
    for line in edited.lines:
        if len(line.raw) >= SERVER_LINE_BYTES and not line.raw.endswith(b"\n"):
            raise ValueError(f"the line for {key} would be longer than the server reads")
    return edited


#: How a server variable that is not a plain ``key = value`` is written: log_bin OFF is
#: ``skip-log-bin`` (``log-bin = OFF`` would name the binary log "OFF" and turn it on).
#: Checked on MySQL 9.7 and MariaDB 11.8: a later ``skip-log-bin`` beats an earlier
#: ``log-bin = name``.
SWITCHED_OFF_BY_SKIP = ("log_bin",)


def set_server_option(option_file: OptionFile, group: str, key: str, value: str) -> OptionFile:
    """Set a server variable in ``[group]`` as the server reads it (see set_option).

    ``log_bin`` OFF becomes a bare ``skip-log-bin``, after every line of this file's
    ``[group]`` that sets log_bin is taken out (set_option would rewrite ``log-bin = name``
    in place as a bare ``log-bin``, which turns it on). Any other key: set_option.
    """
    if key in SWITCHED_OFF_BY_SKIP and value.strip().upper() in ("OFF", "0"):
        in_group = False
        numbers = []
        for line in option_file.lines:
            if line.kind is Kind.GROUP:
                in_group = _group_matches(line.group, group)
            elif in_group and _same_option(line, key) and line.number is not None:
                numbers.append(line.number)
        for number in reversed(numbers):
            option_file = remove_option_line(option_file, number, key)
        return set_option(option_file, group, "skip-" + key.replace("_", "-"), None)
    return set_option(option_file, group, key, value)


def remove_option_line(option_file: OptionFile, number: int, key: str) -> OptionFile:
    """Remove line ``number`` when it sets ``key`` (any spelling); every other byte stays.

    Raises:
        ValueError: that line does not set ``key`` (the file changed since it was read).
    """
    lines = list(option_file.lines)
    found = [i for i, line in enumerate(lines) if line.number == number]
    if not found or not _same_option(lines[found[0]], key):
        raise ValueError(f"line {number} of {option_file.path} does not set {key}")
    del lines[found[0]]
    return parse(b"".join(line.raw for line in lines), option_file.path)


_BANG_KINDS = (Kind.INCLUDE, Kind.INCLUDEDIR, Kind.DIRECTIVE)
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _check_edit(option_file: OptionFile, group: str, key: str, value: str | None) -> None:
    last = option_file.lines[-1] if option_file.lines else None
    if last is not None and not last.ending and last.kind in _BANG_KINDS:
        raise OptionFileError(
            f"{option_file.path}, line {last.number}: the last line is a directive with no "
            "newline, which the server reads cut short; adding a line would change it.",
            "End the file with a newline first (and check what it includes then).",
            path=option_file.path,
            line=last.number,
        )
    first_error = option_file.first_error
    if first_error is not None:
        raise OptionFileError(
            f"{option_file.path}, line {first_error.number}: {first_error.error}; "
            "the server stops reading the file there, so InnoTune will not edit it.",
            "Fix that line first.",
            path=option_file.path,
            line=first_error.number,
        )
    if not key or not set(raw(key)) <= _NAME_BYTES:
        raise ValueError(f"not an option name InnoTune writes: {key!r}")
    if not group or not set(raw(group)) <= _NAME_BYTES:
        raise ValueError(f"not a group name InnoTune writes: {group!r}")
    if value is not None and "\x00" in value:
        raise ValueError(f"{key}: a value cannot hold a NUL byte")


def holds_secrets(option_file: OptionFile) -> bool:
    """True when the file sets a password (e.g. ``[client] password=``): never rewrite it."""
    for line in option_file.lines:
        if line.kind is Kind.OPTION and line.key is not None:
            name = normalise(line.key).lower()
            if name in _SECRET_KEYS or name.endswith("_password"):
                return True
    return False


def _diff_lines(data: bytes) -> list[str]:
    pieces = [piece + b"\n" for piece in data.split(b"\n")]
    pieces[-1] = pieces[-1][:-1]
    lines = [piece.decode("utf-8", "backslashreplace") for piece in pieces if piece]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(old: OptionFile | bytes, new: OptionFile | bytes, path: str) -> str:
    """A unified diff between two versions of ``path`` (empty when they are equal)."""
    old_data = old if isinstance(old, bytes) else render(old)
    new_data = new if isinstance(new, bytes) else render(new)
    if old_data == new_data:
        return ""
    return "".join(
        difflib.unified_diff(
            _diff_lines(old_data),
            _diff_lines(new_data),
            fromfile=f"a{path}" if path.startswith("/") else f"a/{path}",
            tofile=f"b{path}" if path.startswith("/") else f"b/{path}",
        )
    )
