"""The host script's output: its marker sections, and the line and value forms in them.

No I/O here: the text in, plain Python values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MARKER = "@@innotune "


@dataclass
class Sections:
    """The script output split at its marker lines."""

    parts: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str) -> list[str] | None:
        """The lines of section ``name``, or None when the script never printed it."""
        return self.parts.get(name)

    def lines(self, name: str) -> list[str]:
        """The lines of section ``name`` (empty when missing)."""
        return self.parts.get(name) or []


def split_sections(text: str) -> Sections:
    """Split the host script's output into named sections."""
    sections = Sections()
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(MARKER):
            current = []
            sections.parts[line[len(MARKER) :].strip()] = current
        elif current is not None and line != "":
            current.append(line)
    return sections


def key_values(lines: Sequence[str], sep: str = "=") -> dict[str, str]:
    """``key=value`` lines to a dict (first ``sep`` splits)."""
    out: dict[str, str] = {}
    for line in lines:
        key, found, value = line.partition(sep)
        if found:
            out[key.strip()] = value
    return out


def parse_attr_lines(lines: Sequence[str]) -> tuple[dict[str, str], set[str]]:
    """``path:value`` lines from ``attrs`` to {path: value}, plus the unreadable paths.

    The paths we read never contain ':' (kernel device names do not) but values may
    (``dev`` is ``8:0``), so the path ends at the first ':'.
    """
    values: dict[str, str] = {}
    unreadable: set[str] = set()
    for line in lines:
        if line.startswith("!unreadable "):
            unreadable.add(line[len("!unreadable ") :])
            continue
        path, found, value = line.partition(":")
        if found and path.startswith("/"):
            # A file of several lines keeps its first; none of the files we read has more.
            values.setdefault(path, value)
    return values, unreadable


def leading_int(value: str | None) -> int | None:
    """The first word of ``value`` as an integer, or None."""
    if value is None:
        return None
    try:
        return int(value.strip().split()[0])
    except (ValueError, IndexError):
        return None


def bracketed(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """``"always [madvise] never"`` → ("madvise", all choices); no brackets → (sole value)."""
    if value is None:
        return None, ()
    words = value.split()
    current = None
    choices = []
    for word in words:
        if word.startswith("[") and word.endswith("]"):
            word = word[1:-1]
            current = word
        choices.append(word)
    if current is None and len(choices) == 1:
        current = choices[0]
    return current, tuple(choices)
