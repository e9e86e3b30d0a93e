"""What a slider says at its position on these facts.

What a position means whatever the host (its label, its sentence, the knob values it sets)
is declared in resources/sliders.toml (:mod:`app.knobs.sliders`); this module words what
needs the facts: the crash-loss sentences' seconds, and the memory share's pool beside
its control. Pure functions of the facts; the catalogue is not needed to describe a position.
"""

from __future__ import annotations

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.knobs.sliders import slider
from app.planner.budget import pool_of
from app.planner.context import server_variable
from app.planner.values import parse_int, size_text


def flush_seconds(facts: HostFacts) -> str:
    """innodb_flush_log_at_timeout in words ("1 second"): the crash-loss texts' {seconds}."""
    timeout = (
        parse_int(server_variable(facts.server, "innodb_flush_log_at_timeout"))
        if facts.server
        else None
    ) or 1
    return f"{timeout} second" + ("s" if timeout != 1 else "")


def describe(key: str, position: object, facts: HostFacts) -> str | None:
    """The declared one-sentence risk of a slider's position on these facts.

    None for sliders whose sentence the planner's rules word from their own figures
    (memory, redo): :func:`app.planner.describe` plans to get those.

    Raises:
        ValueError: unknown slider or position.
    """
    declared = slider(key)
    spot = declared.at(position)
    if spot is not None and spot.sentence is not None:
        return spot.sentence.format(seconds=flush_seconds(facts))
    if key in WORDED_BY_RULES:
        return None
    raise ValueError(f"unknown {key} position {position!r}")


#: The sliders whose sentences the rules word from the plan's own figures.
WORDED_BY_RULES = ("memory", "redo", "binlog")


def note(key: str, plan: Plan, facts: HostFacts) -> str:
    """The words beside a control that has no position labels: the memory share and its pool.

    The size is the plan's own (what the changes table proposes, or the pool it keeps),
    spelled by the one formatter (size_text).
    """
    if key != "memory":
        return ""
    share = plan.positions.memory_share
    pool = pool_of(plan, facts)
    if pool is None:
        return f"{share}% of RAM"
    kept = plan.change("innodb_buffer_pool_size") is None
    return f"{share}% of RAM: {size_text(pool)}" + (" (kept as it is)" if kept else "")
