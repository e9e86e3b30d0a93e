"""What several subcommands share: the TARGET options, the secrets, connecting quietly."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.domain.errors import AuthError, InnoTuneError
from app.domain.target import ConnectOptions, Target, parse_target
from app.remote.transport import Transport


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """The TARGET and the connection options every subcommand that reaches a host takes."""
    parser.add_argument(
        "target",
        metavar="TARGET",
        help="local, practice, [user@]host[:port], [user@][ipv6]:port or an ~/.ssh/config alias",
    )
    group = parser.add_argument_group("connection")
    group.add_argument("--identity", metavar="FILE", help="private key file for SSH")
    group.add_argument("--known-hosts", metavar="FILE", help="extra known_hosts file to trust")
    group.add_argument(
        "--accept-host-key",
        metavar="SHA256:...",
        help="trust exactly this host-key fingerprint (as ssh-keygen -lf prints it)",
    )
    group.add_argument(
        "--ask-ssh-password", action="store_true", help="prompt for the SSH login password"
    )
    group.add_argument(
        "--ask-sudo-password", action="store_true", help="prompt for the sudo password"
    )
    group.add_argument("--mysql-user", metavar="USER", help="database user (default: socket login)")
    group.add_argument(
        "--ask-mysql-password", action="store_true", help="prompt for the database password"
    )
    group.add_argument(
        "--instance",
        metavar="SOCKET|PORT|PID|CONTAINER",
        help="which server, when the host runs several (a container by its name)",
    )


def target_from_args(args: argparse.Namespace) -> Target:
    """Build the Target from parsed arguments."""
    options = ConnectOptions(
        identity=args.identity,
        known_hosts=args.known_hosts,
        accept_host_key=args.accept_host_key,
        ask_sudo_password=args.ask_sudo_password,
        mysql_user=args.mysql_user,
        ask_mysql_password=args.ask_mysql_password,
        instance=args.instance,
    )
    return parse_target(args.target, options)


def ask_secret(prompt: str) -> str:
    """Read a secret from the terminal without echo (never from argv or the environment)."""
    return getpass.getpass(prompt)


def secrets_from_args(args: argparse.Namespace, target: Target) -> Secrets:
    """Prompt for each secret the options ask for; nothing is read from argv or env."""
    where = target.label
    return Secrets(
        login_password=ask_secret(f"SSH password for {where}: ") if args.ask_ssh_password else None,
        sudo_password=ask_secret(f"sudo password on {where}: ") if args.ask_sudo_password else None,
        mysql_password=ask_secret(f"Database password on {where}: ")
        if args.ask_mysql_password
        else None,
    )


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
    return login(args, quiet=quiet)[0]


def login(args: argparse.Namespace, *, quiet: bool = True) -> tuple[DoctorResult, Target, Secrets]:
    """:func:`connect`, also giving the target and the secrets (to open more sessions)."""
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
    return result, target, secrets


def open_link(args: argparse.Namespace) -> Transport:
    """Only the link to the target (no database login): what the snapshot commands need."""
    target = target_from_args(args)
    secrets = secrets_from_args(args, target)
    return cli_opener(
        target,
        sudo_password=secrets.sudo_password,
        login_password=secrets.login_password,
        key_passphrase=secrets.key_passphrase,
        accept_fingerprint=target.options.accept_host_key,
    )


def say(text: str) -> None:
    """A line of progress on stderr, so stdout stays the result."""
    print(text, file=sys.stderr, flush=True)


def progress(text: str) -> None:
    """A step under way, as the long commands print it."""
    say(f"… {text}")


def consent(question: str, yes: bool) -> bool:
    """Ask at the terminal, unless ``--yes`` was given; without a terminal, refuse."""
    if yes:
        return True
    if not sys.stdin.isatty():
        say("innotune: not a terminal and no --yes given: nothing was changed.")
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def target_optional(parser: argparse.ArgumentParser) -> None:
    """Let TARGET be left out when --facts or --plan gives what the command works on.

    add_target_arguments declares TARGET as required for every host command; plan,
    preview and export can work from a saved file, so their positional becomes optional
    and each command checks which of the sources it was given.
    """
    for action in parser._actions:  # argparse offers no public way to relax a positional
        if action.dest == "target":
            action.nargs = "?"
            action.default = None
            action.metavar = "TARGET"


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
