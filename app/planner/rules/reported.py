"""Switches InnoTune only reports: a warning when off, never a change."""

from __future__ import annotations

from app.planner.context import Ctx
from app.planner.values import parse_bool

#: Switches InnoTune keeps as they are and reports when they are off (the catalogue says so).
REPORTED_WHEN_OFF = {
    "innodb_adaptive_flushing": (
        "InnoDB no longer adapts page flushing to the redo rate, which invites checkpoint "
        "stalls under sustained writes"
    ),
    "innodb_file_per_table": (
        "new tables go into the shared system tablespace, which never gives space back"
    ),
}


def reported(ctx: Ctx) -> None:
    """The switches InnoTune only reports: a warning when off, left alone either way."""
    for name, harm in REPORTED_WHEN_OFF.items():
        if ctx.facts_for(name) is None:
            continue
        slider = ctx.knob(name).slider
        value = ctx.var(name)
        if parse_bool(value) is False:
            ctx.warn(
                f"{name} is OFF: {harm}. InnoTune does not change it; turn it back ON unless "
                "it was turned off on purpose."
            )
            ctx.leave(name, slider, "It is OFF; reported in the warnings, not changed.")
        else:
            ctx.leave(name, slider, f"It is {value or 'ON'}, as it should be; left alone.")
