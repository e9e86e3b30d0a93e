"""The slider options `plan`, `preview`, `apply` and `export` share: one per declared slider.

Each option is generated from its slider's declaration (resources/sliders.toml): the
option's name, help, words and range. A slider left out starts where the wizard starts it:
at InnoTune's recommendation for the host, crash loss and torn-page protection where the
server is now (app.planner.starts.starting_points).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import SliderPositions
from app.knobs.sliders import Slider, sliders

#: The word a percent slider takes for "where the server is now" (the memory share's keep).
KEEP = "keep"


def _percent(slider: Slider) -> Callable[[str], str | int]:
    def parse(text: str) -> str | int:
        if text.strip().lower() == KEEP:
            return KEEP
        return _number(slider, text)

    return parse


def _number(slider: Slider, text: str) -> int:
    """A whole number in the slider's range (a percentage may end in %)."""
    low, high = slider.range or (0, 0)
    try:
        value = int(text.rstrip("%") if slider.kind == "percent" else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not low <= value <= high:
        unit = (slider.unit or "").lower()
        raise argparse.ArgumentTypeError(f"must be between {low} and {high} {unit}".rstrip())
    return value


def _word_or_number(slider: Slider) -> Callable[[str], str | int]:
    def parse(text: str) -> str | int:
        try:
            return slider.position(text).name
        except ValueError:
            pass
        if text.isdigit():
            return _number(slider, text)
        names = ", ".join(p.name for p in slider.positions)
        raise argparse.ArgumentTypeError(f"use {names} or a number of {slider.unit or ''}".lower())

    return parse


def _switch(slider: Slider) -> Callable[[str], str]:
    def parse(text: str) -> str:
        try:
            return slider.position(text.lower()).name
        except ValueError:
            words = " or ".join(p.name for p in slider.positions)
            raise argparse.ArgumentTypeError(f"{text!r}: use {words}") from None

    return parse


def _help(slider: Slider) -> str:
    """The declared help with its fields filled in, numbered as the page numbers it."""
    if slider.kind == "choice":
        listed = ", ".join(f"{p.name} ({p.help or p.label})" for p in slider.positions)
    else:
        listed = ", ".join(f"{p.name} {p.value}" for p in slider.positions if p.value is not None)
    spot = slider.at(slider.default)
    low, high = slider.range or (None, None)
    text = slider.help.format(
        positions=listed, min=low, max=high, default=spot.name if spot else slider.default
    )
    return f"{slider.number}. {text}"


def _option(slider: Slider) -> dict[str, Any]:
    """The keywords of one slider's add_argument."""
    names = "|".join(p.name for p in slider.positions)
    if slider.kind == "choice":
        return {"choices": [p.name for p in slider.positions]}
    if slider.kind == "presets":
        return {"type": _word_or_number(slider), "metavar": f"{names}|{slider.unit}"}
    if slider.kind == "percent":
        return {"type": _percent(slider), "metavar": f"{slider.unit}|{KEEP}"}
    return {"type": _switch(slider), "metavar": names}


def _dest(slider: Slider) -> str:
    return slider.option.replace("-", "_")


def add_slider_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per slider; a slider left out starts where the wizard starts it."""
    group = parser.add_argument_group(
        "sliders",
        "Each slider starts at InnoTune's recommendation for this host (crash loss and "
        "torn-page protection where the server is now, never lower); move it with:",
    )
    for slider in sliders():
        group.add_argument(f"--{slider.option}", help=_help(slider), **_option(slider))
    group.add_argument(
        "--reject",
        action="append",
        default=[],
        metavar="CHANGE",
        help="turn down one change by its id (e.g. innodb_io_capacity, queue/scheduler@sda); "
        "repeatable",
    )


def positions_from_args(args: argparse.Namespace, facts: HostFacts) -> SliderPositions:
    """The starting positions (the wizard's), moved where an option says so."""
    moved: dict[str, Any] = {}
    for slider in sliders():
        given = getattr(args, _dest(slider))
        if given == KEEP and slider.kind == "percent":
            from app.flows.planning import current_share

            # keep: the share the server has now (the planner leaves the pool as it is).
            share = current_share(facts)
            if share is not None:
                moved[slider.field] = share
            continue
        if given is not None:
            # A word names a position; a number is the value itself.
            moved[slider.field] = slider.position(given).value if isinstance(given, str) else given
    if args.reject:
        moved["rejected"] = tuple(sorted(set(args.reject)))
    from app.flows.planning import default_positions  # the planner loads only when it plans

    return dataclasses.replace(default_positions(facts), **moved)
