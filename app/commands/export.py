"""`innotune export TARGET|--facts FILE|--plan PLAN.json [sliders] --ansible DIR|--script FILE`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, target_optional
from app.commands.plan import inspect_target
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.flows.files import read_facts, read_plan

DESCRIPTION = """\
Export the plan for other hosts to apply with their own tools:

  --ansible DIR   a playbook with one role: the option-file drop-in from a template whose
                  buffer pool is computed on each host from its own RAM by the plan's rule,
                  kernel settings in sysctl.d, disk queue settings (live, and in a udev rule
                  matching a stable identifier) for each host's datadir disks of the kind
                  the plan was made for, found when the play runs,
                  a backup of every replaced file, a restart only when a restart-needing
                  setting changed. `ansible-playbook -i INVENTORY DIR/site.yml --check --diff`.
  --script FILE   one POSIX sh script for one host: `sh FILE check|apply|rollback`, with its
                  own snapshot, refusing a server version other than the plan's.
  --compose DIR   for a server in a container (a change inside one is lost when it is
                  recreated): the drop-in with this host's values and, for a compose
                  service, a compose override that mounts it from DIR; for a container
                  started with docker run, a script that recreates it with the same options
                  and the drop-in mounted (its data stays on its volume).

The plan comes from TARGET (inspected), from --facts FILE (saved facts) or from --plan
PLAN.json (saved by `innotune plan --out`); slider options apply to the first two.
Nothing is changed on any host by this command.
"""


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the export subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="write the plan as an Ansible playbook (for many hosts) or a shell script",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(parser)
    target_optional(parser)
    source = parser.add_argument_group("where the plan comes from (one of TARGET and:)")
    source.add_argument("--facts", metavar="FILE", help="plan from facts saved by inspect --out")
    source.add_argument("--plan", metavar="PLAN.json", help="export a plan saved by plan --out")
    add_slider_arguments(parser)
    parser.add_argument(
        "--sample",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with TARGET: sample status counters this long for the redo rate (default 10)",
    )
    out = parser.add_mutually_exclusive_group(required=True)
    out.add_argument("--ansible", metavar="DIR", help="write a playbook and role into DIR")
    out.add_argument("--script", metavar="FILE", help="write a POSIX sh script to FILE")
    out.add_argument(
        "--compose",
        metavar="DIR",
        help="a server in a container: write the drop-in and the durable way (a compose "
        "override, or a docker run script) into DIR",
    )
    handlers["export"] = run


def _plan(args: argparse.Namespace) -> tuple[Plan, HostFacts | None]:
    from app.flows.planning import plan_for

    if args.plan:
        plan = read_plan(args.plan, "Save a plan with `innotune plan TARGET --out PLAN.json`.")
        return plan, None
    facts = read_facts(args.facts) if args.facts else inspect_target(args)
    return plan_for(facts, positions_from_args(args, facts)), facts


def run(args: argparse.Namespace) -> int:
    """Plan (or read the plan), then write the export."""
    from app.flows.export import export_playbook, export_script

    given = sum(x is not None for x in (args.target, args.facts, args.plan))
    if given != 1:
        print(
            "innotune export: give exactly one of TARGET, --facts FILE, --plan PLAN.json",
            file=sys.stderr,
        )
        return 2
    plan, facts = _plan(args)
    if args.compose:
        from app.flows.export import export_durable

        container = facts.server.instance.container if facts and facts.server else None
        if container is None:
            print(
                "innotune export: --compose is for a server in a container; give TARGET with "
                "--instance CONTAINER (or --facts FILE of one)",
                file=sys.stderr,
            )
            return 2
        durable, written = export_durable(plan, container, Path(args.compose), facts)
        for path in written:
            print(f"wrote {path}")
        print(f"The durable way: {durable.how}. Run:")
        for command in durable.commands:
            print(f"  {command}")
        for note in durable.notes:
            print(note)
        return 0
    if args.ansible:
        written = export_playbook(plan, Path(args.ansible), facts)
        print(f"wrote {len(written)} files into {args.ansible}; try:")
        print(f"  ansible-playbook -i INVENTORY {Path(args.ansible) / 'site.yml'} --check --diff")
    else:
        export_script(plan, Path(args.script), facts)
        print(f"wrote {args.script}; try: sh {args.script} check")
    return 0
