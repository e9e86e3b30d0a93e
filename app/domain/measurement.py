"""How a before/after measurement was made: its method, its time budget and the rounds it took.

A measured apply adds rounds until every run's verdict is decided or the time budget runs
out (:mod:`app.flows.measure`); the report says which method it used and what it spent, on
every face alike (:meth:`Measurement.text`).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The methods: "interleaved" (every change applies live: old and new values set in turn,
#: round by round) or "before-after" (before, then the change, then after).
METHODS = ("interleaved", "before-after")

#: Why a measurement stopped adding rounds.
STOPS = {
    "decided": "every verdict decided",
    "budget": "the time budget ran out before every verdict was decided",
    "rounds": "the most rounds a run may take were taken",
    "cancelled": "cancelled",
}


@dataclass(frozen=True)
class Measurement:
    """How one before/after measurement was made.

    Attributes:
        method: one of :data:`METHODS`.
        budget_seconds: the most the whole measurement might take (both sides, every added
            round), as chosen.
        seconds_used: what it took (both sides).
        before_rounds: the most rounds a "before" run took.
        after_rounds: the most rounds an "after" run took (interleaved: as many as before).
        fewest_rounds: the fewest rounds an "after" run took: a run whose verdict was
            decided gets no more rounds (0: as many as ``after_rounds``).
        stopped: a key of :data:`STOPS`.
        restart: a restart sat between the sides (before-after only): the "before" rounds
            were fixed before it, so only "after" rounds could be added.
        why: why the change was not measured interleaved ("" when it was).
        cannot_show: sentences on changes the benchmark's figures cannot show
            (:func:`app.bench.reach.cannot_show`).
        data_set: the data set the one-row writes went across, in a sentence ("" none:
            :func:`app.bench.reach.data_set_text`).
    """

    method: str
    budget_seconds: float
    seconds_used: float
    before_rounds: int
    after_rounds: int
    stopped: str
    restart: bool = False
    why: str = ""
    fewest_rounds: int = 0
    cannot_show: tuple[str, ...] = ()
    data_set: str = ""

    def _after(self) -> str:
        fewest = self.fewest_rounds or self.after_rounds
        if fewest == self.after_rounds:
            return f"{self.after_rounds}"
        return f"{fewest} to {self.after_rounds}"

    def method_text(self) -> str:
        """The method in a few words: "interleaved, 7 rounds each"."""
        if self.method == "interleaved":
            return f"interleaved, {self._after()} rounds each"
        between = "the restart" if self.restart else "the change"
        return (
            f"before, then after {between}: {self.before_rounds} rounds before, "
            f"{self._after()} after"
        )

    def text(self) -> str:
        """The method, the budget and the rounds used, in two sentences."""
        if self.method == "interleaved":
            how = (
                f"Method: {self.method_text()} (the old and the new values set in turn, round "
                "by round, ending on the new values; a run whose verdict was decided got no "
                "more rounds)."
            )
        else:
            fixed = (
                " The “before” rounds were measured before the restart, so only “after” rounds "
                "could be added."
                if self.restart
                else ""
            )
            why = f" Not interleaved: {self.why}." if self.why else ""
            how = f"Method: {self.method_text()}.{why}{fixed}"
        spent = (
            f"Time budget {self.budget_seconds:.0f} s, {self.seconds_used:.0f} s used: "
            f"{STOPS.get(self.stopped, self.stopped)}."
        )
        return " ".join(t for t in (how, spent, self.data_set, *self.cannot_show) if t)

    def as_dict(self) -> dict[str, object]:
        """The JSON form, beside the verdicts."""
        return {
            "method": self.method,
            "method_text": self.method_text(),
            "budget_seconds": round(self.budget_seconds, 1),
            "seconds_used": round(self.seconds_used, 1),
            "before_rounds": self.before_rounds,
            "after_rounds": self.after_rounds,
            "fewest_rounds": self.fewest_rounds or self.after_rounds,
            "stopped": self.stopped,
            "restart": self.restart,
            "why_not_interleaved": self.why,
            "cannot_show": list(self.cannot_show),
            "data_set": self.data_set,
        }
