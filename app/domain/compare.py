"""The one judgement of a before/after change of a figure measured in rounds.

Both the benchmark's verdict (:func:`app.domain.bench.verdict`) and the watch of a server's
own workload judge their figures here, so that every face says "better", "no change" or
"undecided" by the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The family-wise error a verdict allows at each look, shared by the runs compared at once
#: (Bonferroni): looking again after every added round, up to 20 rounds a side, keeps the
#: chance that any of six unchanged runs is called faster or slower near 3 % (simulated in
#: tests/unit/test_bench_verdict.py). With six runs it takes 7 rounds a side, every one of
#: them beaten, to decide; with one run, 4.
FAMILY_ALPHA = 0.01

#: "No change" is said only when the whole interval of the change lies within ± this many per
#: cent: a smaller change is not one a person tunes for.
NO_CHANGE_PERCENT = 10.0

#: The fewest rounds a side may have for any verdict but "unmeasured".
MIN_ROUNDS = 3

#: The words of :func:`compare_rounds`, for any figure: better or worse in its own direction.
WORDS = ("better", "worse", "no_change", "undecided")


@dataclass(frozen=True)
class Comparison:
    """Two sides' rounds of one figure, compared as two samples (:func:`compare_rounds`).

    Attributes:
        word: ``better``, ``worse``, ``no_change`` or ``undecided``.
        change_percent: the estimated change of the figure, after against before (the
            Hodges–Lehmann estimate: the median of every pairwise ratio), in per cent.
        low_percent: the lower end of its interval (None: unbounded, too few rounds).
        high_percent: the upper end (None: unbounded).
        confidence: the interval's confidence, the comparisons counted (0.998 for 0.2 %).
        before_rounds: how many rounds the "before" side had.
        after_rounds: how many the "after" side had.
        separated: every round of one side beats every round of the other.
        p_value: the exact two-sided rank test's p-value, before the correction for the
            number of comparisons.
    """

    word: str
    change_percent: float
    low_percent: float | None
    high_percent: float | None
    confidence: float
    before_rounds: int
    after_rounds: int
    separated: bool
    p_value: float

    def interval_text(self) -> str:
        """The interval in words: "+31 % to +66 %", or "too wide to bound yet"."""
        if self.low_percent is None or self.high_percent is None:
            return "not bounded yet"
        return f"{pct(self.low_percent)} to {pct(self.high_percent)}"


def pct(value: float) -> str:
    """A change in per cent with its sign, rounded: "+48%".

    Below 1 % it keeps the first digit that is not 0 ("+0.3%", "-0.04%"): a *faster* whose
    interval starts just above 0 read "+0% to +22%", as if it included no change.
    """
    if value == 0 or abs(value) >= 0.995:
        return f"{value:+.0f}%"
    digit = f"{value:+.1g}"
    if "e" in digit:  # below 0.0001 %: fixed notation, as far as 9 decimals go
        digit = f"{value:+.9f}".rstrip("0").rstrip(".")
    return f"{digit}%"


def compare_rounds(
    before: Sequence[float],
    after: Sequence[float],
    *,
    higher_is_better: bool = True,
    comparisons: int = 1,
) -> Comparison:
    """The one judgement of a before/after change, for any figure measured in rounds.

    The rounds are compared as two samples, by rank: the change is the median of every
    after ÷ before ratio, and its interval is distribution-free (Hodges–Lehmann, from the
    exact Mann–Whitney distribution) at :data:`FAMILY_ALPHA` shared by ``comparisons``
    figures judged at once. One wild round moves the interval by one step, not to "noise".

    - better / worse: the interval excludes no change, in the figure's good / bad direction;
    - no_change: the interval lies within ±:data:`NO_CHANGE_PERCENT`, and the rounds are not
      separated (when every round of one side beats every round of the other, "no change" is
      never said: more rounds decide);
    - undecided: neither; the rounds spread too widely to tell at this many rounds.

    Args:
        before: each round's figure before the change (each above 0).
        after: each round's figure after it.
        higher_is_better: True for a throughput, False for a cost (fsyncs per commit).
        comparisons: how many figures are judged together (the runs of one benchmark), so
            that one of many is not called better or worse by chance.

    Raises:
        ValueError: a side has fewer than :data:`MIN_ROUNDS` rounds, or a figure not above 0.
    """
    from app.domain.ranks import shift

    if len(before) < MIN_ROUNDS or len(after) < MIN_ROUNDS:
        raise ValueError(f"each side needs at least {MIN_ROUNDS} rounds to be compared")
    alpha = FAMILY_ALPHA / max(1, comparisons)
    found = shift(before, after, alpha)
    low = None if found.low is None else (found.low - 1) * 100
    high = None if found.high is None else (found.high - 1) * 100
    if low is not None and low > 0:
        word = "better" if higher_is_better else "worse"
    elif high is not None and high < 0:
        word = "worse" if higher_is_better else "better"
    elif (
        low is not None
        and high is not None
        and -NO_CHANGE_PERCENT < low
        and high < NO_CHANGE_PERCENT
        and not found.separated
    ):
        word = "no_change"
    else:
        word = "undecided"
    return Comparison(
        word=word,
        change_percent=(found.ratio - 1) * 100,
        low_percent=low,
        high_percent=high,
        confidence=1 - alpha,
        before_rounds=len(before),
        after_rounds=len(after),
        separated=found.separated,
        p_value=found.p_value,
    )
