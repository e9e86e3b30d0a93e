"""`innotune plan TARGET|--facts FILE [slider options]`: what InnoTune would change, and why."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, connect, progress, say, target_optional
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.domain.hostfacts import HostFacts
from app.flows.files import read_facts


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the plan subcommand."""
    parser = subparsers.add_parser(
        "plan",
        help="propose changes for the chosen slider positions, each with its reason and risk",
        description="Inspect TARGET (or read facts saved by `innotune inspect --out FILE`) and "
        "print the changes InnoTune would make at the given slider positions, the knobs it "
        "leaves alone and why. Nothing is changed.",
    )
    add_target_arguments(parser)
    target_optional(parser)
    parser.add_argument(
        "--facts",
        metavar="FILE",
        help="plan from facts saved by inspect --out instead of inspecting TARGET; with TARGET "
        "too, only check on TARGET whether the server restarted since they were read",
    )
    add_slider_arguments(parser)
    inspection = parser.add_argument_group("inspection (with TARGET)")
    inspection.add_argument(
        "--sample",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="sample status counters this long for the redo write rate (0: none; default 10)",
    )
    inspection.add_argument(
        "--probe-disk",
        action="store_true",
        help="measure synced writes in the datadir's filesystem to size innodb_io_capacity",
    )
    inspection.add_argument(
        "--save-facts", metavar="FILE", help="also save the inspected facts as JSON to FILE"
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument(
        "--out", metavar="PLAN.json", help="also save the plan as JSON to PLAN.json"
    )
    handlers["plan"] = run


def inspect_target(args: argparse.Namespace, disk_probe: bool = False) -> HostFacts:
    """Connect to TARGET and inspect it, sampling ``--sample`` seconds."""
    from app.flows.inspecting import check_sample, inspect_connected

    check_sample(args.sample)
    conn = connect(args)
    try:
        return inspect_connected(
            conn,
            sample_seconds=args.sample,
            disk_probe=disk_probe,
            say=progress,
        )
    finally:
        conn.close()


def facts_notes(args: argparse.Namespace, facts: HostFacts) -> list[str]:
    """How old the facts of ``--facts`` are, and whether the server changed since.

    With TARGET too, the server is asked (its uptime and pid tell a restart); without it,
    this computer's snapshots of the host tell an apply made since.
    """
    from app.flows.freshness import file_notes

    if args.target is None:
        return file_notes(facts, args.facts)
    conn = connect(args)
    try:
        return file_notes(facts, args.facts, conn)
    finally:
        conn.close()


def run(args: argparse.Namespace) -> int:
    """Gather or read the facts, plan, print."""
    from app.flows.planning import catalogue, plan_for, plan_text, starting_points

    if args.target is None and args.facts is None:
        print("innotune plan: give TARGET, --facts FILE, or both", file=sys.stderr)
        return 2
    if args.facts:
        facts = read_facts(args.facts)
        for line in facts_notes(args, facts):
            say(line)
    else:
        facts = inspect_target(args, args.probe_disk)
    if args.save_facts:
        Path(args.save_facts).write_text(facts.to_json() + "\n")
    knobs = catalogue()
    plan = plan_for(facts, positions_from_args(args, facts), knobs)
    text = plan.to_json()
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text if args.json else plan_text(plan, knobs, starting_points(facts)))
    probe = facts.disk_probe
    if not args.json and not (probe and probe.page_writes_per_s):
        # The plan's own words are the window's; the command line names its flag.
        print("To size innodb_io_capacity from the disk, plan again with --probe-disk.")
    return 0
