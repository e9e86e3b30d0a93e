"""What several subcommands share: connecting and logging in quietly."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from app.access.doctor import DoctorResult, run_doctor
from app.cli import secrets_from_args, target_from_args
from app.domain.errors import AuthError, InnoTuneError
from app.remote.transport import Transport


def resolve_instance_spec(args: argparse.Namespace) -> str | None:
    """The --instance to use; for the practice target, the practice server's socket."""
    if args.target == "practice" and not args.instance:
        from app.places import default_practice_dir
        from app.practice.practice import PracticeServer

        return str(PracticeServer(default_practice_dir()).endpoint().socket)
    return str(args.instance) if args.instance else None


def terminal_prompt(text: str, echo: bool) -> str:
    """Answer an SSH login question (a one-time code, a PAM prompt) at the terminal.

    Raises:
        AuthError: stdin is not a terminal, so nobody can answer.
    """
    if not sys.stdin.isatty():
        raise AuthError(
            f"The SSH server asks a login question ({text.strip()!r}) and there is no "
            "terminal to answer it.",
            "Run the command in a terminal, or log in with a key (--identity FILE).",
        )
    if echo:
        print(text, end="", file=sys.stderr, flush=True)
        return sys.stdin.readline().rstrip("\n")
    return getpass.getpass(text)


def cli_opener(target: Any, **options: Any) -> Transport:
    """``open_transport`` for the command line: login questions asked at the terminal."""
    from app.remote.connect import open_transport

    return open_transport(target, prompt=terminal_prompt, **options)


def connect(args: argparse.Namespace, *, quiet: bool = True) -> DoctorResult:
    """Connect and log in as the doctor does; print only the steps that fail.

    Raises:
        InnoTuneError: a step failed (its line was printed on stderr).
    """
    target = target_from_args(args)
    secrets = secrets_from_args(args, target)
    result = DoctorResult()
    for step in run_doctor(
        target, secrets, result, opener=cli_opener, instance_spec=resolve_instance_spec(args)
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


def add_persisted_argument(parser: argparse.ArgumentParser) -> None:
    """``--persisted``: what to do with a value MySQL's SET PERSIST keeps in mysqld-auto.cnf."""
    parser.add_argument(
        "--persisted",
        choices=("reset", "persist"),
        default="reset",
        help=(
            "MySQL: a value SET PERSIST keeps in mysqld-auto.cnf beats InnoTune's option file; "
            "'reset' removes it there (RESET PERSIST, default), 'persist' writes InnoTune's "
            "value there too (SET PERSIST_ONLY). Either way the file is snapshotted."
        ),
    )
