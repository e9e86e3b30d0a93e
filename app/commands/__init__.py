"""The headless subcommands; each module has ``register(subparsers, handlers)``."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Iterator
from typing import Any

Handler = Callable[[argparse.Namespace], int]
Register = Callable[[Any, dict[str, Handler]], None]

# Add a subcommand by adding its module here.
_MODULES: tuple[str, ...] = (
    "doctor",
    "inspect",
    "practice",
    "exercise",
    "plan",
    "bench",
    "watch",
    "options",
    "preview",
    "apply",
    "export",
)


def registrars() -> Iterator[Register]:
    """Each subcommand module's ``register`` function, in help order."""
    for name in _MODULES:
        module = importlib.import_module(f"app.commands.{name}")
        yield module.register
