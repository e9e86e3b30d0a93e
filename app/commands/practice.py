"""`innotune practice start|stop|status|restart|reset`: the practice server on this computer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands import Handler
from app.practice.binaries import find_binaries
from app.practice.practice import (
    BinariesFinder,
    PracticeServer,
    PracticeStatus,
)

ACTIONS = {
    "start": "start it (set up and seeded on first use), or adopt one already running",
    "stop": "stop it; nothing of it keeps running",
    "status": "say whether it runs, and where",
    "restart": "stop and start it (how option-file changes take effect)",
    "reset": "stop it, delete its directory and start a fresh one",
}


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the ``practice`` subcommand."""
    parser = subparsers.add_parser(
        "practice",
        help="run the practice server: a private MariaDB/MySQL on this computer to try things on",
        description="The practice server: a private MariaDB/MySQL with its own data directory, "
        "socket and port, seeded with a small 'practice' database. Other subcommands reach it "
        "as TARGET 'practice'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="actions:\n" + "\n".join(f"  {k:<8} {v}" for k, v in ACTIONS.items()),
    )
    parser.add_argument("action", choices=list(ACTIONS), metavar="ACTION", help=", ".join(ACTIONS))
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="the practice server's directory (default: <data directory>/practice, "
        "e.g. ~/.local/share/InnoTune/practice)",
    )
    handlers["practice"] = run


def practice_dir(args: argparse.Namespace) -> Path:
    """The directory from --dir, or the user's data directory (app/places.py)."""
    if args.dir:
        return Path(args.dir)
    from app.places import default_practice_dir

    return default_practice_dir()


def run(args: argparse.Namespace, find: BinariesFinder = find_binaries) -> int:
    """Carry out the action and print where the server is."""
    practice = PracticeServer(practice_dir(args), find=find)
    action = args.action
    if action == "start":
        status = practice.start(say=_progress)
        if status.adopted:
            print("Practice server running: adopted a server left running by an earlier InnoTune.")
        else:
            print("Practice server running.")
    elif action == "restart":
        status = practice.restart(say=_progress)
        print("Practice server restarted.")
    elif action == "reset":
        status = practice.reset(say=_progress)
        print("Practice server reset: the old directory was deleted; this one is fresh.")
    elif action == "stop":
        status = practice.stop()
        print("Practice server stopped; no server process of it is left.")
    else:
        status = practice.status()
        if status.running:
            print("Practice server running.")
        elif status.set_up:
            print("Practice server stopped. Start it with: innotune practice start")
        else:
            print("Practice server not set up yet. Create it with: innotune practice start")
    _describe(status, practice)
    return 0


def _progress(text: str) -> None:
    # Progress goes to stderr, so stdout is only the result (and stays parseable).
    print(f"{text} ...", file=sys.stderr, flush=True)


def _describe(status: PracticeStatus, practice: PracticeServer) -> None:
    rows = [("pid", str(status.pid) if status.pid else "-")]
    if status.running:
        rows.append(("socket", status.socket))
    if status.port is not None:
        rows.append(("port", f"{status.port} (127.0.0.1)"))
    rows += [("datadir", status.datadir), ("options", status.main_cnf)]
    if status.running:
        endpoint = practice.endpoint()
        rows += [
            ("database", "practice" if status.seeded else "(not loaded)"),
            ("target", f"practice  (= local --instance {status.socket})"),
            ("restart", endpoint.restart_command),
        ]
    for key, value in rows:
        print(f"  {key:<9}{value}")
