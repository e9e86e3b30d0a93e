"""Values as servers and kernels print them, normalised so the planner can compare them."""

from __future__ import annotations

import math
import re

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtpe]?)b?\s*$", re.IGNORECASE)
_TRUE = {"on", "1", "true", "yes"}
_FALSE = {"off", "0", "false", "no"}


def parse_int(text: str | None) -> int | None:
    """An integer, with the option-file suffixes K, M, G, T, P, E; None if not one."""
    if text is None:
        return None
    match = _SIZE.match(text)
    if match is None:
        return None
    power = " kmgtpe".index(match.group(2).lower() or " ")
    return int(match.group(1)) * int(1024**power)


def parse_bool(text: str | None) -> bool | None:
    """ON/OFF, 1/0, TRUE/FALSE, YES/NO (any case); None if not a boolean."""
    if text is None:
        return None
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None


def normalise(value: str | None, kind: str) -> str | None:
    """The canonical spelling for comparisons: sizes in bytes, ON/OFF, enums case-folded.

    Args:
        value: as the server (SHOW VARIABLES), the kernel or the planner spells it.
        kind: the catalogue type: bool, int, size, float, enum.
    """
    if value is None:
        return None
    if kind == "bool":
        flag = parse_bool(value)
        return value.strip().lower() if flag is None else ("ON" if flag else "OFF")
    if kind in ("int", "size"):
        number = parse_int(value)
        return value.strip().lower() if number is None else str(number)
    if kind == "float":
        try:
            return repr(float(value))
        except ValueError:
            return value.strip().lower()
    return value.strip().casefold()


def same(a: str | None, b: str | None, kind: str) -> bool:
    """True when two spellings mean the same value (``1`` and ``ON``, ``128M`` and bytes)."""
    return a is not None and b is not None and normalise(a, kind) == normalise(b, kind)


def size_text(n: float | None) -> str:
    """Bytes for people: 1.5 GiB, 96 MiB, 512 KiB."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{value:.0f} B"
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - the loop returns at TiB


def duration_text(seconds: float) -> str:
    """A rough duration: 3 s, 2 min, 1.5 h."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def round_down(n: int, unit: int) -> int:
    """``n`` rounded down to a multiple of ``unit`` (at least one unit)."""
    return max(unit, n // unit * unit)


def round_up(n: float, unit: int) -> int:
    """``n`` rounded up to a multiple of ``unit``."""
    return max(unit, math.ceil(n / unit) * unit)


def two_digits(n: float) -> int:
    """Rounded down to two significant digits: 1234 → 1200, 87.5 → 87."""
    if n < 100:
        return int(n)
    scale = 10 ** (int(math.log10(n)) - 1)
    return int(n // scale * scale)
