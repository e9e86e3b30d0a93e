"""The benchmarks of "Measure before and after": their options, the server's quietness, texts.

The use case behind the Verify page's benchmark and the bench command: both faces run a
labelled benchmark through :func:`benchmark`; a measured apply (before, the apply, after, or
interleaved) is :mod:`app.flows.measured`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.access.doctor import DoctorResult, Secrets
from app.domain.bench import ROUNDS, BenchReport, WriteRate
from app.domain.serverfacts import ServerFacts
from app.domain.target import Target

if TYPE_CHECKING:
    from app.bench.runner import Benchmark

#: The "Benchmark time": each side's first 3 rounds of its 6 runs (3 workloads at 1 and 4
#: clients), in seconds; a measured apply adds rounds up to :data:`BUDGET_FACTOR` times it.
MEASURE_SECONDS = 25.0

#: The time budget of a measured apply, both sides and every added round, as a multiple of one
#: side's first rounds (:data:`MEASURE_SECONDS`): 25 s gives 250 s. Six runs judged together
#: need 7 rounds a side, every "after" one beating every "before" one, to decide; a round of
#: every run on both sides takes 12 steps, and on a loaded 2-core machine each step spends about
#: 0.5 s beyond its run (tables kept and emptied, the load generator kept running: see
#: app.bench.steps; 1.2 s before), so 250 s hold up to the 20 rounds a run may take.
BUDGET_FACTOR = 10.0

#: The larger client count of each workload (1 always runs).
MEASURE_THREADS = 4

#: Above any of these figures of the inspection's sample, the server counts as busy and the
#: Apply page asks before measuring (a benchmark would disturb others' work, and their work
#: would blur its figures). Handler_commit counts every commit, reads included.
BUSY_COMMITS_PER_S = 100.0
BUSY_WRITES_PER_S = 50.0
BUSY_THREADS_RUNNING = 2


@dataclass(frozen=True)
class MeasureOptions:
    """How each side of a measurement runs (the caps are the benchmark's own defaults)."""

    seconds: float = MEASURE_SECONDS
    threads: int = MEASURE_THREADS
    rounds: int = ROUNDS
    use_sysbench: bool = True
    workloads: tuple[str, ...] = ()  # empty: every workload
    max_rows: int | None = None  # None: the benchmark's own cap
    engine: str = "auto"  # where the clients run (innotune bench --engine)
    budget: float | None = None  # a measured apply's whole time; None: BUDGET_FACTOR × seconds
    data_bytes: int = 0  # a data set the one-row writes spread over (reach.data_set_bytes)

    @property
    def budget_seconds(self) -> float:
        """The most a measured apply's benchmarks may take, both sides, added rounds included."""
        return self.budget if self.budget is not None else self.seconds * BUDGET_FACTOR

    @property
    def round_seconds(self) -> float:
        """One round of every run, on one side."""
        return self.seconds / max(1, self.rounds)


def options_for_budget(budget: float) -> MeasureOptions:
    """A measured apply's options for a time budget (both sides, every added round).

    Each side's first rounds take a :data:`BUDGET_FACTOR`-th of it (at most
    :data:`MEASURE_SECONDS`); the rest is for added rounds.
    """
    from app.bench.runner import MIN_ROUND_SECONDS

    # Each run's first rounds no shorter than the benchmark takes them (3 a run, 6 runs).
    least = ROUNDS * 6 * MIN_ROUND_SECONDS
    seconds = max(least, min(MEASURE_SECONDS, budget / BUDGET_FACTOR))
    return MeasureOptions(seconds=seconds, budget=budget)


@dataclass(frozen=True)
class Quietness:
    """Whether the server is quiet enough to measure without asking, and which figure said so.

    Attributes:
        quiet: every figure below its threshold.
        why: the figures and thresholds, in words: those above their limits when busy.
    """

    quiet: bool
    why: str


def quietness(server: ServerFacts | None) -> Quietness:
    """Quiet or busy, from the write rates and Threads_running the inspection sampled."""
    rates = server.rates if server is not None else None
    if server is None or rates is None:
        return Quietness(False, "the inspection took no sample of the server's activity")
    running_text = server.status_value("Threads_running") or ""
    # The inspection's own query is one of them.
    others = max(0, int(running_text) - 1) if running_text.isdigit() else 0
    running = "other query running" if others == 1 else "other queries running"
    figures = [
        ("commits/s", rates.transactions_per_s, BUSY_COMMITS_PER_S, "{:,.0f}"),
        ("write statements/s", rates.writes_per_s, BUSY_WRITES_PER_S, "{:,.0f}"),
        (running, float(others), float(BUSY_THREADS_RUNNING), "{:,.0f}"),
    ]
    above = [
        f"{fmt.format(value)} {name} (above {fmt.format(limit)})"
        for name, value, limit, fmt in figures
        if value > limit
    ]
    if above:
        return Quietness(False, "busy: " + ", ".join(above))
    seen = ", ".join(
        f"{fmt.format(value)} {name} (at most {fmt.format(limit)})"
        for name, value, limit, fmt in figures
    )
    return Quietness(True, f"quiet over the inspection's {rates.seconds:.0f} s sample: {seen}")


def benchmark(
    conn: DoctorResult,
    target: Target,
    secrets: Secrets,
    label: str,
    options: MeasureOptions,
    *,
    cancel: threading.Event,
    say: Callable[[str], None],
    progress: Callable[[float], None],
    rate: WriteRate | None = None,
    snapshot_in_force: str = "",
) -> BenchReport:
    """One labelled benchmark, the clients on the target when they can be.

    Sysbench (when allowed and there), else InnoTune's load generator on the target's
    python3, else its mysqlslap; else InnoTune's own client here. The report records the
    settings it ran under (the benchmark reads them) and ``snapshot_in_force``.
    """
    bench = bench_for(
        conn, target, secrets, label, options, cancel=cancel, say=say, progress=progress
    )
    return dataclasses.replace(bench.run(), rate_before=rate, snapshot_in_force=snapshot_in_force)


def bench_for(
    conn: DoctorResult,
    target: Target,
    secrets: Secrets,
    label: str,
    options: MeasureOptions,
    *,
    cancel: threading.Event,
    say: Callable[[str], None],
    progress: Callable[[float], None],
) -> Benchmark:
    """A labelled benchmark of ``options``, its clients on the target when they can be."""
    from app.bench.route import client_route, cpu_probe, session_factory
    from app.bench.runner import Benchmark, BenchOptions

    opener = session_factory(conn, target, secrets)
    session = opener()
    try:
        route = client_route(
            conn, target, secrets, session, options.engine, allow_sysbench=options.use_sysbench
        )
    finally:
        session.close()
    caps: dict[str, Any] = {}
    if options.workloads:
        caps["workloads"] = options.workloads
    if options.max_rows is not None:
        caps["max_rows"] = options.max_rows
    return Benchmark(
        opener,
        BenchOptions(
            seconds=options.seconds,
            threads=(1, options.threads),
            label=label,
            rounds=options.rounds,
            data_bytes=options.data_bytes,
            **caps,
        ),
        cancel=cancel,
        say=say,
        progress=progress,
        route=route,
        cpu_probe=cpu_probe(conn),
        target=target.label,
    )


def sample_write_rate(
    conn: DoctorResult,
    target: Target,
    secrets: Secrets,
    seconds: float,
    cancel: threading.Event | None = None,
) -> WriteRate:
    """The server's write rate now, sampled through a session of its own."""
    from app.bench.rate import write_rate
    from app.bench.route import session_factory

    session = session_factory(conn, target, secrets)()
    try:
        return write_rate(session, seconds, cancel)
    finally:
        session.close()


def rate_text(rate: WriteRate) -> str:
    """The sampled write rate in words (the same on both faces)."""
    from app.bench.report import rate_text as words

    return words(rate)


def report_text(report: BenchReport) -> str:
    """A benchmark report as text."""
    from app.bench.report import report_text as words

    return words(report)


def comparison_text(before: BenchReport, after: BenchReport) -> str:
    """Before against after, each run with its verdict, as text."""
    from app.bench.report import comparison_text as words

    return words(before, after)
