"""The headless command line: `innotune SUBCOMMAND ...`. Wiring only."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from app import APP_NAME, __version__
from app.domain.errors import InnoTuneError
from app.domain.target import ConnectOptions, Target, parse_target

if TYPE_CHECKING:
    from app.access.doctor import Secrets

Handler = Callable[[argparse.Namespace], int]


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
        "--instance", metavar="SOCKET|PORT|PID", help="which server, when the host runs several"
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
    from app.access.doctor import Secrets

    where = target.label
    return Secrets(
        login_password=ask_secret(f"SSH password for {where}: ") if args.ask_ssh_password else None,
        sudo_password=ask_secret(f"sudo password on {where}: ") if args.ask_sudo_password else None,
        mysql_password=ask_secret(f"Database password on {where}: ")
        if args.ask_mysql_password
        else None,
    )


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The parser with every subcommand, and the handler of each."""
    parser = argparse.ArgumentParser(
        prog="innotune",
        description=f"{APP_NAME}: tune MySQL/MariaDB write performance. "
        "With no arguments, opens the wizard.",
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation (Qt offscreen, data files, libraries, every wizard page) "
        "and exit 0 if it can run",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    from app import commands

    for register in commands.registrars():
        register(subparsers, handlers)
    return parser, handlers


def run_cli(argv: list[str]) -> int:
    """Parse ``argv`` and run the chosen subcommand; errors become one clear message."""
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.self_test:
        from app.ui.selftest import run_self_test

        return run_self_test()
    if not args.command:
        parser.print_help()
        return 2
    try:
        from app.logsetup import setup_logging
        from app.places import app_data_dir

        setup_logging(app_data_dir() / "logs")
    except OSError:
        pass  # a read-only home must not stop a headless command
    try:
        return handlers[args.command](args)
    except InnoTuneError as exc:
        print(f"innotune: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("innotune: interrupted", file=sys.stderr)
        return 130
