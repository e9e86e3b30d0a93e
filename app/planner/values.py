"""Values as servers and kernels print them, normalised so the planner can compare them.

Parsing and comparing live in :mod:`app.targetjob.values` (the job on the target runs the
same code); this module adds the planner's units and the spellings for people.
"""

from __future__ import annotations

import math

from app.domain.words import size_text
from app.targetjob.values import normalise, parse_bool, parse_int, same_value

__all__ = ["size_text"]

__all__ = [
    "GIB",
    "KIB",
    "MIB",
    "duration_text",
    "normalise",
    "parse_bool",
    "parse_int",
    "round_down",
    "round_up",
    "same",
    "same_value",
    "size_text",
    "two_digits",
]

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# One spelling of values for the planner, the describers and the job on the target.
same = same_value  # the planner's name for it: same(current, proposed, knob.type)


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
