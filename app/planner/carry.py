"""Choices that survive a new inspection, and what the new facts changed, in plain words.

A person who goes Back and inspects again keeps every slider they moved and every change
they turned down. A slider still at InnoTune's start follows the start of the new facts;
where that start moved, a sentence names the fact that changed and what changed in the
recommendation. Pure: facts and positions in, positions and sentences out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.words import count
from app.knobs.sliders import Slider, sliders
from app.planner.binlog import binlog_lock
from app.planner.budget import PER_CONNECTION, pool_of
from app.planner.context import classify, datadir_path, server_variable
from app.planner.memorysum import share_text
from app.planner.starts import starting_points
from app.planner.values import parse_int, size_text

#: The server variables each slider's start depends on, beyond the catalogue's own knobs
#: of that slider (the memory budget reads the per-connection buffers and the caches).
START_VARIABLES: dict[str, tuple[str, ...]] = {
    "memory": (
        *PER_CONNECTION,
        "max_connections",
        "binlog_cache_size",
        "key_buffer_size",
        "innodb_log_buffer_size",
        "temptable_max_ram",
        "tmp_table_size",
        "max_heap_table_size",
        "aria_pagecache_buffer_size",
        "innodb_buffer_pool_size",
    ),
    "redo": ("innodb_redo_log_capacity", "innodb_log_file_size", "innodb_log_files_in_group"),
    "crash_loss": ("innodb_flush_log_at_trx_commit",),
    "doublewrite": ("innodb_doublewrite",),
    "binlog": ("log_bin", "gtid_mode", "rpl_semi_sync_master_enabled"),
}

#: Sizes among those variables, spelled as sizes.
_SIZES = {
    *PER_CONNECTION,
    "binlog_cache_size",
    "key_buffer_size",
    "innodb_log_buffer_size",
    "temptable_max_ram",
    "tmp_table_size",
    "max_heap_table_size",
    "aria_pagecache_buffer_size",
    "innodb_buffer_pool_size",
    "innodb_redo_log_capacity",
    "innodb_log_file_size",
}


@dataclass(frozen=True)
class Carried:
    """Positions for the new facts and what the page says about them.

    Attributes:
        positions: the person's moved sliders and turned-down changes, the rest at the
            new start.
        kept: keys of the sliders the person had moved (their position stays).
        notes: one sentence per slider whose start the new facts changed.
    """

    positions: SliderPositions
    kept: tuple[str, ...]
    notes: tuple[str, ...]


def carry_over(
    old: HostFacts,
    old_start: SliderPositions,
    chosen: SliderPositions,
    new: HostFacts,
    new_start: SliderPositions,
    plan: Callable[[HostFacts, SliderPositions], Plan],
) -> Carried:
    """The positions for ``new`` facts after the person chose ``chosen`` on ``old`` ones.

    Args:
        old: the facts the page showed.
        old_start: where the page started on ``old`` (InnoTune's start, or the practice
            server's).
        chosen: where the person left the sliders (and the changes they turned down).
        new: the facts of the new inspection.
        new_start: where the page would start on ``new``.
        plan: makes a plan (the page's cache, or :func:`app.planner.make_plan`).

    Returns:
        The carried positions, the moved sliders' keys and the sentences.
    """
    moved: dict[str, Any] = {}
    kept: list[str] = []
    notes: list[str] = []
    old_plan = new_plan = None
    for declared in sliders():
        name = declared.field
        was, now, mine = (getattr(p, name) for p in (old_start, new_start, chosen))
        touched = mine != was
        moved[name] = mine if touched else now
        if touched:
            kept.append(declared.key)
        if declared.key == "memory":
            if old_plan is None or new_plan is None:
                old_plan, new_plan = plan(old, old_start), plan(new, new_start)
            before, after = _pool_words(old_plan, old), _pool_words(new_plan, new)
        else:
            before, after = _words(declared, was), _words(declared, now)
        if before == after:
            continue
        notes.append(_note(declared, old, new, before, after, _words(declared, mine), touched))
    lock = binlog_lock(new.server) if new.server is not None else None
    if not chosen.binlog and lock is not None:
        # Something uses it now, or it is off already: the choice no longer applies.
        moved["binlog"] = True
        if new.server is not None and not new.server.binlog_enabled:
            notes.append(
                "Since the last inspection the binary log is off, so slider 7 has nothing "
                "left to turn off."
            )
        else:
            notes.append(
                f"Since the last inspection {lock}, so the binary log stays on although you "
                "had chosen to turn it off."
            )
    # Turned down by the person, or by the new start (the practice server's own devices).
    rejected = tuple(
        sorted(set(chosen.rejected) | (set(new_start.rejected) - set(old_start.rejected)))
    )
    positions = dataclasses.replace(SliderPositions(), **moved, rejected=rejected)
    return Carried(positions, tuple(kept), tuple(notes))


def same_host(old: HostFacts, new: HostFacts) -> bool:
    """True when both facts are of the same target and server instance (choices carry over)."""
    if old.target != new.target or old.server is None or new.server is None:
        return False
    a, b = old.server.instance, new.server.instance
    return (a.socket, a.port, a.datadir) == (b.socket, b.port, b.datadir)


def _pool_words(plan: Plan, facts: HostFacts) -> str:
    pool = pool_of(plan, facts)
    share = plan.positions.memory_share
    ram = facts.os.machine.mem_total_bytes
    if pool is None or not ram:
        return f"{share}% of RAM"
    return f"{size_text(pool)} ({share_text(pool, ram)} of RAM)"


def _words(declared: Slider, value: object) -> str:
    """A position as the page shows it: its label, ticked/unticked, or the percentage."""
    if declared.kind == "switch":
        return "ticked" if value else "unticked"
    if declared.kind == "percent":
        return f"{value}% of RAM"
    spot = declared.at(value)
    return (spot.label if spot is not None else None) or str(value)


def _note(
    declared: Slider,
    old: HostFacts,
    new: HostFacts,
    before: str,
    after: str,
    mine: str,
    touched: bool,
) -> str:
    facts = fact_changes(declared.key, old, new)
    since = (
        "Since the last inspection " + _join(facts)
        if facts
        else "Since the last inspection the facts InnoTune saw changed"
    )
    start = starting_points(new).get(declared.key)
    server_side = start is not None and not start.recommended
    if declared.key == "memory":
        what = f"the recommended buffer pool is now {after} instead of {before}"
    elif server_side:
        what = (
            f'slider {declared.number} now starts where the server is, at "{after}" '
            f'instead of "{before}"'
        )
    else:
        what = (
            f'InnoTune now recommends "{after}" for slider {declared.number} instead of "{before}"'
        )
    follow = (
        f' You had moved the slider to "{mine}", so it stays there.'
        if touched
        else " The slider follows the server, as InnoTune never lowers durability on its own."
        if server_side
        else " The slider follows the new recommendation."
    )
    return f"{since}, so {what}.{follow}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _disks(facts: HostFacts) -> str:
    path = datadir_path(facts)
    if path is None or not path.physical:
        return "unknown"
    return ", ".join(classify(d).words for d in path.physical)


def _myisam(facts: HostFacts) -> str:
    server = facts.server
    tables = sum(e.tables for e in server.engines if e.engine.lower() == "myisam") if server else 0
    return count(tables, "MyISAM table")


def _value(name: str, value: str | None) -> str:
    number = parse_int(value)
    if name in _SIZES and number is not None:
        return size_text(number)
    return "unset" if value is None else value


def fact_changes(key: str, old: HostFacts, new: HostFacts) -> list[str]:
    """The facts a slider's start depends on that differ between two inspections, in words.

    Each reads "the RAM changed from 8 GiB to 16 GiB".
    """
    said: list[str] = []

    def differ(what: str, a: str, b: str) -> None:
        if a != b:
            said.append(f"{what} changed from {a} to {b}")

    om, nm = old.os.machine, new.os.machine
    if key == "memory":
        differ("the RAM", size_text(om.mem_total_bytes), size_text(nm.mem_total_bytes))
        differ(
            "the memory the other processes hold",
            size_text(sum(p.rss_bytes for p in om.big_processes)),
            size_text(sum(p.rss_bytes for p in nm.big_processes)),
        )
    if key in ("fit_disks", "doublewrite", "redo"):
        differ("the disk under the data directory", _disks(old), _disks(new))
    if key == "myisam":
        differ("what MyISAM holds", _myisam(old), _myisam(new))
    if key == "redo":
        differ(
            "the measured redo rate",
            _rate(old),
            _rate(new),
        )
    if key == "binlog":
        differ("the replicas connected", _replicas(old), _replicas(new))
        differ("whether this server is a replica", _replica(old), _replica(new))
    if old.server is not None and new.server is not None:
        for name in START_VARIABLES.get(key, ()):
            a = server_variable(old.server, name)
            b = server_variable(new.server, name)
            if a != b:
                said.append(f"{name} changed from {_value(name, a)} to {_value(name, b)}")
    return said


def _rate(facts: HostFacts) -> str:
    rates = facts.server.rates if facts.server else None
    rate = rates.redo_bytes_per_s if rates else None
    return "none measured" if not rate else f"{size_text(rate)} per second"


def _replicas(facts: HostFacts) -> str:
    server = facts.server
    n = server.replicas_connected if server else None
    return "unknown" if n is None else str(n)


def _replica(facts: HostFacts) -> str:
    return "yes" if facts.server is not None and facts.server.replica else "no"
