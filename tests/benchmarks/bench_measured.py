"""Proof on a loaded machine: the measured apply's interleaved rounds decide under load.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_measured [--change-trials 5] [--trials 10]

It boots the trixie test host (MariaDB 11.8 under systemd, tests/hosts/debian_hosts.py), starts
``--busy`` busy loops on this machine (two by default: both CPUs of a 2-core machine kept
loaded; killed at the end) and measures the way a measured apply of a live change does
(:meth:`app.flows.measured.Measuring.interleaved`, the wizard's Benchmark time and budget:
old and new values in turn, round by round, rounds added until decided or the budget is out),
the clients on the target as the wizard picks them (InnoTune's load generator there):

(a) ``--change-trials`` trials of innodb_flush_log_at_trx_commit 1 → 0, set live round by
    round (put back to 1 after each): autocommit ×1 must be called *faster* in at least 4 of 5;
(b) ``--trials`` trials of identical settings (1 → 1, through the same interleaved path): a
    trial counts when no run is called *faster* or *slower*; at least 9 of 10 must;
(c) ``--plan-trials`` trials of the default plan's buffer pool and redo log (the changes the
    wizard recommends for these two, nothing else), applied by the job and measured as the
    wizard measures them (:func:`app.flows.measured.measured_apply`): on MariaDB 11.8 both
    resize live, so interleaved, the pool and log resized once a round, one data set for the
    larger pool written first and read in after every switch
    (:func:`app.bench.reach.data_set_bytes`); where a restart is needed, before, then after.
    Rolled back after each trial: autocommit ×1 must be called *faster* in at least 4 of 5.

``--busy 0`` measures the same with nothing else running.

Prints one line per trial (method, rounds, budget used, each run's verdict; for (c) the data
set and autocommit ×1's rounds on each side) and where a step's
time went (the table, the clients' start, the timed part, the readings), then the counts; exits
1 when (a) or (b) does not hold. With ``--trials``/``--change-trials`` below 5 and 10, the
needed counts are scaled (and the table says so).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.domain.bench import BenchReport
from app.domain.pace import cpu_wait
from app.flows.measure import MeasureOptions
from app.flows.measured import Measuring
from tests.hosts.debian_hosts import SPECS, DebianHost

TRX = "innodb_flush_log_at_trx_commit"
CLAIMS = ("faster", "slower")


def load() -> str:
    """The machine's load average (1, 5, 15 min)."""
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` shell busy loops, each keeping one CPU busy."""
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]  # noqa: S607


def exit_on_sigterm() -> None:
    """Stopped early (SIGTERM), the busy loops end and the host is powered off all the same.

    A second SIGTERM (timeout's, after a kill of both) must not cut the power-off short.
    """

    def stop(*_: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.exit(143)

    signal.signal(signal.SIGTERM, stop)


def clean_up(loops: list[subprocess.Popen[bytes]], conn: Any, host: DebianHost, work: Path) -> None:
    """End the busy loops and the session, power the host off, remove the work folder."""
    for loop in loops:
        loop.kill()
        loop.wait()
    if conn is not None:
        conn.close()
    host.poweroff()
    shutil.rmtree(work, ignore_errors=True)


def login(host: DebianHost, work: Path) -> tuple[Any, Any, Any]:
    """Log in to the host as `innotune bench` would (root over SSH, its key)."""
    from app.cli import build_parser
    from app.commands.common import login as cli_login

    known = work / "known_hosts"
    known.write_text(host.known_hosts_line())
    parser, _ = build_parser()
    args = parser.parse_args(
        ["bench", host.target, "--identity", str(host.client_key), "--known-hosts", str(known)]
        + ["--yes"]
    )
    return cli_login(args)


def step_figures(bench: Any, reports: list[BenchReport]) -> tuple[int, float, dict[str, float]]:
    """Steps, mean overhead per step (wall time beyond the timed part), and the phases.

    The overhead is worked out from what every version of the benchmark gives (the seconds it
    took and each round's timed seconds), so the same script measures the code before this
    change too; the phases come from :class:`app.bench.steps.StepTimes` where there is one.
    """
    steps = sum(len(r.rounds) for report in reports for r in report.results)
    timed = sum(r.seconds for report in reports for r in report.results)
    overhead = (bench.seconds_used - timed) / max(1, steps)
    times = getattr(bench, "times", None)
    return steps, overhead, times.per_step() if times is not None else {}


def trial(
    measuring: Measuring, new: str, benches: list[Any]
) -> tuple[BenchReport, BenchReport, Any, Any]:
    """One interleaved measurement of trx_commit 1 → ``new``; the Benchmark it used."""
    made = measuring._bench

    def keep(label: str, options: MeasureOptions) -> Any:
        bench = made(label, options)
        benches.append(bench)
        return bench

    measuring._bench = keep  # type: ignore[method-assign]
    before, after, found = measuring.interleaved(((TRX, "1", new),), "", "")
    return before, after, found, benches[-1]


POOL_REDO = frozenset(
    {"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_redo_log_capacity"}
)


def plan_trial(host: DebianHost, work: Path, options: MeasureOptions) -> tuple[Any, str]:
    """The default plan's pool and redo changes, applied by the job and measured as the wizard does.

    Rolled back at the end. Returns the measured apply and the changes in
    words ("innodb_buffer_pool_size 128.0 MiB → 16.1 GiB; …").
    """
    import dataclasses

    from app.commands.sliders import positions_from_args
    from app.flows.apply import ApplyOptions, apply_preview, restore
    from app.flows.inspecting import inspect_connected
    from app.flows.measured import measured_apply, method_for
    from app.flows.planning import plan_for
    from app.flows.preview import preview_plan

    conn, target, secrets = login(host, work)
    try:
        facts = inspect_connected(conn, sample_seconds=10.0, say=lambda _t: None)
        from app.cli import build_parser

        parser, _ = build_parser()
        args = parser.parse_args(["preview", host.target])
        plan = plan_for(facts, positions_from_args(args, facts))
        changes = tuple(c for c in plan.changes if c.key in POOL_REDO)
        if not changes:
            raise SystemExit("the default plan changes neither the pool nor the redo log here")
        plan = dataclasses.replace(
            plan, changes=changes, restart_needed=any(c.restart_needed for c in changes)
        )
        preview = preview_plan(plan, facts, conn)
        words = "; ".join(f"{c.key} {c.current} → {c.proposed}" for c in changes)
        transport = conn.transport
        assert transport is not None and facts.server is not None
        if conn.session is not None:
            conn.session.close()
            conn.session = None
        cancel = threading.Event()
        server = facts.server

        def apply_now() -> Any:
            return apply_preview(
                transport, preview, server, plan, ApplyOptions(), on_step=lambda _s: None
            )

        measuring = Measuring(
            conn,
            target,
            secrets,
            options,
            cancel=cancel,
            say=lambda _label, _text: None,
            progress=lambda _f: None,
        )
        measured = measured_apply(measuring, apply_now, method_for(preview), cancel=cancel)
        if measured.status is not None and measured.status.snapshot_id:
            back = restore(transport, measured.status.snapshot_id, on_step=lambda _s: None)
            if back.state != "rolled-back":
                raise SystemExit(f"the rollback ended {back.state}: stopped")
        return measured, words
    finally:
        conn.close()


def verdict_cells(before: BenchReport, after: BenchReport) -> list[str]:
    """Each run's verdict: "autocommit×1 faster +480%"."""
    out = []
    for v in after.verdicts(before):
        change = "" if v.change_percent is None else f" {v.change_percent:+.0f}%"
        out.append(f"{v.workload}×{v.threads} {v.verdict}{change}")
    return out


def print_plan_trial(host: DebianHost, work: Path, options: MeasureOptions, n: int) -> str:
    """Run one (c) trial, print its line; autocommit ×1's verdict ("—" when not measured)."""
    measured, words = plan_trial(host, work, options)
    found = measured.measurement
    if measured.before is None or measured.after is None or found is None:
        why = measured.no_after or measured.not_applied or "not measured"
        print(f"c{n:<5} {'plan':<7} {'-':<12} {why}  [{words}]", flush=True)
        return "—"
    cells = verdict_cells(measured.before, measured.after)
    verdicts = {
        (v.workload, v.threads): v.verdict for v in measured.after.verdicts(measured.before)
    }
    rounds = f"{found.before_rounds}/{found.fewest_rounds}-{found.after_rounds}"
    used = f"{found.seconds_used:.0f}/{found.budget_seconds:.0f} s"
    print(
        f"c{n:<5} {'plan':<7} {found.method:<12} {rounds:>6} {used:>14} {found.stopped:<8} "
        f"{'':>11}  {'; '.join(cells)}  (load {load()})  [{words}]",
        flush=True,
    )
    for line in (found.data_set, *found.cannot_show):
        if line:
            print(f"       {line}", flush=True)
    for label, report in (("before", measured.before), ("after", measured.after)):
        auto = report.result("autocommit", 1)
        if auto is not None:
            rounds = ", ".join(f"{x:,.0f}" for x in auto.rounds)
            wait = cpu_wait(auto)
            waited = (
                ""
                if wait is None
                else (
                    f"; per commit of {wait.commit_ms:.2f} ms the server's threads waited "
                    f"{wait.wait_ms:.2f} ms for a CPU and ran {wait.run_ms or 0:.2f} ms"
                )
            )
            print(f"       autocommit ×1 {label}: {rounds} commits/s{waited}", flush=True)
    from app.domain.drift import drift_held, drift_stands

    held = drift_held(measured.before, measured.after)
    stands = drift_stands(measured.before, measured.after)
    held += f"; {stands} stands" if held and stands else ""
    busy = [f"{x:.0%}" for x in (*measured.before.machine_busy, *measured.after.machine_busy)]
    print(f"       machine busy, benchmark paused: {' / '.join(busy)}; {held or 'not held'}")
    return str(verdicts.get(("autocommit", 1), "—"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--change-trials", type=int, default=5, help="trx_commit 1 -> 0 trials")
    parser.add_argument("--trials", type=int, default=10, help="identical-settings trials")
    parser.add_argument(
        "--plan-trials", type=int, default=5, help="default plan's pool + redo trials"
    )
    parser.add_argument("--busy", type=int, default=2, help="busy loops on this machine")
    parser.add_argument(
        "--seconds", type=float, default=MeasureOptions().seconds, help="the Benchmark time"
    )
    parser.add_argument("--budget", type=float, default=None, help="default: 10 × --seconds")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it boots the trixie test host", file=sys.stderr)
        return 2

    exit_on_sigterm()
    options = MeasureOptions(seconds=args.seconds, budget=args.budget)
    work = Path(tempfile.mkdtemp(prefix="bench-measured-"))
    os.environ["XDG_DATA_HOME"] = str(work / "data")
    host = DebianHost(SPECS["trixie"], work / "host")
    loops: list[subprocess.Popen[bytes]] = []
    conn = None
    try:
        host.boot()
        version = host.sql("SELECT @@version")
        conn, target, secrets = login(host, work)
        loops = busy_loops(args.busy)
        time.sleep(5)  # let the load average see them
        print(
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; trixie host: MariaDB {version}; "
            f"{os.cpu_count()} CPUs here, {args.busy} busy loops, load {load()}; Benchmark time "
            f"{options.seconds:g} s, budget {options.budget_seconds:g} s"
        )
        measuring = Measuring(
            conn,
            target,
            secrets,
            options,
            cancel=threading.Event(),
            say=lambda _label, _text: None,
            progress=lambda _f: None,
        )
        benches: list[Any] = []
        header = (
            f"{'trial':<6} {'change':<7} {'method':<12} {'rounds':>6} {'budget used':>14} "
            f"{'stopped':<8} {'step':>11}  verdicts"
        )
        print(header)
        single: list[str] = []
        quiet = 0
        phases: list[dict[str, float]] = []
        # Alternating (a), (b) and (c), so that a run stopped early (SIGTERM) has every kind.
        changes = [("a", n, "0") for n in range(1, args.change_trials + 1)]
        same = [("b", n, "1") for n in range(1, args.trials + 1)]
        pool = [("c", n, "") for n in range(1, args.plan_trials + 1)]
        plan = [t for trio in itertools.zip_longest(changes, same, pool) for t in trio if t]
        by_plan: list[str] = []
        for kind, n, new in plan:
            if kind == "c":
                by_plan.append(print_plan_trial(host, work, options, n))
                continue
            try:
                before, after, found, bench = trial(measuring, new, benches)
            finally:
                host.sql(f"SET GLOBAL {TRX} = 1")
            cells = verdict_cells(before, after)
            verdicts = {(v.workload, v.threads): v.verdict for v in after.verdicts(before)}
            if kind == "a":
                single.append(verdicts.get(("autocommit", 1), "—"))
            else:
                quiet += not any(v in CLAIMS for v in verdicts.values())
            steps, overhead, per = step_figures(bench, [before, after])
            if per:
                phases.append(per)
                print(
                    "       a step: " + ", ".join(f"{k} {v:.2f} s" for k, v in per.items()),
                    flush=True,
                )
            rounds = f"{found.fewest_rounds}-{found.after_rounds}"
            used = f"{found.seconds_used:.0f}/{found.budget_seconds:.0f} s"
            change = "1 → 0" if new == "0" else "1 → 1"
            print(
                f"{kind}{n:<5} {change:<7} {found.method:<12} {rounds:>6} {used:>14} "
                f"{found.stopped:<8} {overhead:>5.2f} s/{steps:<3}  {'; '.join(cells)}"
                f"  (load {load()})",
                flush=True,
            )
        if phases:
            mean = {k: sum(p[k] for p in phases) / len(phases) for k in phases[0]}
            print(
                "a step's time, mean over the trials: "
                + ", ".join(f"{k} {v:.2f} s" for k, v in mean.items())
            )
        needed_a = -(-4 * args.change_trials // 5)
        needed_c = -(-4 * args.plan_trials // 5)
        ok_c = by_plan.count("faster") >= needed_c
        needed_b = -(-9 * args.trials // 10)
        ok_a = single.count("faster") >= needed_a
        ok_b = quiet >= needed_b
        scaled = (
            " (scaled: fewer trials than 5/10)"
            if (args.change_trials, args.trials, args.plan_trials) != (5, 10, 5)
            else ""
        )
        print(
            f"(a) {TRX} 1 -> 0: autocommit ×1 faster in {single.count('faster')} of "
            f"{len(single)} (needed {needed_a}) — {'holds' if ok_a else 'DOES NOT HOLD'}{scaled}"
        )
        print(
            f"(b) identical settings: no run called faster or slower in {quiet} of {args.trials} "
            f"(needed {needed_b}) — {'holds' if ok_b else 'DOES NOT HOLD'}; load now {load()}"
        )
        print(
            f"(c) default plan's pool + redo: autocommit ×1 faster in "
            f"{by_plan.count('faster')} of {len(by_plan)} (needed {needed_c}) — "
            f"{'holds' if ok_c else 'DOES NOT HOLD'}{scaled}"
        )
        return 0 if ok_a and ok_b and ok_c else 1
    finally:
        clean_up(loops, conn, host, work)


if __name__ == "__main__":
    sys.exit(main())
