"""Asking the server binary on the host: ``<binary> ... --verbose --help`` and its answer.

The binary is the authority on how it reads its own files: the default option files it
looks for, the variables it knows, and whether it accepts a set of arguments at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.optionfiles.effective import parse_help_table
from app.optionfiles.search import parse_help_default_files
from app.remote.transport import Transport


@dataclass(frozen=True)
class BinaryAnswer:
    """What ``<binary> ... --verbose --help`` said about a set of arguments."""

    argv: tuple[str, ...]
    table: dict[str, str]
    errors: tuple[str, ...]
    default_files: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the server accepted every argument."""
        return not self.errors and bool(self.table)


def ask_binary(
    transport: Transport, binary: str, args: Sequence[str], *, sudo: bool = False
) -> BinaryAnswer:
    """Run ``binary *args --verbose --help`` on the host and read its variable table."""
    argv = (binary, *args, "--verbose", "--help")
    result = transport.run(list(argv), sudo=sudo, timeout=120)
    errors = tuple(
        line.split("[ERROR]", 1)[1].strip() for line in result.err.splitlines() if "[ERROR]" in line
    )
    if not result.ok and not errors:
        errors = tuple(
            (result.err.strip().splitlines() or [f"exit status {result.exit_status}"])[-1:]
        )
    return BinaryAnswer(
        argv=argv,
        table=parse_help_table(result.out),
        errors=errors,
        default_files=tuple(parse_help_default_files(result.out)),
    )


def binary_present(transport: Transport, binary: str) -> bool:
    """True when the server binary can be run on the host."""
    if not binary.startswith("/"):
        return False
    return transport.run(["test", "-x", binary]).ok
