"""`innotune preview TARGET|--facts FILE [slider options]`: exactly what apply would do."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import (
    add_persisted_argument,
    add_target_arguments,
    connect,
    progress,
    say,
    target_optional,
)
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.flows.files import read_facts

DESCRIPTION = """\
Build the plan for the slider positions, then run every applier in dry-run mode and print
what apply would do: a unified diff per option file, sysfs and sysctl values (current ->
new, live and persistent), the udev rule and sysctl.d file in full, the exact commands and
SQL, whether the server must restart (with an estimated downtime) and every setting that
would override InnoTune's. Nothing is changed.

With TARGET the facts are inspected (or taken from --facts FILE) and the option files are
read live on TARGET. With --facts FILE alone there is no connection: option files cannot be
read, so their diffs are left out and said to be; sysfs/sysctl current values come from the
facts and the persistence files are shown as new files; no file checksum is recorded for a
file that was not read.

Exit status: 0 when every applier could describe its changes, 1 when one refused (the
reason is printed under "Refused"; nothing of it would be written).
"""


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the preview subcommand."""
    parser = subparsers.add_parser(
        "preview",
        help="show exactly what apply would change: diffs, values, files, commands, restart",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(parser)
    target_optional(parser)
    parser.add_argument(
        "--facts",
        metavar="FILE",
        help="facts saved by inspect --out; alone: preview offline, with TARGET: skip inspecting",
    )
    add_slider_arguments(parser)
    add_persisted_argument(parser)
    parser.add_argument(
        "--sample",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with TARGET and no --facts: sample status counters this long (default 10)",
    )
    parser.add_argument(
        "--restart",
        action="store_true",
        help="preview apply --restart: the server restarts afterwards even when every change "
        "takes effect live",
    )
    parser.add_argument("--out", metavar="FILE", help="also save the preview text to FILE")
    parser.add_argument(
        "--plan-out",
        metavar="PLAN.json",
        help="save the plan with the checksum of every file apply will change",
    )
    handlers["preview"] = run


def run(args: argparse.Namespace) -> int:
    """Facts → plan → dry runs → the preview text."""
    from app.flows.inspecting import check_sample, inspect_connected
    from app.flows.planning import plan_for
    from app.flows.preview import preview_plan, with_checksums, with_requested_restart

    if args.target is None and args.facts is None:
        print("innotune preview: give TARGET, --facts FILE, or both", file=sys.stderr)
        return 2
    conn = None
    try:
        if args.target is not None:
            conn = connect(args)
        if args.facts:
            from app.flows.freshness import file_notes

            facts = read_facts(args.facts)
            for line in file_notes(facts, args.facts, conn):
                say(line)
        else:
            check_sample(args.sample)
            assert conn is not None
            facts = inspect_connected(conn, sample_seconds=args.sample, say=progress)
        plan = plan_for(facts, positions_from_args(args, facts))
        preview = preview_plan(plan, facts, conn, args.persisted)
        if args.restart:
            preview = with_requested_restart(preview, facts, plan)
    finally:
        if conn is not None:
            conn.close()
    text = preview.text()
    if args.out:
        Path(args.out).write_text(text)
    if args.plan_out:
        Path(args.plan_out).write_text(with_checksums(plan, preview).to_json() + "\n")
    print(text, end="")
    return 1 if preview.errors else 0
