"""The README's command list is the parser's: each subcommand once, as `--help` prints it.

Two long runs of options every such command shares are written as placeholders, which the
README explains: ``[connection options]`` and ``[slider options]``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from app.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"

CONNECTION = (
    "[--identity FILE] [--known-hosts FILE] [--accept-host-key SHA256:...] [--ask-ssh-password] "
    "[--ask-sudo-password] [--mysql-user USER] [--ask-mysql-password] "
    "[--instance SOCKET|PORT|PID|CONTAINER]"
)
SLIDERS = (
    "[--crash-loss {none,os,any}] [--memory-share PERCENT|keep] "
    "[--redo keep|fast-recovery|balanced|smooth|MINUTES] [--doublewrite on|off] "
    "[--fit-disks on|off] [--fit-os on|off] [--myisam on|off] [--binlog on|off] "
    "[--reject CHANGE]"
)


def usages(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Each subcommand's usage line as `innotune SUB --help` prints it, shortened as above."""
    monkeypatch.setenv("COLUMNS", "100000")  # one line each
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = {}
    for name, subparser in sub.choices.items():
        line = " ".join(subparser.format_usage().split()).removeprefix("usage: ")
        line = line.replace(" [-h]", "").replace(CONNECTION, "[connection options]")
        found[name] = line.replace(SLIDERS, "[slider options]")
    return found


def readme_lines() -> list[str]:
    block = README.read_text().split("\n## Command line\n", 1)[1].split("```sh\n", 1)[1]
    return [ln for ln in block.split("\n```", 1)[0].splitlines() if ln.startswith("innotune ")]


def test_every_command_is_listed_once_as_its_help_prints_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wanted = usages(monkeypatch)
    listed = readme_lines()
    names = [ln.split()[1] for ln in listed if not ln.split()[1].startswith("-")]
    assert sorted(names) == sorted(wanted), "each subcommand once"
    for line in listed:
        name = line.split()[1]
        if name.startswith("-"):
            continue
        command = re.split(r"\s{2,}#", line, maxsplit=1)[0].strip()
        assert command == wanted[name], f"README:\n{command}\n--help:\n{wanted[name]}"
