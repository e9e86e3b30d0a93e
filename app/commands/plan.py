"""`innotune plan TARGET|--facts FILE [slider options]`: what InnoTune would change, and why."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.cli import add_target_arguments
from app.commands import Handler
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts


def _target_optional(parser: argparse.ArgumentParser) -> None:
    """Let TARGET be left out when --facts gives the facts instead.

    add_target_arguments declares TARGET as required for every host command; plan alone
    can work from a saved file, so its positional becomes optional here and ``run``
    insists on exactly one of the two.
    """
    for action in parser._actions:  # argparse offers no public way to relax a positional
        if action.dest == "target":
            action.nargs = "?"
            action.default = None
            action.metavar = "TARGET"


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
    _target_optional(parser)
    parser.add_argument(
        "--facts", metavar="FILE", help="plan from facts saved by inspect --out instead of TARGET"
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


def _inspect(args: argparse.Namespace) -> HostFacts:
    from app.commands.common import connect
    from app.inspect.inspection import inspect

    if args.sample < 0 or args.sample > 600:
        raise InnoTuneError("--sample must be between 0 and 600 seconds.")
    conn = connect(args)
    try:
        assert conn.transport and conn.instance and conn.session
        return inspect(
            conn.transport,
            conn.instances,
            conn.instance,
            conn.session,
            sample_seconds=args.sample,
            disk_probe=args.probe_disk,
            use_sudo=conn.sudo_mode in ("root", "nopasswd", "password-ok"),
            say=lambda text: print(f"… {text}", file=sys.stderr, flush=True),
        )
    finally:
        conn.close()


def _read_facts(name: str) -> HostFacts:
    try:
        return HostFacts.from_json(Path(name).read_text())
    except OSError as exc:
        raise InnoTuneError(f"Cannot read {name}: {exc.strerror}.") from None
    except (ValueError, TypeError) as exc:  # TypeError: an object missing required fields
        raise InnoTuneError(
            f"{name} is not an InnoTune facts file: {exc}",
            "Save facts with `innotune inspect TARGET --out FILE`.",
        ) from None


def run(args: argparse.Namespace) -> int:
    """Gather or read the facts, plan, print."""
    from app.knobs import default_catalogue
    from app.planner import make_plan
    from app.planner.report import plan_text

    if (args.target is None) == (args.facts is None):
        print("innotune plan: give either TARGET or --facts FILE", file=sys.stderr)
        return 2
    facts = _read_facts(args.facts) if args.facts else _inspect(args)
    if args.save_facts:
        Path(args.save_facts).write_text(facts.to_json() + "\n")
    catalogue = default_catalogue()
    plan = make_plan(facts, positions_from_args(args, facts), catalogue)
    text = plan.to_json()
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text if args.json else plan_text(plan, catalogue))
    return 0
