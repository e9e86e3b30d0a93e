"""Other work on the machine that moved between the sides of a before/after measurement.

Interleaved rounds share any drift of the machine's load; a measurement before, then after,
does not. Each side samples how busy the machine is with the benchmark paused
(:attr:`app.domain.bench.BenchReport.machine_busy`); these functions say whether the verdicts
can be trusted, which one still can, and why, in words.
"""

from __future__ import annotations

from typing import Protocol

from app.domain.measurement import Measurement


class Sampled(Protocol):
    """What these functions read of a benchmark report (:class:`app.domain.bench.BenchReport`)."""

    @property
    def machine_busy(self) -> tuple[float, ...]:
        """The machine's busy share, sampled with the benchmark paused."""

    @property
    def measurement(self) -> Measurement | None:
        """How the before/after measurement was made."""


#: A before/after measurement's verdicts are held back when the machine's own busy share,
#: sampled with the benchmark paused at the start and end of each side, moved by more than
#: this share of its CPUs: the rounds of the two sides ran beside different other work, which
#: no comparison of them can tell from the change. (Interleaved rounds share any drift.)
BUSY_DRIFT = 0.25


def _busy_sides(
    before: Sampled | None, after: Sampled | None
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """Both sides' busy samples of a before/after measurement that moved too much, or None."""
    if before is None or after is None:
        return None
    found = after.measurement
    if found is None or found.method != "before-after":
        return None
    if not before.machine_busy or not after.machine_busy:
        return None
    samples = [*before.machine_busy, *after.machine_busy]
    if max(samples) - min(samples) <= BUSY_DRIFT:
        return None
    return before.machine_busy, after.machine_busy


def drift_held(before: Sampled | None, after: Sampled | None) -> str:
    """Why a before/after pair's verdicts cannot be trusted, in words ("" when they can).

    Only a "before-after" measurement is judged, and only where both sides sampled the
    machine (:attr:`BenchReport.machine_busy`).
    """
    sides = _busy_sides(before, after)
    if sides is None:
        return ""
    samples = [*sides[0], *sides[1]]
    return (
        f"other work on the machine changed ({min(samples):.0%} → {max(samples):.0%} of its CPUs)"
    )


def drift_stands(before: Sampled | None, after: Sampled | None) -> str:
    """The one decided answer other work that moved cannot have caused ("" when none).

    When every "after" sample was at least as busy as every "before" one, the new values
    ran beside more other work: a run measured faster was faster despite it ("faster"
    stands; slower or unchanged may be that work's doing). The other way round, "slower"
    stands. Samples that cross each other give no direction: every answer is held.
    """
    sides = _busy_sides(before, after)
    if sides is None:
        return ""
    b, a = sides
    if min(a) >= max(b):
        return "faster"
    if max(a) <= min(b):
        return "slower"
    return ""


def drift_text(before: Sampled | None, after: Sampled | None) -> str:
    """The held-back verdicts explained in a sentence ("" when none are held)."""
    sides = _busy_sides(before, after)
    if sides is None:
        return ""
    b, a = sides
    stands = drift_stands(before, after)
    if stands:
        rose = stands == "faster"
        then = f"up to {max(b):.0%}" if rose else f"at least {min(b):.0%}"
        now = f"at least {min(a):.0%}" if rose else f"up to {max(a):.0%}"
        return (
            f"With the benchmark paused, other work kept {then} of the machine's CPUs busy "
            f"before the change and {now} after it: the new values ran beside "
            f"{'more' if rose else 'less'} other work. A run measured {stands} was {stands} "
            "despite it, so that answer stands; any other may be that work's doing and is "
            "undecided. Measure again when the machine is steadier."
        )
    samples = [*b, *a]
    return (
        f"With the benchmark paused, other work kept {min(samples):.0%} of the machine's CPUs "
        f"busy at one moment and {max(samples):.0%} at another: a measurement before, then "
        "after, cannot tell a change of that work from the change made, so no run is called "
        "faster, slower or unchanged. Measure again when the machine is steadier."
    )
