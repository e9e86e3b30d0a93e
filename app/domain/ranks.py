"""Two small samples compared by their ranks, with no assumption about their distribution.

The exact Mann–Whitney null distribution and the Hodges–Lehmann interval built from it: the
interval for the shift between two samples holds with the stated confidence whatever the
rounds' distribution (a wild round moves it one order statistic, not the whole band), as long
as the rounds of a side are exchangeable. Everything here is exact, so small samples are
honest: with 3 rounds a side, no interval narrower than "anything" is possible at 99 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=512)
def u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) orderings give each U from 0 to n*m (no ties)."""
    # f(n, m, u) = f(n - 1, m, u - m) + f(n, m - 1, u), built up one row of m at a time.
    rows = [[1] + [0] * (n * m) for _ in range(m + 1)]  # rows[j] = f(0, j, .)
    for i in range(1, n + 1):
        new = [[0] * (n * m + 1) for _ in range(m + 1)]
        new[0][0] = 1
        for j in range(1, m + 1):
            for u in range(i * j + 1):
                take = rows[j][u - j] if u >= j else 0
                new[j][u] = take + new[j - 1][u]
        rows = new
    return tuple(rows[m])


def critical_rank(n: int, m: int, alpha: float) -> int:
    """The largest k with P(U < k) * 2 <= alpha; 0 when even U = 0 is not that unlikely.

    The two-sided interval at confidence 1 - alpha runs from the k-th smallest to the k-th
    largest of the n*m pairwise differences.
    """
    counts = u_counts(n, m)
    total = math.comb(n + m, n)
    below, k = 0, 0
    for u, c in enumerate(counts):
        below += c
        if 2 * below / total > alpha:
            break
        k = u + 1
    return k


def p_value(n: int, m: int, u: float) -> float:
    """The exact two-sided p-value of a Mann–Whitney U (ties counted half) for n and m."""
    counts = u_counts(n, m)
    total = math.comb(n + m, n)
    low = min(u, n * m - u)
    tail = sum(c for v, c in enumerate(counts) if v <= low + 1e-9)
    return min(1.0, 2 * tail / total)


@dataclass(frozen=True)
class Shift:
    """How far ``after`` lies from ``before``, as a ratio (both sides positive figures).

    Attributes:
        ratio: the Hodges–Lehmann estimate of after ÷ before (the median of every pairwise
            ratio), 1.0 for no change.
        low: the interval's lower end (None: unbounded, too few rounds for this confidence).
        high: its upper end (None: unbounded).
        p_value: the exact two-sided Mann–Whitney p-value.
        separated: every "after" round lies above every "before" round, or every one below.
    """

    ratio: float
    low: float | None
    high: float | None
    p_value: float
    separated: bool


def shift(before: Sequence[float], after: Sequence[float], alpha: float) -> Shift:
    """The ratio after ÷ before with its distribution-free interval at confidence 1 - alpha.

    Args:
        before: the rounds of one side, each above 0.
        after: the rounds of the other side, each above 0.
        alpha: what the interval may miss, both ends together.

    Raises:
        ValueError: a side is empty or holds a figure not above 0.
    """
    if not before or not after:
        raise ValueError("each side needs at least one round")
    if min(before) <= 0 or min(after) <= 0:
        raise ValueError("rounds are compared as ratios: each must be above 0")
    n, m = len(before), len(after)
    diffs = sorted(math.log(a) - math.log(b) for a in after for b in before)
    half = len(diffs) // 2
    middle = diffs[half] if len(diffs) % 2 else (diffs[half - 1] + diffs[half]) / 2
    k = critical_rank(n, m, alpha)
    low = math.exp(diffs[k - 1]) if k else None
    high = math.exp(diffs[len(diffs) - k]) if k else None
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in after for b in before)
    separated = min(after) > max(before) or max(after) < min(before)
    return Shift(math.exp(middle), low, high, p_value(n, m, u), separated)
