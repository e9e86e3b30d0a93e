"""Choices survive a new inspection; a changed fact is named with what it changed (issue 26, 4)."""

from __future__ import annotations

import dataclasses

from app.domain.hostfacts import HostFacts
from app.domain.serverfacts import Variable
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.carry import carry_over, fact_changes, same_host
from app.planner.values import GIB
from tests.unit.planner_truth import LINES
from tests.unit.test_planner_matrix import facts_for, hosts


def _facts(version: str, host: str = "sata-ssd") -> HostFacts:
    """Recorded facts: a server line's defaults (planner_truth) on a recorded host's disks."""
    line = next(x for x in LINES if x.version.startswith(version))
    return facts_for(next(h for h in hosts() if h.name == host), line)


def _with_ram(facts: HostFacts, ram: int) -> HostFacts:
    machine = dataclasses.replace(facts.os.machine, mem_total_bytes=ram, big_processes=())
    return dataclasses.replace(facts, os=dataclasses.replace(facts.os, machine=machine))


def _with_variable(facts: HostFacts, name: str, value: str) -> HostFacts:
    assert facts.server is not None
    variables = tuple(
        Variable(v.name, value, v.origin, v.path) if v.name == name else v
        for v in facts.server.variables
    )
    return dataclasses.replace(facts, server=dataclasses.replace(facts.server, variables=variables))


def _plan(facts: HostFacts, positions):  # type: ignore[no-untyped-def]
    return make_plan(facts, positions, default_catalogue())


def test_untouched_sliders_follow_and_the_ram_change_is_named() -> None:
    base = _facts("9.7")
    old, new = _with_ram(base, 8 * GIB), _with_ram(base, 16 * GIB)
    old_start, new_start = default_positions(old), default_positions(new)
    carried = carry_over(old, old_start, old_start, new, new_start, _plan)
    assert carried.positions == new_start
    assert carried.kept == ()
    pool = make_plan(new, new_start, default_catalogue()).change("innodb_buffer_pool_size")
    assert pool is not None
    [note] = [n for n in carried.notes if "buffer pool" in n]
    assert note.startswith("Since the last inspection the RAM changed from 8 GiB to 16 GiB, so ")
    assert "the recommended buffer pool is now " in note
    assert "The slider follows the new recommendation." in note


def test_a_moved_slider_and_unticked_boxes_stay() -> None:
    base = _facts("9.7")
    old, new = _with_ram(base, 8 * GIB), _with_ram(base, 16 * GIB)
    old_start, new_start = default_positions(old), default_positions(new)
    chosen = dataclasses.replace(
        old_start,
        memory_share=20,
        redo_minutes=120,
        fit_disks=False,
        fit_os=False,
        rejected=("innodb_io_capacity",),
    )
    carried = carry_over(old, old_start, chosen, new, new_start, _plan)
    got = carried.positions
    assert (got.memory_share, got.redo_minutes, got.fit_disks, got.fit_os) == (
        20,
        120,
        False,
        False,
    )
    assert got.rejected == ("innodb_io_capacity",)
    assert got.crash_loss == new_start.crash_loss
    assert set(carried.kept) == {"memory", "redo", "fit_disks", "fit_os"}
    [note] = [n for n in carried.notes if "buffer pool" in n]
    assert 'You had moved the slider to "20% of RAM", so it stays there.' in note


def test_same_facts_say_nothing() -> None:
    facts = _facts("11.8")
    start = default_positions(facts)
    carried = carry_over(facts, start, start, facts, start, _plan)
    assert carried.positions == start and carried.notes == () and carried.kept == ()


def test_a_server_variable_is_named() -> None:
    old = _facts("11.8")
    new = _with_variable(old, "innodb_flush_log_at_trx_commit", "2")
    carried = carry_over(
        old, default_positions(old), default_positions(old), new, default_positions(new), _plan
    )
    [note] = carried.notes
    assert note.startswith(
        "Since the last inspection innodb_flush_log_at_trx_commit changed from 1 to 2, so "
        'slider 1 now starts where the server is, at "Nothing on a server crash'
    )
    assert fact_changes("memory", old, new) == []


def test_other_hosts_start_over() -> None:
    a = _facts("9.7")
    b = dataclasses.replace(a, target="another-host")
    assert same_host(a, a) and not same_host(a, b)


def test_a_binary_log_turned_off_stays_on_once_a_replica_connects() -> None:
    from app.domain.serverfacts import BinlogUse

    base = _facts("9.7")
    assert base.server is not None
    free = dataclasses.replace(
        base.server, binlog_enabled=True, replicas_connected=0, binlog_use=BinlogUse(0, 0)
    )
    used = dataclasses.replace(free, replicas_connected=1, binlog_use=BinlogUse(1, 1))
    old = dataclasses.replace(base, server=free)
    new = dataclasses.replace(base, server=used)
    start = default_positions(old)
    chosen = dataclasses.replace(start, binlog=False)
    carried = carry_over(old, start, chosen, new, default_positions(new), _plan)
    assert carried.positions.binlog is True
    assert (
        "Since the last inspection 1 replica is connected and 1 connection reads it now, so "
        "the binary log stays on although you had chosen to turn it off."
    ) in carried.notes
    # Turned off meanwhile (applied): nothing left to turn off, and it says so.
    off = dataclasses.replace(base, server=dataclasses.replace(free, binlog_enabled=False))
    done = carry_over(old, start, chosen, off, default_positions(off), _plan)
    assert done.positions.binlog is True
    assert (
        "Since the last inspection the binary log is off, so slider 7 has nothing left to turn off."
    ) in done.notes
    # Nothing uses it: the choice stays.
    again = carry_over(old, start, chosen, old, start, _plan)
    assert again.positions.binlog is False and again.kept == ("binlog",)
