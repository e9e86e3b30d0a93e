"""Entry point: the wizard with no arguments, the headless CLI with a subcommand."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run InnoTune: open the wizard, or run a subcommand headless."""
    args = sys.argv[1:] if argv is None else argv
    if args:
        from app.cli import run_cli

        return run_cli(args)
    from app.ui.launch import launch_wizard

    return launch_wizard()
