"""Entry point: the wizard with no arguments, the headless CLI with a subcommand."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run InnoTune: open the wizard, or run a subcommand headless."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # at once: nothing else to load
        from app import APP_NAME, __version__

        print(f"{APP_NAME} {__version__}")
        return 0
    if args not in (["--version"], ["--help"], ["-h"]):
        _use_platform_places()
    if args:
        from app.cli import run_cli

        return run_cli(args)
    from app.ui.launch import launch_wizard

    return launch_wizard()


def _use_platform_places() -> None:
    """Keep the known hosts in the platform's data directory (see app/places.py), as the logs.

    The standard library finds it: a headless command never loads Qt.
    """
    from app.domain.errors import InnoTuneError
    from app.places import known_hosts_file
    from app.remote.hostkeys import use_own_file

    try:
        use_own_file(known_hosts_file())
    except (InnoTuneError, OSError):
        pass  # no writable data directory: the XDG default stands, as before
