"""What several subcommands share: connecting and logging in quietly."""

from __future__ import annotations

import argparse
import sys

from app.access.doctor import DoctorResult, run_doctor
from app.cli import secrets_from_args, target_from_args
from app.domain.errors import InnoTuneError


def resolve_instance_spec(args: argparse.Namespace) -> str | None:
    """The --instance to use; for the practice target, the practice server's socket."""
    if args.target == "practice" and not args.instance:
        from app.practice.practice import PracticeServer
        from app.ui.paths import default_practice_dir

        return str(PracticeServer(default_practice_dir()).endpoint().socket)
    return str(args.instance) if args.instance else None


def connect(args: argparse.Namespace, *, quiet: bool = True) -> DoctorResult:
    """Connect and log in as the doctor does; print only the steps that fail.

    Raises:
        InnoTuneError: a step failed (its line was printed on stderr).
    """
    from app.remote.connect import open_transport

    target = target_from_args(args)
    secrets = secrets_from_args(args, target)
    result = DoctorResult()
    for step in run_doctor(
        target, secrets, result, opener=open_transport, instance_spec=resolve_instance_spec(args)
    ):
        if step.status == "fail" or not quiet:
            print(step.line(), file=sys.stderr, flush=True)
    if not result.ok or result.session is None:
        result.close()
        raise InnoTuneError(
            f"Could not reach the server on {target.label}.",
            f"See the line above; `innotune doctor {args.target}` checks every step.",
        )
    return result
