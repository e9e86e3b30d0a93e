"""Making a plan: from the facts and the slider positions, with InnoTune's catalogue.

The one way both faces make a plan (the command line's plan, preview, apply and export, and
the Trade-offs page), with what they show of it: the starting positions and the words the
planner gives its changes.
"""

from __future__ import annotations

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.knobs import Catalogue, default_catalogue
from app.planner import default_positions, facts_checksum, make_plan, starting_points
from app.planner.binlog import binlog_lock
from app.planner.budget import current_share
from app.planner.carry import carry_over, same_host
from app.planner.report import change_values, plan_text, spelled
from app.planner.slidertexts import note

__all__ = [
    "binlog_lock",
    "carry_over",
    "catalogue",
    "change_values",
    "current_share",
    "default_positions",
    "facts_checksum",
    "note",
    "plan_for",
    "plan_text",
    "same_host",
    "spelled",
    "starting_points",
]


def catalogue() -> Catalogue:
    """InnoTune's knob catalogue (loaded once)."""
    return default_catalogue()


def plan_for(facts: HostFacts, positions: SliderPositions, knobs: Catalogue | None = None) -> Plan:
    """The plan for these facts at these slider positions (changes turned down left out)."""
    return make_plan(facts, positions, knobs or default_catalogue())
