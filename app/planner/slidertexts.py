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
from app.planner.budget import memory_budget, pool_of
from app.planner.context import server_variable
from app.planner.memorysum import share_text
from app.planner.redolog import representative
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
    spelled by the one formatter (size_text), and the share shown is that pool's own share
    of RAM (:func:`app.planner.memorysum.share_text`); where it differs from the share the
    slider asks, the note says why.
    """
    if key == "redo":
        return redo_note(plan, facts)
    if key != "memory":
        return ""
    share = plan.positions.memory_share
    pool = pool_of(plan, facts)
    ram = facts.os.machine.mem_total_bytes
    if pool is None or not ram:
        return f"{share}% of RAM"
    own = share_text(pool, ram)
    shown = f"{own} of RAM: {size_text(pool)}"
    if plan.change("innodb_buffer_pool_size") is None:
        return f"{shown} (kept as it is)"
    if own == f"{share}%":
        return shown
    budget = memory_budget(facts, parse_int(plan_final(plan, facts, "key_buffer_size")))
    if budget is not None and ram * share // 100 > budget.fits:
        return f"{shown} (the {share}% asked does not fit)"
    return f"{shown} (the {share}% asked, rounded down)"


def plan_final(plan: Plan, facts: HostFacts, name: str) -> str | None:
    """A server variable's value once the plan is applied: proposed, else current."""
    change = plan.change(name)
    if change is not None:
        return change.proposed
    return server_variable(facts.server, name) if facts.server else None


def redo_note(plan: Plan, facts: HostFacts) -> str:
    """The redo slider's words where no writes were measured: the size, and what it assumes.

    Its positions speak of minutes of writes; a sample that saw none cannot size a log in
    minutes, so the words say the size and the assumed rate instead ("" where the sample's
    rate is what the log is sized from, or the slider keeps the size).
    """
    minutes = plan.positions.redo_minutes
    if minutes is None or facts.server is None or representative(facts.server):
        return ""
    spot = slider("redo").at(minutes)
    name = spot.label.split(" (")[0] if spot is not None and spot.label else f"{minutes} min"
    change = plan.change("innodb_redo_log_capacity") or plan.change("innodb_log_file_size")
    size = parse_int(change.proposed) if change is not None else None
    if change is not None and change.key == "innodb_log_file_size" and size is not None:
        files = parse_int(server_variable(facts.server, "innodb_log_files_in_group")) or 1
        size *= files
    held = size_text(size) if size is not None else "kept"
    return f"{name}: {held}, for an assumed 1 GiB of redo an hour"
