"""`innotune options TARGET [--json]`: every option the server reads, and where it was set."""

from __future__ import annotations

import argparse
from typing import Any

from app.commands import Handler
from app.commands.common import add_target_arguments, connect


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the options subcommand."""
    parser = subparsers.add_parser(
        "options",
        help="the server's effective options, each with the file:line that set it",
        description="Read TARGET's option files exactly as its server does (its "
        "--defaults-file or the default order, !include and !includedir, the groups it "
        "reads), add its own command line (which beats every file) and MySQL's "
        "mysqld-auto.cnf, and print each option's effective value and where it was set. "
        "Nothing is changed.",
    )
    add_target_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    handlers["options"] = run


def run(args: argparse.Namespace) -> int:
    """Connect, read the option files as the server does, print the table."""
    from app.inspect.options import options_for
    from app.inspect.server import flavour_of

    conn = connect(args)
    try:
        assert conn.transport and conn.instance and conn.session
        row = conn.session.query("SELECT VERSION(), @@version_comment, @@datadir")[0]
        version, comment, datadir = (str(v or "") for v in row)
        table = options_for(
            conn.transport,
            conn.instance,
            flavour_of(version, comment),
            version,
            datadir=datadir or None,
            sudo=conn.can_sudo,
        )
    finally:
        conn.close()
    print(table.to_json() if args.json else table.text())
    return 0
