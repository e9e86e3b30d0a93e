"""`innotune doctor TARGET`: check every step from the target to a database login."""

from __future__ import annotations

import argparse
from typing import Any

from app.access.doctor import DoctorResult, run_doctor
from app.commands import Handler
from app.commands.common import (
    add_target_arguments,
    cli_opener,
    resolve_instance_spec,
    secrets_from_args,
    target_from_args,
)


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the doctor subcommand."""
    parser = subparsers.add_parser(
        "doctor",
        help="check SSH, host key, sudo, the server instance, a login and privileges",
        description="Check each step InnoTune needs and print one line per step: ok, or what "
        "is wrong and how to fix it. Exits 0 only when every step works.",
    )
    add_target_arguments(parser)
    handlers["doctor"] = run


def run(args: argparse.Namespace) -> int:
    """Run the doctor and print its steps as they complete."""
    target = target_from_args(args)
    secrets = secrets_from_args(args, target)
    result = DoctorResult()
    try:
        for step in run_doctor(
            target,
            secrets,
            result,
            opener=cli_opener,
            instance_spec=resolve_instance_spec(args),
        ):
            print(step.line(), flush=True)
    finally:
        result.close()
    print("All steps passed." if result.ok else "Some steps failed; see the lines above.")
    return 0 if result.ok else 1
