"""The headless command line: `innotune SUBCOMMAND ...`. Wiring only."""

from __future__ import annotations

import argparse
import sys

from app import APP_NAME, __version__
from app.commands import Handler, registrars
from app.domain.errors import InnoTuneError


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
    for register in registrars():
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
