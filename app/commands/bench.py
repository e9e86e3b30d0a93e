"""`innotune bench TARGET [--seconds N] [--threads N] [--rounds N] [--compare FILE] [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, login, progress
from app.domain.bench import ENGINES, ROUNDS, WORKLOADS, BenchReport
from app.domain.errors import InnoTuneError
from app.domain.facts import to_jsonable


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the bench subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="measure write speed with a bounded benchmark in a scratch schema",
        description="Show the server's current write rate, then (with your consent) run "
        "single-row inserts, small transactions and a bulk load at 1 and N clients in a "
        "scratch schema that is dropped afterwards. The clients run on the target, next to the "
        "server: sysbench if it has it, else InnoTune's load generator on its python3 (sent "
        "over, never installed), else its mariadb-slap or mysqlslap, else InnoTune's own "
        "client here. Nothing else on the server is touched. To see what a change did, save "
        "a run with --out before it and pass that file to --compare after it.",
    )
    add_target_arguments(parser)
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="the whole benchmark's time budget (default 60)",
    )
    parser.add_argument(
        "--threads", type=int, default=4, help="the larger client count (default 4; 1 always runs)"
    )
    parser.add_argument(
        "--max-rows", type=int, default=2_000_000, help="stop a run after this many rows"
    )
    parser.add_argument(
        "--engine",
        choices=("auto", *ENGINES),
        default="auto",
        help="where the clients run: auto (default) tries sysbench on the target, then the "
        "load generator on the target's python3, then slap (the target's mariadb-slap or "
        "mysqlslap: no latency percentiles), then innotune (InnoTune's own client on "
        "this computer, over the link)",
    )
    parser.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        metavar="LIST",
        help=f"comma-separated workloads to run (default {','.join(WORKLOADS)})",
    )
    parser.add_argument(
        "--sample",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="sample the current write rate this long first (default 3)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"short rounds each run is made of, taken in turn (default {ROUNDS}; fewer when "
        "the budget gives a round under half a second); --compare compares the rounds of "
        "both sides by rank",
    )
    parser.add_argument("--yes", action="store_true", help="run without asking")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON; with --compare, the comparison: per workload and "
        "client count its verdict (faster, slower, no_change or undecided; unmeasured when a "
        "side completed no transaction, named in too_short, or had fewer than 3 rounds), "
        "change_percent with its interval (low_percent, high_percent) and the rounds of "
        "each side",
    )
    parser.add_argument(
        "--compare",
        metavar="FILE",
        help="after the report, each run's verdict against a report saved earlier (--out, or "
        "the Verify page's Save results: its first report): the rounds of the two compared "
        "by rank; faster or slower only when the interval of the change excludes none",
    )
    parser.add_argument("--out", metavar="FILE", help="also save the report as JSON to FILE")
    handlers["bench"] = run


def _consent(args: argparse.Namespace, where: str, busy: bool) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        print(
            "innotune bench: not running without consent; confirm at a terminal or pass --yes",
            file=sys.stderr,
        )
        return False
    warning = " The server is busy: the benchmark will slow its clients down." if busy else ""
    answer = input(
        f"Run a {args.seconds:.0f}-second write benchmark in a scratch schema on {where}?"
        f"{warning} [y/N] "
    )
    return answer.strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    """Sample the write rate, ask, benchmark, print."""
    from app.flows.measure import (
        MeasureOptions,
        benchmark,
        comparison_text,
        rate_text,
        report_text,
        sample_write_rate,
    )

    if not 1 <= args.seconds <= 3600:
        raise InnoTuneError("--seconds must be between 1 and 3600.")
    if not 1 <= args.threads <= 64:
        raise InnoTuneError("--threads must be between 1 and 64.")
    if not 1 <= args.rounds <= 20:
        raise InnoTuneError("--rounds must be between 1 and 20.")
    workloads = tuple(w.strip() for w in args.workloads.split(",") if w.strip())
    if not workloads or set(workloads) - set(WORKLOADS):
        raise InnoTuneError(f"--workloads takes some of {', '.join(WORKLOADS)}.")
    before = _saved_report(Path(args.compare)) if args.compare else None
    options = MeasureOptions(
        seconds=args.seconds,
        threads=args.threads,
        rounds=args.rounds,
        workloads=workloads,
        max_rows=max(1000, args.max_rows),
        engine=args.engine,
    )
    conn, target, secrets = login(args)
    try:
        rate = sample_write_rate(conn, target, secrets, min(60.0, max(0.2, args.sample)))
        print(rate_text(rate), file=sys.stderr, flush=True)
        if not _consent(args, target.label, rate.busy):
            return 2
        cancel = threading.Event()
        report = _run_interruptible(
            lambda: benchmark(
                conn,
                target,
                secrets,
                "",
                options,
                cancel=cancel,
                say=progress,
                progress=lambda _fraction: None,
                rate=rate,
            ),
            cancel,
        )
    finally:
        conn.close()
    text = report.to_json()
    if args.out:
        Path(args.out).write_text(text + "\n")
    if before is not None and args.json:
        print(json.dumps(comparison_json(args.compare, before, report), indent=2))
    else:
        print(text if args.json else report_text(report))
    if before is not None and not args.json:
        print(f"\nAgainst {args.compare} ({before.started_at}):\n{comparison_text(before, report)}")
    return 130 if report.cancelled else 0


def comparison_json(name: str, before: BenchReport, after: BenchReport) -> dict[str, Any]:
    """What `--compare FILE --json` prints: each run's verdict, then the new report itself."""
    changed = after.settings_changed(before)
    return {
        "format": "innotune-bench-compare/1",
        "before": {"file": name, "started_at": before.started_at, "engine": before.engine},
        "runs": [v.as_dict() for v in after.verdicts(before)],
        "same_settings": bool(set(before.settings) & set(after.settings)) and not changed,
        "settings_changed": {name: {"before": b, "after": a} for name, (b, a) in changed.items()},
        "settings_note": after.settings_note(before),
        # How the pair was measured (a measured apply's reports carry it): None otherwise.
        "measurement": after.measurement.as_dict() if after.measurement else None,
        "after": to_jsonable(after),
    }


def _saved_report(path: Path) -> BenchReport:
    """The report to compare with: one saved by --out, or the first of the Verify page's list."""
    try:
        text = path.read_text()
        data = json.loads(text)
        if isinstance(data, list) and data:
            text = json.dumps(data[0])
        return BenchReport.from_json(text)
    except (OSError, ValueError) as exc:
        raise InnoTuneError(
            f"--compare: {path} is not a benchmark report InnoTune can read ({exc}).",
            "Pass a file saved by `innotune bench --out FILE` or the Verify page's Save results.",
        ) from exc


def _run_interruptible(work: Callable[[], Any], cancel: threading.Event) -> Any:
    """Run in a thread so Ctrl-C cancels cleanly (the scratch schema is still dropped)."""
    outcome: list[Any] = []

    def go() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
            outcome.append(exc)

    worker = threading.Thread(target=go, name="bench")
    worker.start()
    while worker.is_alive():
        try:
            worker.join(0.2)
        except KeyboardInterrupt:
            print("… cancelling: finishing the current transaction", file=sys.stderr)
            cancel.set()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]
