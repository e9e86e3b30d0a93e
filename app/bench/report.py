"""A benchmark report as text: one row per workload and client count, before/after side by side."""

from __future__ import annotations

from app.domain.bench import (
    WORKLOAD_TITLES,
    BenchReport,
    WorkloadResult,
    WriteRate,
    commits_text,
    measured,
    spread,
)
from app.domain.pace import CPU_WAIT_NOTE, PER_RUN, cpu_wait_note, paced_runs
from app.domain.words import count

MIB = 1024 * 1024


def _opt(value: int | None, scale: float = 1.0, fmt: str = "{:,.0f}") -> str:
    return "—" if value is None else fmt.format(value / scale)


def rate_text(rate: WriteRate) -> str:
    """The current write rate in one sentence."""
    redo = (
        ""
        if rate.redo_bytes_per_s is None
        else f", {rate.redo_bytes_per_s / MIB:,.2f} MiB/s of redo"
    )
    verdict = f"busy: {rate.why}" if rate.busy else "quiet"
    return (
        f"Current writes over {rate.seconds:.0f} s: {rate.commits_per_s:,.1f} write statements "
        f"and commits/s, {rate.rows_per_s:,.0f} rows/s{redo}; "
        f"{count(rate.threads_running, 'other query')} running — {verdict}."
    )


HEADER = (
    f"{'workload':<11} {'clients':>7} {'commits/s':>10} {'rows/s':>10} {'p50 ms':>8} "
    f"{'p95 ms':>8} {'p99 ms':>8} {'redo MiB':>9} {'pages':>7} {'fsyncs':>7} "
    f"{'cpu cli':>7} {'cpu srv':>7}  stopped"
)


def _cores(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _percentiles(r: WorkloadResult) -> str:
    x = r.latency
    if not x.percentiles:  # mysqlslap: its mean, in the p50 column's place
        return f"{'~' + format(x.mean_ms, '.2f'):>8} {'-':>8} {'-':>8}"
    return f"{x.p50_ms:>8.2f} {x.p95_ms:>8.2f} {x.p99_ms:>8.2f}"


def _p99(r: WorkloadResult) -> str:
    if not measured(r):
        return "-"
    return f"{r.latency.p99_ms:.2f}" if r.latency.percentiles else "-"


def _cps(r: WorkloadResult) -> str:
    """commits/s in a narrow column: "too short" where no transaction completed."""
    return commits_text(r) if measured(r) else "too short"


def result_line(r: WorkloadResult) -> str:
    """One result as a row of the table."""
    c = r.counters
    fsyncs = None if c.data_fsyncs is None else c.data_fsyncs + (c.log_fsyncs or 0)
    restart = " (server restarted)" if c.restarted else ""
    bound = " (client-bound)" if r.cpu is not None and r.cpu.client_bound else ""
    client = _cores(r.cpu.client_cores if r.cpu else None)
    server = _cores(r.cpu.server_cores if r.cpu else None)
    if not measured(r):  # no transaction completed: no figure to print, and it says so
        return f"{r.workload:<11} {r.threads:>7}  {commits_text(r)}: no transaction completed"
    return (
        f"{r.workload:<11} {r.threads:>7} {r.commits_per_s:>10,.1f} {r.rows_per_s:>10,.0f} "
        f"{_percentiles(r)} "
        f"{_opt(c.redo_bytes, MIB, '{:,.1f}'):>9} {_opt(c.pages_written):>7} "
        f"{_opt(fsyncs):>7} {client:>7} {server:>7}  {r.stopped}{restart}{bound}"
    )


def client_bound_lines(report: BenchReport) -> list[str]:
    """One line per run whose clients, not the server, were the limit."""
    return [
        f"  {r.workload} × {r.threads}: {r.cpu.why}"
        for r in report.client_bound
        if r.cpu is not None
    ]


def cpu_wait_lines(report: BenchReport) -> list[str]:
    """One line per run whose server waited for a CPU much of each commit."""
    return [f"  {r.workload} × {r.threads}: {text}" for _label, r, text in paced_runs([report])]


def rounds_text(report: BenchReport) -> str:
    """Each run's spread of commits/s over its rounds (the run-to-run noise); "" for one round."""
    runs = [r for r in report.results if len(r.rounds) >= 2]
    if not runs:
        return ""
    listed = ", ".join(f"{r.workload} ×{r.threads} ±{spread(r.rounds) * 100:.0f}%" for r in runs)
    return f"Spread of commits/s over each run's {len(runs[0].rounds)} rounds: {listed}."


def report_text(report: BenchReport) -> str:
    """The whole report as a table with a short header."""
    lines = [
        f"Write benchmark on {report.target or 'the server'} with {report.engine} "
        f"({report.started_at}){' — cancelled' if report.cancelled else ''}",
    ]
    if report.rate_before is not None:
        lines.append(rate_text(report.rate_before))
    if report.snapshot_in_force:
        lines.append(f"Changes of snapshot {report.snapshot_in_force} in force.")
    trx = report.settings.get("innodb_flush_log_at_trx_commit")
    if trx is not None:
        lines.append(
            f"Server: {report.settings.get('version', '?')}, innodb_flush_log_at_trx_commit="
            f"{trx}, buffer pool {int(report.settings.get('innodb_buffer_pool_size', '0')) // MIB}"
            f" MiB, redo log {int(report.settings.get('innodb_log_file_size', '0')) // MIB} MiB"
        )
    lines += ["", HEADER]
    lines += [result_line(r) for r in report.results]
    spreads = rounds_text(report)
    if spreads:
        lines.append(spreads)
    if any(not r.latency.percentiles for r in report.results):
        lines.append(
            "~ mean latency from clients × seconds / commits: mysqlslap times no single "
            "transaction, so there are no percentiles."
        )
    bound = client_bound_lines(report)
    if bound:
        lines += [
            "",
            "Client-bound: in these runs the clients, not the server, set the pace; their "
            "figures (and a gain or loss against another run) belong partly to the client:",
            *bound,
        ]
    waits = cpu_wait_lines(report)
    if waits:
        lines += ["", f"{CPU_WAIT_NOTE} {PER_RUN}", *waits]
    lines += [
        "",
        "  cpu cli / cpu srv: cores the clients (the load generator) and the server used",
    ]
    lines += [""] + [f"  {w}: {t}" for w, t in WORKLOAD_TITLES.items()]
    return "\n".join(lines)


def comparison_text(before: BenchReport, after: BenchReport) -> str:
    """Before and after side by side: commits/s and p99 of each run, with the verdict.

    The verdict (:func:`app.domain.bench.verdict`) compares each run's rounds by rank: faster
    or slower only when the interval of the change excludes none, no change when it lies
    within a small band, else undecided.
    """
    lines = [
        f"{'workload':<11} {'clients':>7} {'before c/s':>11} {'after c/s':>11} "
        f"{'p99 before':>11} {'p99 after':>10}  verdict"
    ]
    for v in after.verdicts(before):
        b, a = before.result(v.workload, v.threads), after.result(v.workload, v.threads)
        assert b is not None and a is not None  # a verdict needs both
        lines.append(
            f"{b.workload:<11} {b.threads:>7} {_cps(b):>11} {_cps(a):>11} "
            f"{_p99(b):>11} {_p99(a):>10}  {v.text()}"
        )
    lines.append(
        "Each run's rounds compared by rank, the runs judged together: the interval is where "
        "the change lies at 99 % for all of them at once."
    )
    if after.measurement is not None:
        lines.append(after.measurement.text())
    lines.append(after.settings_note(before))
    waits = cpu_wait_note([before, after])
    if waits:
        lines.append(waits)
    if before.engine != after.engine:
        lines.append(
            f"Not like for like: before ran with {before.engine}, after with {after.engine}; "
            "part of the change is the clients'."
        )
    return "\n".join(lines)
