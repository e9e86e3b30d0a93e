"""Properties of every plan, over generated facts and slider positions (hypothesis).

Facts start from the profiles of planner_profiles.py (recorded real host outputs) and vary
what matters to the rules: RAM, other processes, connections and their buffers, the pool,
the durability settings, the redo rate, the measured sync rate, the filesystem.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.facts import ProcessMemory
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import Rates, Variable
from app.knobs import default_catalogue
from app.planner import make_plan
from app.planner.budget import memory_budget
from app.planner.starts import crash_position
from app.planner.values import parse_int, same
from tests.unit.planner_profiles import GIB, MARIADB_1011, MIB, MYSQL_HELP, PROFILES

CAT = default_catalogue()
LEGACY = {"noop", "deadline", "cfq"}
CHANGE_IDS = [
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_buffer_pool_size",
    "vm.swappiness",
    "vm.dirty_ratio",
    "queue/scheduler@sda",
    "innodb_flush_method",
]
# The recorded MySQL --help excerpts are complete for these prefixes only (their SOURCE.md).
MYSQL_COMPLETE = ("binlog_", "key_", "max_", "sync_")


@st.composite
def facts_strategy(draw: st.DrawFn) -> HostFacts:
    base = PROFILES[draw(st.sampled_from(sorted(PROFILES)))].facts
    assert base.server is not None
    ram = draw(st.integers(1, 1024)) * GIB // 2
    others = draw(st.integers(0, 16)) * GIB // 4
    m = dataclasses.replace(
        base.os.machine,
        mem_total_bytes=ram,
        big_processes=(ProcessMemory(7, "other", others),) if others else (),
        swap_total_bytes=draw(st.sampled_from([0, GIB])),
        swappiness=draw(st.sampled_from([0, 1, 10, 60, 100])),
        dirty_ratio=draw(st.integers(1, 60)),
        dirty_background_ratio=draw(st.integers(1, 30)),
    )
    values = {
        "max_connections": str(draw(st.integers(10, 5000))),
        "sort_buffer_size": str(draw(st.integers(32, 65536)) * 1024),
        "innodb_buffer_pool_size": str(draw(st.integers(8, 512 * 1024)) * MIB),
        "innodb_flush_log_at_trx_commit": draw(st.sampled_from(["0", "1", "2"])),
        "sync_binlog": draw(st.sampled_from(["0", "1", "100"])),
        "innodb_io_capacity": str(draw(st.integers(100, 40000))),
        "innodb_io_capacity_max": str(draw(st.integers(100, 80000))),
        "key_buffer_size": str(draw(st.integers(0, 4096)) * MIB),
    }
    kept = [v for v in base.server.variables if v.name not in values]
    variables = kept + [Variable(k, v, "CONFIG") for k, v in values.items()]
    rate = draw(st.one_of(st.none(), st.floats(0, 200 * MIB)))
    rates = None if rate is None else Rates(10.0, 1.0, 1.0, rate, None, None, None, None)
    server = dataclasses.replace(
        base.server,
        variables=tuple(sorted(variables, key=lambda v: v.name)),
        binlog_enabled=draw(st.booleans()),
        replica=draw(st.booleans()),
        rates=rates,
    )
    paths = base.os.write_paths
    if paths:
        fs = draw(st.sampled_from([paths[0].fs_type, "ext4", "xfs", "zfs", "btrfs"]))
        options = paths[0].mount_options + (("data=journal",) if draw(st.booleans()) else ())
        paths = (dataclasses.replace(paths[0], fs_type=fs, mount_options=options), *paths[1:])
    probe = base.disk_probe
    sync = draw(st.one_of(st.none(), st.floats(1, 500000)))
    if sync is not None:
        probe = dataclasses.replace(
            probe or _probe(base),
            sync_writes_per_s=sync,
            page_writes_per_s=draw(st.one_of(st.none(), st.floats(1, 500000))),
            page_queue_depth=8,
            directory=paths[0].directory,
        )
    os = dataclasses.replace(base.os, machine=m, write_paths=paths)
    return dataclasses.replace(base, os=os, server=server, disk_probe=probe)


def _probe(base: HostFacts) -> object:
    from app.domain.facts import DiskProbe

    return DiskProbe("/var/lib/mysql", "python3", None, None)


positions_strategy = st.builds(
    SliderPositions,
    crash_loss=st.sampled_from(["none", "os", "any"]),
    memory_share=st.integers(1, 90),
    redo_minutes=st.one_of(st.none(), st.integers(1, 1440)),
    doublewrite=st.booleans(),
    fit_disks=st.booleans(),
    fit_os=st.booleans(),
    myisam=st.booleans(),
    rejected=st.lists(st.sampled_from(CHANGE_IDS), unique=True).map(tuple),
)


def _final(plan: Plan, facts: HostFacts, name: str) -> int | None:
    change = plan.change(name)
    assert facts.server is not None
    return parse_int(change.proposed if change else facts.server.variable(name))


def _known_to_real_output(name: str, version: ServerVersion) -> bool:
    """Whether real server output says the variable exists; None-free fallback: catalogue."""
    if version.family is Flavour.MARIADB and version.series == (10, 11):
        return name in MARIADB_1011
    line = f"{version.major}.{version.minor}"
    if version.family is Flavour.MYSQL and line in MYSQL_HELP and name.startswith(MYSQL_COMPLETE):
        return name in MYSQL_HELP[line]
    # No real output for this version (or InnoDB, which the MySQL excerpts omit): the catalogue.
    return CAT.exists(name, version.family, version)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(facts=facts_strategy(), positions=positions_strategy)
def test_every_plan_is_sound(facts: HostFacts, positions: SliderPositions) -> None:
    plan = make_plan(facts, positions, CAT)
    server = facts.server
    assert server is not None
    version = ServerVersion.parse(server.version, server.version_comment)

    # Deterministic, byte for byte, and a lossless JSON round trip.
    again = make_plan(facts, positions, CAT)
    assert plan.to_json() == again.to_json()
    assert Plan.from_json(plan.to_json()) == plan

    # Fits in RAM: a proposed pool never exceeds what the budget leaves.
    pool = plan.change("innodb_buffer_pool_size")
    if pool is not None:
        budget = memory_budget(facts, _final(plan, facts, "key_buffer_size"))
        assert budget is not None
        assert int(pool.proposed) <= budget.fits
        assert budget.headroom(int(pool.proposed)) >= 0

    ids = [c.id for c in plan.changes]
    assert len(ids) == len(set(ids))
    for change in plan.changes:
        assert change.id not in positions.rejected
        assert change.reason and change.risk
        if change.target in ("option_file", "dynamic"):
            knob = CAT.knob(change.key)
            # Never a change that does nothing.
            assert not same(change.current, change.proposed, knob.type), change
            # Only variables that real output (or, without it, the catalogue) knows.
            assert _known_to_real_output(change.key, version), (change.key, version)
            facts_now = CAT.facts_for(change.key, version.family, version)
            assert facts_now is not None and not facts_now.ignored
            assert change.live == facts_now.dynamic or change.restart_needed
        if change.key == "queue/scheduler":
            kernel = facts.os.machine.kernel
            if kernel and int(kernel.split(".")[0]) >= 5:
                assert change.proposed not in LEGACY

    # Never contradicts itself.
    cap, cap_max = (
        _final(plan, facts, n) for n in ("innodb_io_capacity", "innodb_io_capacity_max")
    )
    if plan.change("innodb_io_capacity") or plan.change("innodb_io_capacity_max"):
        assert cap is not None and cap_max is not None and cap_max >= cap
    trx = plan.change("innodb_flush_log_at_trx_commit")
    if trx is not None:
        assert trx.proposed == {"none": "1", "os": "2", "any": "0"}[positions.crash_loss]
    sync = plan.change("sync_binlog")
    if sync is not None:
        assert server.binlog_enabled
        if positions.crash_loss == "none":
            assert sync.proposed == "1"
        else:  # moved to a lossier position: the binary log's flush goes with it
            assert sync.proposed == "0" and sync.current == "1"
            assert crash_position(server) != positions.crash_loss
    ratio, background = plan.change("vm.dirty_ratio"), plan.change("vm.dirty_background_ratio")
    if background is not None:
        final_ratio = int(ratio.proposed) if ratio else facts.os.machine.dirty_ratio
        assert final_ratio is not None and int(background.proposed) < final_ratio
    dw = plan.change("innodb_doublewrite")
    if dw is not None and dw.proposed == "OFF":
        assert facts.os.write_paths[0].fs_type == "zfs"
    assert plan.restart_needed == any(c.restart_needed for c in plan.changes)
