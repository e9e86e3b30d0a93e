"""A benchmark's steps: their cost, their scratch tables, and the order the sides take them in.

The order of a comparison's sides is :func:`side_order`'s.

A step (one round of one run) sets up its table, starts its clients, runs for its time and
reads the counters. On a loaded 2-core host the set-up alone took 2-3 s a step against a
timed part of 0.5-1.4 s, so a measurement's budget went mostly to set-up. Two things keep it
down without changing what is timed:

- each workload's table is created once per benchmark and emptied (``TRUNCATE``) after each
  round, so every round still starts on an empty table, freshly numbered; the small
  transaction's 10,000 starting rows are written once into a seed table and copied into the
  emptied table by one ``INSERT … SELECT`` instead of being sent again (about 2 MiB of SQL);
- the clients' program stays running between the rounds of a benchmark where it can
  (the load generator), instead of being sent and started again for every round.

:class:`StepTimes` adds up where the steps' time went, by phase, so that the overhead can be
shown (``tests/benchmarks/bench_measured.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from app.bench.workloads import TABLE_SQL, prefill_sql
from app.mysql.session import Session

#: The phases a step's time is split into (their order in reports).
PHASES = ("table", "start", "timed", "reads", "switch", "other")


@dataclass
class StepTimes:
    """Seconds spent per phase over the steps of a benchmark (see :data:`PHASES`).

    ``table``: the table made ready and emptied; ``start``: the clients started and logged in;
    ``timed``: the timed part as the run reports it; ``reads``: counter and CPU readings around
    the run; ``switch``: a side's values set; ``other``: the rest of each step's wall time.
    """

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    steps: int = 0
    _parts: float = 0.0
    _began: float = 0.0

    def begin(self) -> None:
        """A step starts."""
        self._began = time.monotonic()
        self._parts = 0.0

    @contextmanager
    def within(self, name: str) -> Iterator[None]:
        """Count the block's time to phase ``name``, as a part of the current step."""
        started = time.monotonic()
        try:
            yield
        finally:
            took = time.monotonic() - started
            self.seconds[name] = self.seconds.get(name, 0.0) + took
            self._parts += took

    def end(self, timed: float) -> None:
        """The step is done; ``timed``: its timed part (as its run reports it)."""
        self.steps += 1
        wall = time.monotonic() - self._began
        self.seconds["timed"] += timed
        self.seconds["other"] += max(0.0, wall - self._parts - timed)

    def per_step(self) -> dict[str, float]:
        """Mean seconds per step, by phase."""
        n = max(1, self.steps)
        return {k: self.seconds.get(k, 0.0) / n for k in PHASES}

    @property
    def overhead_per_step(self) -> float:
        """Mean seconds a step spends beyond its timed part."""
        n = max(1, self.steps)
        return sum(v for k, v in self.seconds.items() if k != "timed") / n


class ScratchTables:
    """Each workload's table in the scratch schema: made once, emptied after every round."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.made: set[str] = set()
        self.seeded: set[str] = set()

    def ready(self, control: Session, workload: str) -> None:
        """The workload's table, empty (and prefilled where the workload wants rows)."""
        table = f"`{self.schema}`.bench_{workload}"
        if workload not in self.made:
            control.query(f"USE `{self.schema}`")
            control.query(f"DROP TABLE IF EXISTS {table}")
            control.query(TABLE_SQL.format(workload=workload))
            seed = f"bench_{workload}_seed"
            prefill = prefill_sql(workload, seed)
            if prefill:
                # The starting rows, once, in a seed table each round copies from.
                control.query(f"DROP TABLE IF EXISTS `{self.schema}`.{seed}")
                control.query(TABLE_SQL.format(workload=f"{workload}_seed"))
                for sql in prefill:
                    control.query(sql)
                self.seeded.add(workload)
            self.made.add(workload)
        if workload in self.seeded:
            seed = f"`{self.schema}`.bench_{workload}_seed"
            control.query(f"INSERT INTO {table} SELECT * FROM {seed}")  # noqa: S608

    def empty(self, control: Session, workload: str) -> None:
        """Empty the table after a round (a fresh, empty table as CREATE TABLE makes)."""
        control.query(f"TRUNCATE TABLE `{self.schema}`.bench_{workload}")


@dataclass(frozen=True)
class Side:
    """One side of what a benchmark measures, with what puts the server in its state.

    Attributes:
        label: the report's label ("before", "after").
        enter: sets this side's values through the benchmark's control session, before each
            step it takes (None: the server stays as it is).
        slow: entering takes the server seconds of work (a resize): the sides take whole
            rounds in turn instead of single steps (:func:`app.bench.steps.side_order`).
        warm: after entering, the data set is read once, so that the side's buffer pool is
            as full of it as a running server's: a pool just grown holds only what the
            smaller one did, and one just shrunk keeps free pages a while.
    """

    label: str
    enter: Callable[[Session], None] | None = None
    slow: bool = False
    warm: bool = False


def side_order(
    n: int, runs: Sequence[tuple[str, int]], sides: Sequence[Side]
) -> list[tuple[int, str, int, Side]]:
    """Round ``n``'s steps (round, workload, threads, side) in the order they run.

    Each run's step is taken by every side in turn (A B A B …), so that a drift of the host's
    load hits both sides alike. When a side's switch is slow (a resize of the buffer pool or
    of the redo log), switching before every step would spend the budget on switches: each
    side takes the whole round instead, and the order turns every round (A B, then B A), so
    that neither side always runs first after a switch and a round costs one switch.
    """
    if not any(side.slow for side in sides):
        return [(n, w, t, side) for w, t in runs for side in sides]
    turn = list(sides) if n % 2 else list(reversed(sides))
    return [(n, w, t, side) for side in turn for w, t in runs]
