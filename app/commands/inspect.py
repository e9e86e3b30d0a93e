"""`innotune inspect TARGET`: every fact about the host and the server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, connect, progress


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the inspect subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="read the hardware, the disks under the datadir and the server",
        description="Inspect the host and its server; print a summary, or JSON with --json.",
    )
    add_target_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the facts as JSON")
    parser.add_argument(
        "--sample",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="sample status counters this long for write rates (0: no sampling; default 10)",
    )
    parser.add_argument(
        "--probe-disk",
        action="store_true",
        help="measure synced writes in the datadir's filesystem (a few seconds, ~32 MiB)",
    )
    parser.add_argument("--out", metavar="FILE", help="also save the facts as JSON to FILE")
    handlers["inspect"] = run


def run(args: argparse.Namespace) -> int:
    """Connect, inspect, print."""
    from app.flows.inspecting import inspect_connected
    from app.inspect.report import summary

    if args.sample < 0 or args.sample > 600:
        print("innotune: --sample must be between 0 and 600 seconds", file=sys.stderr)
        return 2
    conn = connect(args)
    try:
        facts = inspect_connected(
            conn, sample_seconds=args.sample, disk_probe=args.probe_disk, say=progress
        )
    finally:
        conn.close()
    text = facts.to_json()
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text if args.json else summary(facts))
    return 0
