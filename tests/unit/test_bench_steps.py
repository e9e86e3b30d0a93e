"""A benchmark step's set-up: each workload's table made once, emptied after every round.

The benchmark's own loop (:meth:`Benchmark.run_sides`) on a control session that records its
statements and clients that mark where each round ran: every round must start on the same
table state (empty, or the small transaction's 10,000 starting rows), on both sides, while the
table and the starting rows are made only once.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from app.bench import runner
from app.bench.runner import Benchmark, BenchOptions, Side
from app.bench.steps import PHASES, StepTimes
from app.bench.workloads import PREFILL_ROWS
from app.domain.bench import WorkloadResult
from tests.unit.test_bench_adaptive import Clients, Clock, Control


class MarkedClients(Clients):
    """Clients that write a mark into the control session's statements where each round ran."""

    def run(self, bench: Benchmark, control: Any, workload: str, threads: int) -> WorkloadResult:
        self.control.statements.append(f"-- round of {workload} on {self.control.value}")
        return super().run(bench, control, workload, threads)


def run_both_sides(monkeypatch: pytest.MonkeyPatch) -> tuple[Benchmark, list[str]]:
    clock, control = Clock(), Control()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    clients = MarkedClients(
        clock, control, {"1": itertools.cycle([100.0]), "0": itertools.cycle([200.0])}
    )
    options = BenchOptions(
        seconds=6.0, threads=(1,), workloads=("autocommit", "small_tx"), rounds=3
    )
    bench = Benchmark(lambda: control, options, route=clients)  # type: ignore[arg-type]

    def side(value: str) -> Side:
        return Side(
            "before" if value == "1" else "after", lambda s: s.query(f"SET GLOBAL x = {value}")
        )

    bench.run_sides((side("1"), side("0")))
    return bench, control.statements


def test_tables_are_made_once_and_every_round_starts_on_the_same_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench, statements = run_both_sides(monkeypatch)
    rounds = [s for s in statements if s.startswith("-- round")]
    assert len(rounds) == 2 * 3 * 2  # two workloads, three rounds, two sides

    def count(start: str) -> int:
        return sum(1 for s in statements if s.startswith(start))

    # Made once: each table, the seed table, and its 10,000 starting rows (1,000 a statement).
    assert count("CREATE TABLE bench_autocommit ") == 1
    assert count("CREATE TABLE bench_small_tx ") == 1
    assert count("CREATE TABLE bench_small_tx_seed ") == 1
    assert count("INSERT INTO bench_small_tx_seed ") == PREFILL_ROWS // 1000
    # Every round: the table emptied after it; the small transaction's rows copied before it.
    assert count(f"TRUNCATE TABLE `{bench.schema}`.bench_") == len(rounds)
    assert count(f"INSERT INTO `{bench.schema}`.bench_small_tx SELECT") == len(rounds) // 2
    # Walk the statements: before each round its table is empty (made or emptied since its
    # last round) and, for small_tx, holds the copied starting rows; nothing else wrote to it.
    state: dict[str, str] = {}
    for sql in statements:
        for workload in ("autocommit", "small_tx"):
            table = f"`{bench.schema}`.bench_{workload}"
            if (
                sql.startswith(f"CREATE TABLE bench_{workload} ")
                or sql == f"TRUNCATE TABLE {table}"
            ):
                state[workload] = "empty"
            elif sql.startswith(f"INSERT INTO {table} SELECT"):
                assert state[workload] == "empty"
                state[workload] = "prefilled"
            elif sql.startswith(f"-- round of {workload} "):
                want = "prefilled" if workload == "small_tx" else "empty"
                assert state.get(workload) == want, sql
                state[workload] = "written"
    assert statements[-1] == f"DROP DATABASE IF EXISTS `{bench.schema}`"


def test_where_the_steps_time_went_adds_up(monkeypatch: pytest.MonkeyPatch) -> None:
    bench, _ = run_both_sides(monkeypatch)
    times = bench.times
    assert times.steps == 12
    # The stand-in clients take 0.1 s beyond their timed part, all of it outside the phases
    # the runner times itself: it shows as "other".
    per = times.per_step()
    assert set(per) == set(PHASES)
    assert per["timed"] == pytest.approx(bench.run_seconds, rel=0.5)
    assert per["other"] == pytest.approx(0.1, abs=0.01)
    assert times.overhead_per_step == pytest.approx(0.1, abs=0.01)


def test_step_times_count_each_phase_within_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    times = StepTimes()
    times.begin()
    with times.within("table"):
        clock.now += 0.4
    with times.within("start"):
        clock.now += 1.5
    clock.now += 1.0 + 0.2  # the timed part, then something unnamed
    times.end(1.0)
    assert times.steps == 1
    assert times.seconds["table"] == pytest.approx(0.4)
    assert times.seconds["start"] == pytest.approx(1.5)
    assert times.seconds["timed"] == pytest.approx(1.0)
    assert times.seconds["other"] == pytest.approx(0.2)
    assert times.overhead_per_step == pytest.approx(2.1)
