"""A benchmark step's set-up: each workload's table made once, emptied after every round.

The benchmark's own loop (:meth:`Benchmark.run_sides`) on a control session that records its
statements and clients that mark where each round ran: every round must start on the same
table state (empty, or the small transaction's 10,000 starting rows), on both sides, while the
table and the starting rows are made only once.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from app.bench import runner
from app.bench.runner import Benchmark, BenchOptions, Side
from app.bench.steps import PHASES, StepTimes, side_order
from app.bench.workloads import PREFILL_ROWS, data_warm_sql
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


class SpreadingClients(MarkedClients):
    """Clients that can spread their writes over a data set."""

    spreads_writes = True


def test_slow_sides_take_whole_rounds_in_turn_and_the_larger_pool_reads_the_data_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock, control = Clock(), Control()
    monkeypatch.setattr(runner.time, "monotonic", clock)
    clients = SpreadingClients(
        clock, control, {"1": itertools.cycle([100.0]), "0": itertools.cycle([200.0])}
    )
    options = BenchOptions(
        seconds=6.0,
        threads=(1,),
        workloads=("autocommit", "small_tx"),
        rounds=3,
        data_bytes=64 * 2**20,
    )
    bench = Benchmark(lambda: control, options, route=clients)  # type: ignore[arg-type]
    old = Side("before", lambda s: s.query("SET GLOBAL x = 1"), slow=True, warm=True)
    new = Side("after", lambda s: s.query("SET GLOBAL x = 0"), slow=True, warm=True)
    before, after = bench.run_sides((old, new))
    # Whole rounds, the order turning every round (A B, B A, A B): one switch a round.
    assert clients.sides == ["1", "1", "0", "0", "0", "0", "1", "1", "1", "1", "0", "0"]
    switches = [i for i, s in enumerate(control.statements) if s.startswith("SET GLOBAL")]
    assert [control.statements[i][-1] for i in switches] == ["1", "0", "1", "0"]
    # The data set is written once, before the first round, and read in after every switch,
    # before the side's first round.
    fills = [i for i, s in enumerate(control.statements) if s.startswith("INSERT INTO bench_data")]
    assert fills and max(fills) < switches[0]
    for i in switches:
        assert control.statements[i + 1 : i + 3] == data_warm_sql()
    assert sum(1 for s in control.statements if s in data_warm_sql()) == 2 * len(switches)
    # A side that does not ask for it is not warmed.
    control.statements.clear()
    bench = Benchmark(lambda: control, options, route=clients)  # type: ignore[arg-type]
    bench.run_sides((dataclasses.replace(old, warm=False), dataclasses.replace(new, warm=False)))
    assert not any(s in data_warm_sql() for s in control.statements)
    assert {len(r.rounds) for r in (*before.results, *after.results)} == {3}
    assert before.data_bytes == after.data_bytes > 0


def test_sides_that_switch_fast_take_each_step_in_turn() -> None:
    fast = (Side("before"), Side("after"))
    runs = [("autocommit", 1), ("bulk", 1)]
    assert [(w, s.label) for _, w, _, s in side_order(2, runs, fast)] == [
        ("autocommit", "before"),
        ("autocommit", "after"),
        ("bulk", "before"),
        ("bulk", "after"),
    ]
