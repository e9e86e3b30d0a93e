"""Adaptive rounds: a benchmark adds rounds until every verdict is decided, or its budget is out.

The benchmark's own loop (:meth:`Benchmark.run_sides`) with the measured apply's question
(:func:`app.flows.measured.undecided`), on clients that stand in for a server: each round's
commits/s comes from a list per side, and the clock moves by the time each round runs, so the
budget is a budget of that clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from app.bench import runner
from app.bench.runner import Benchmark, BenchOptions, Side
from app.domain.bench import Counters, Latency, WorkloadResult
from app.flows.measured import undecided


class Clock:
    """time.monotonic for the runner: moves only when a round runs."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Control:
    """The control session: takes every statement; SET GLOBAL x = v switches the side."""

    def __init__(self) -> None:
        self.value = ""
        self.statements: list[str] = []

    def query(self, sql: str) -> list[tuple[str | None, ...]]:
        self.statements.append(sql)
        if sql.startswith("SET GLOBAL"):
            self.value = sql.rsplit("=", 1)[1].strip()
        return []

    def close(self) -> None:
        pass


class Clients:
    """Clients that 'run' a round: its commits/s is the next of the side's figures."""

    engine = "test clients"

    def __init__(
        self, clock: Clock, control: Control, figures: dict[str, Iterator[float]], **more: Any
    ) -> None:
        # figures: per side's value; ``more``: per side and client count ("0x4"), first.
        self.clock, self.control, self.figures = clock, control, {**figures, **more}
        self.sides: list[str] = []
        self.runs: list[tuple[str, int]] = []

    def run(self, bench: Benchmark, control: object, workload: str, threads: int) -> WorkloadResult:
        side = self.control.value
        self.sides.append(side)
        self.runs.append((side, threads))
        seconds = bench.run_seconds
        self.clock.now += seconds + 0.1  # the round, and its table's set-up
        cps = next(self.figures.get(f"x{side}x{threads}") or self.figures[side])
        return WorkloadResult(
            workload=workload,
            threads=threads,
            seconds=seconds,
            commits=round(cps * seconds),
            rows=round(cps * seconds),
            commits_per_s=cps,
            rows_per_s=cps,
            latency=Latency(),
            counters=Counters(),
        )


def measure(
    monkeypatch: pytest.MonkeyPatch, old: list[float], new: list[float], budget: float
) -> tuple[Benchmark, Clients, list[int]]:
    clock, control = Clock(), Control()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    clients = Clients(clock, control, {"1": itertools.cycle(old), "0": itertools.cycle(new)})
    options = BenchOptions(seconds=3.0, threads=(1,), workloads=("autocommit",), rounds=3)
    bench = Benchmark(lambda: control, options, route=clients)  # type: ignore[arg-type]
    looks: list[int] = []

    def more(found: list[object]) -> bool:
        before, after = found  # type: ignore[misc]
        looks.append(len(after.results[0].rounds))  # type: ignore[attr-defined]
        return undecided(before, after)  # type: ignore[arg-type]

    def setter(value: str) -> Side:
        return Side(
            "before" if value == "1" else "after", lambda s: s.query(f"SET GLOBAL x = {value}")
        )

    reports = bench.run_sides((setter("1"), setter("0")), more=more, budget=budget)
    assert [r.label for r in reports] == ["before", "after"]
    return bench, clients, looks


def test_rounds_are_added_until_the_verdict_is_decided(monkeypatch: pytest.MonkeyPatch) -> None:
    # Twice as fast, every round: 3 a side cannot tell (1 in 20), 5 a side decide.
    bench, clients, looks = measure(monkeypatch, [100.0, 104.0, 98.0], [200.0, 207.0], 600.0)
    assert bench.stopped == "decided" and bench.rounds_done == 5
    assert looks == [3, 4, 5]  # looked after every round from the third on
    # Interleaved, ending on the new values: old, new, old, new, …
    assert clients.sides == ["1", "0"] * 5
    assert bench.seconds_used < 600.0


def test_rounds_stop_at_the_budget_when_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same wide spread on both sides: never decided; the budget ends it.
    spread = [100.0, 300.0, 150.0, 250.0]
    bench, clients, looks = measure(monkeypatch, spread, spread, 12.0)
    assert bench.stopped == "budget"
    # 3 s a side for 3 rounds: about 2 s per round of both sides, so 12 s hold 5 or 6.
    assert 5 <= bench.rounds_done <= 6 and looks[-1] == bench.rounds_done
    assert bench.seconds_used <= 12.0
    assert clients.sides[-1] == "0" and len(clients.sides) == 2 * bench.rounds_done


def test_no_rounds_are_added_without_the_question(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, control = Clock(), Control()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    clients = Clients(clock, control, {"": itertools.cycle([100.0, 300.0])})
    options = BenchOptions(seconds=3.0, threads=(1,), workloads=("autocommit",), rounds=3)
    report = Benchmark(lambda: control, options, route=clients).run()  # type: ignore[arg-type]
    assert len(report.results[0].rounds) == 3 and len(clients.sides) == 3


def test_a_decided_run_gets_no_more_rounds_while_another_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock, control = Clock(), Control()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    spread = [100.0, 300.0, 150.0, 250.0]
    figures = {"1": itertools.cycle([100.0, 104.0, 98.0]), "0": itertools.cycle([200.0, 207.0])}
    # With 4 clients both sides spread alike: never decided.
    wide = {"x1x4": itertools.cycle(spread), "x0x4": itertools.cycle(spread)}
    clients = Clients(clock, control, figures, **wide)
    options = BenchOptions(seconds=6.0, threads=(1, 4), workloads=("autocommit",), rounds=3)
    bench = Benchmark(lambda: control, options, route=clients)  # type: ignore[arg-type]

    def setter(value: str) -> Side:
        return Side(
            "before" if value == "1" else "after", lambda s: s.query(f"SET GLOBAL x = {value}")
        )

    before, after = bench.run_sides(
        (setter("1"), setter("0")), more=lambda found: undecided(*found), budget=40.0
    )
    one, four = (len(after.result("autocommit", t).rounds) for t in (1, 4))  # type: ignore[union-attr]
    assert bench.stopped == "budget" and 4 < one < four, (one, four)
    assert [v.verdict for v in after.verdicts(before)] == ["faster", "undecided"]
    # Each run's rounds alternate old and new: as many of each.
    assert clients.runs.count(("1", 1)) == clients.runs.count(("0", 1)) == one
    assert clients.runs.count(("1", 4)) == clients.runs.count(("0", 4)) == four
