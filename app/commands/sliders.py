"""The slider options `plan`, `preview`, `apply` and `export` share: one option per slider."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import CRASH_LOSS, REDO_PRESETS, SliderPositions

_YES = {"on": True, "yes": True, "off": False, "no": False}


def _percent(text: str) -> int:
    try:
        value = int(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole percentage") from None
    if not 1 <= value <= 90:
        raise argparse.ArgumentTypeError("the memory share must be between 1 and 90 percent")
    return value


def _redo(text: str) -> int | str:
    if text == "keep" or text in REDO_PRESETS:
        return text
    try:
        minutes = int(text)
    except ValueError:
        names = ", ".join(["keep", *REDO_PRESETS])
        raise argparse.ArgumentTypeError(f"use {names} or a number of minutes") from None
    if not 1 <= minutes <= 1440:
        raise argparse.ArgumentTypeError("redo minutes must be between 1 and 1440")
    return minutes


def _switch(text: str) -> bool:
    try:
        return _YES[text.lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"{text!r}: use on or off") from None


def add_slider_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per slider; a slider left out starts at the server's current position."""
    group = parser.add_argument_group(
        "sliders", "Each slider starts at the server's current position; move it with:"
    )
    group.add_argument(
        "--crash-loss",
        choices=CRASH_LOSS,
        help="1. what a crash may cost: none (nothing if the disk honours flushes), "
        "os (about a second of commits on an OS crash or power cut), "
        "any (about a second even on a server crash)",
    )
    group.add_argument(
        "--memory-share",
        type=_percent,
        metavar="PERCENT",
        help="2. the buffer pool as a share of RAM, 1-90 (never more than fits)",
    )
    group.add_argument(
        "--redo",
        type=_redo,
        metavar="keep|fast-recovery|balanced|smooth|MINUTES",
        help="3. redo log size in minutes of measured writes (fast-recovery 15, balanced 60, "
        "smooth 120); keep leaves it",
    )
    group.add_argument(
        "--doublewrite",
        type=_switch,
        metavar="on|off",
        help="4. torn-page protection; off only where the storage cannot tear pages",
    )
    group.add_argument(
        "--fit-disks",
        type=_switch,
        metavar="on|off",
        help="5. accept the changes that fit the disks (default on)",
    )
    group.add_argument(
        "--fit-os",
        type=_switch,
        metavar="on|off",
        help="5. accept the changes that fit the OS (default on)",
    )
    group.add_argument(
        "--myisam",
        type=_switch,
        metavar="on|off",
        help="6. size key_buffer_size to the MyISAM indexes (only where MyISAM holds data)",
    )
    group.add_argument(
        "--reject",
        action="append",
        default=[],
        metavar="CHANGE",
        help="turn down one change by its id (e.g. innodb_io_capacity, queue/scheduler@sda); "
        "repeatable",
    )


def positions_from_args(args: argparse.Namespace, facts: HostFacts) -> SliderPositions:
    """The positions: the server's current ones, moved where an option says so."""
    moved: dict[str, Any] = {}
    if args.crash_loss is not None:
        moved["crash_loss"] = args.crash_loss
    if args.memory_share is not None:
        moved["memory_share"] = args.memory_share
    if args.redo is not None:
        redo = args.redo
        moved["redo_minutes"] = None if redo == "keep" else REDO_PRESETS.get(str(redo), redo)
    for name in ("doublewrite", "fit_disks", "fit_os", "myisam"):
        value = getattr(args, name)
        if value is not None:
            moved[name] = value
    if args.reject:
        moved["rejected"] = tuple(sorted(set(args.reject)))
    from app.planner import default_positions  # the planner loads only when it plans

    return dataclasses.replace(default_positions(facts), **moved)
