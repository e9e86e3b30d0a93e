"""Measure before and after: "before" on the unchanged server, the apply, "after" with it in force.

The use case behind the Apply page's "Measure before and after" (and the benchmark of the
Verify page): both faces run a labelled benchmark through :func:`benchmark`, and a measured
apply through :func:`measured_apply`, so the order (before, apply, after) and the reasons for
not running "after" are written once, here.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.access.doctor import DoctorResult, Secrets
from app.domain.bench import ROUNDS, BenchReport, WriteRate
from app.domain.errors import InnoTuneError
from app.domain.serverfacts import ServerFacts
from app.domain.target import Target
from app.jobs import runner

#: Each side's time budget in a measured apply, in seconds: 6 runs (3 workloads at 1 and 4
#: clients) of 3 rounds each, so about 8 s per round of all six runs; before and after take
#: about a minute together (the clients' start and the scratch tables add a few seconds).
MEASURE_SECONDS = 25.0

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
    bench = Benchmark(
        opener,
        BenchOptions(
            seconds=options.seconds,
            threads=(1, options.threads),
            label=label,
            rounds=options.rounds,
            **caps,
        ),
        cancel=cancel,
        say=say,
        progress=progress,
        route=route,
        cpu_probe=cpu_probe(conn),
        target=target.label,
    )
    return dataclasses.replace(bench.run(), rate_before=rate, snapshot_in_force=snapshot_in_force)


def sample_write_rate(
    conn: DoctorResult,
    target: Target,
    secrets: Secrets,
    seconds: float,
    cancel: threading.Event | None = None,
) -> WriteRate:
    """The server's write rate now, sampled through a session of its own."""
    from app.bench.route import session_factory
    from app.bench.runner import write_rate

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


@dataclass(frozen=True)
class MeasuredApply:
    """What a measured apply did.

    Attributes:
        before: the "before" report (None: the benchmark failed before the apply).
        status: the apply's job at its end (None: not applied, ``not_applied`` says why).
        after: the "after" report (None: not run, ``no_after`` says why).
    """

    before: BenchReport | None
    status: runner.JobStatus | None
    after: BenchReport | None
    not_applied: str = ""
    no_after: str = ""


def why_no_after(status: runner.JobStatus) -> str:
    """Why "after" is not measured once the apply ended so ("" when it is)."""
    if status.state == "applied":
        return ""
    if status.state == "rolled-back":
        return (
            f"The “after” benchmark was not run: the change was rolled back (job "
            f"{status.job_id}), so the server runs as it did for “before”."
        )
    if status.state == "awaiting-confirm":
        return (
            "The “after” benchmark was not run: the change waits to be kept or rolled back. "
            "Keep it, then measure “after” on the Verify page."
        )
    return (
        f"The “after” benchmark was not run: the apply ended {status.state}, so what is in "
        "force is not known."
    )


def measured_apply(
    bench: Callable[[str, str], BenchReport],
    apply: Callable[[], runner.JobStatus],
    *,
    cancel: threading.Event,
    in_force: str = "",
    on_before: Callable[[BenchReport], None] | None = None,
    on_applied: Callable[[runner.JobStatus], None] | None = None,
) -> MeasuredApply:
    """Measure "before", apply, then measure "after" with the change in force.

    Args:
        bench: runs one benchmark: ``bench(label, snapshot_in_force)``.
        apply: takes the snapshot and runs the job, to its end (:func:`apply_preview`).
        cancel: set to stop: during "before" nothing is applied; during "after" the change
            stays and the report says it was cancelled.
        in_force: the snapshot whose changes are in force before this apply ("" none).
        on_before: called with the "before" report as soon as it is there.
        on_applied: called with the job's status once the apply has ended.
    """
    before = bench("before", in_force)
    if on_before is not None:
        on_before(before)
    if before.cancelled or cancel.is_set():
        return MeasuredApply(
            before, None, None, not_applied="Cancelled during “before”: nothing was changed."
        )
    status = apply()
    if on_applied is not None:
        on_applied(status)
    why = why_no_after(status)
    if why:
        return MeasuredApply(before, status, None, no_after=why)
    try:
        after = bench("after", status.snapshot_id or "")
    except InnoTuneError as exc:
        # The change is applied all the same: its status must reach the face, with why
        # there is no "after".
        failed = f"The “after” benchmark failed: {exc.problem} {exc.window_fix}".strip()
        return MeasuredApply(before, status, None, no_after=failed)
    return MeasuredApply(before, status, after)
