"""`innotune watch TARGET [--seconds N] [--out FILE] [--compare BEFORE.json] [--json]`."""

from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, login, progress
from app.domain.errors import InnoTuneError
from app.domain.watch import Watch


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the watch subcommand."""
    parser = subparsers.add_parser(
        "watch",
        help="watch the server's own workload: its costs per commit, no load added",
        description="Read the server's status counters, performance_schema's latencies (where "
        "it is on) and the /proc/diskstats line of the disk under the datadir, in rounds of a "
        "second or more, and report each cost per commit: fsyncs, redo bytes, pages written, "
        "log waits, disk flushes and writes, the disk's write latency, commit and statement "
        "latency; the traffic (commits/s, rows per commit) beside them. Nothing is written "
        "and no load is added. Save a watch with --out before a change and pass it to "
        "--compare after it: each figure gets a verdict (better, worse, no_change or "
        "undecided) when the traffic of both sides is alike.",
    )
    add_target_arguments(parser)
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="how long to watch (default 30; 3 to 3600)"
    )
    parser.add_argument("--out", metavar="FILE", help="also save the watch as JSON to FILE")
    parser.add_argument(
        "--compare",
        metavar="BEFORE.json",
        help="judge each figure against a watch saved earlier with --out: better, worse, "
        "no_change or undecided, the traffic of both sides beside it; no verdict when the "
        "traffic differs by more than 1.5× in commits/s or 20 %% in rows per commit",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the watch as JSON; with --compare, per figure its verdict, before, "
        "after, change_percent with its interval and the traffic of each side",
    )
    handlers["watch"] = run


def saved_watch(path: Path) -> Watch:
    """A watch saved by ``--out``."""
    try:
        return Watch.from_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise InnoTuneError(
            f"--compare: {path} is not a watch InnoTune can read ({exc}).",
            "Pass a file saved by `innotune watch --out FILE`.",
        ) from exc


def run(args: argparse.Namespace) -> int:
    """Watch, print, compare."""
    from app.flows.watching import compare, comparison_json, comparison_text, watch, watch_text

    if not 3 <= args.seconds <= 3600:
        raise InnoTuneError("--seconds must be between 3 and 3600.")
    before = saved_watch(Path(args.compare)) if args.compare else None
    conn, target, secrets = login(args)
    cancel = threading.Event()
    try:
        progress(f"watching {target.label} for {args.seconds:.0f} s (no load added)")
        try:
            found = watch(conn, target, secrets, args.seconds, cancel=cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise
    finally:
        conn.close()
    if args.out:
        Path(args.out).write_text(found.to_json() + "\n")
    if before is None:
        print(found.to_json() if args.json else watch_text(found))
        return 0
    judged = compare(before, found)
    if args.json:
        print(json.dumps(comparison_json(args.compare, before, found, judged), indent=2))
    else:
        print(watch_text(found))
        print(f"\nAgainst {args.compare}:\n{comparison_text(before, found, judged)}")
    return 0
