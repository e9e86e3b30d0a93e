"""Every server line x every host profile x 54 slider positions, checked against the truth table.

The truth table (tests/unit/planner_truth.py, with its SOURCES) does not come from the
catalogue. Each plan must hold no change the server would refuse, clamp, ignore or undo, no
contradiction, nothing over RAM, and no sentence that promises what the code does not do.
All failing plans are collected and reported together (the count is the first line).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Iterator

from app.domain.facts import DiskProbe, OsFacts
from app.domain.hostfacts import HostFacts
from app.domain.plan import CRASH_LOSS, Plan, SliderPositions
from app.domain.serverfacts import OptionLine, ServerFacts
from app.inspect.host_parse import parse_host_output
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.context import classify, server_variable
from app.planner.starts import crash_position
from app.planner.values import parse_bool, parse_int
from tests.unit.planner_profiles import (
    HOSTS,
    PROFILES,
    _perc_os,
    _zfs_os,
    machine,
    os_from_fixture,
    server_facts,
)
from tests.unit.planner_truth import BETWEEN, GIB, KIB, LINES, MIB, PLANNED, Line, set_io_pair

CAT = default_catalogue()

CRASH = ("none", "os", "any")
MEMORY = (5, 50, 90)
REDO = (None, 15, 120)
DOUBLEWRITE = (True, False)
POSITIONS = [
    SliderPositions(
        crash_loss=c,
        memory_share=m,
        redo_minutes=r,
        doublewrite=d,
        fit_disks=True,
        fit_os=True,
        myisam=True,
    )
    for c, m, r, d in itertools.product(CRASH, MEMORY, REDO, DOUBLEWRITE)
]


# -- host profiles ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Host:
    """A host without its server: the OS facts, the probe, what the sample saw."""

    name: str
    os: OsFacts
    datadir: str
    page_rate: float | None  # page writes/s the probe measured (None: no probe)
    redo_rate: float | None  # redo bytes/s in the sample (None: no sample)
    binlog: bool
    log_waits: int | None = None


def _with_cache(os: OsFacts, cache: str) -> OsFacts:
    path = os.write_paths[0]
    devices = tuple(
        dataclasses.replace(d, write_cache=cache) if d.kind == "disk" else d for d in path.devices
    )
    return dataclasses.replace(os, write_paths=(dataclasses.replace(path, devices=devices),))


def _journal(os: OsFacts) -> OsFacts:
    path = os.write_paths[0]
    path = dataclasses.replace(path, mount_options=(*path.mount_options, "data=journal"))
    return dataclasses.replace(os, write_paths=(path,))


def _vm(ram: int) -> OsFacts:
    real = parse_host_output(
        (HOSTS / "vm-virtio-local" / "host.txt").read_text(), ["/var/lib/mysql"]
    )
    m = dataclasses.replace(
        real.machine, mem_total_bytes=ram, swap_total_bytes=GIB, big_processes=()
    )
    return OsFacts(machine=m, write_paths=real.write_paths)


def hosts() -> list[Host]:
    """The host profiles: recorded disks (tests/fixtures/hosts), machines SYNTHETIC."""
    nvme = os_from_fixture(
        "nvme-desktop",
        "/home/mysql",
        machine(kernel="6.8.0-45-generic", mem_total_bytes=128 * GIB, cpu_threads=32),
    )
    sata = os_from_fixture("nvme-desktop", "/var/lib/mysql", machine(mem_total_bytes=32 * GIB))
    hdd = os_from_fixture(
        "lvm-hdd", "/var/lib/mysql", machine(kernel=None, mem_total_bytes=16 * GIB)
    )
    md = os_from_fixture("md-raid1-sata-ssd-synthetic", "/var/lib/mysql", machine())
    big = os_from_fixture(
        "nvme-desktop",
        "/home/mysql",
        machine(mem_total_bytes=256 * GIB, cpu_threads=64, swap_total_bytes=0),
    )
    practice = PROFILES["practice-mariadb1011"].facts
    return [
        Host("nvme", nvme, "/home/mysql/", 60000.0, 20 * MIB, True, 0),
        Host("sata-ssd", sata, "/var/lib/mysql/", 5200.0, 1 * KIB, True),
        Host(
            "hdd-write-cache", _with_cache(hdd, "write back"), "/var/lib/mysql/", 140.0, None, False
        ),
        Host(
            "hdd-no-write-cache",
            _with_cache(hdd, "write through"),
            "/var/lib/mysql/",
            90.0,
            0.0,
            True,
        ),
        Host("lvm-hdd", hdd, "/var/lib/mysql/", None, 2 * MIB, False, 5),
        Host("md-raid1-ssd", md, "/var/lib/mysql/", 3000.0, 1 * MIB, True),
        Host("hwraid-perc", _perc_os(), "/var/lib/mysql/", 450.0, 2 * MIB, True),
        Host("zfs-nvme", _zfs_os(), "/var/lib/mysql/", None, None, False),
        Host("ext4-data-journal", _journal(sata), "/var/lib/mysql/", 900.0, 300 * KIB, False),
        Host("vm-1g", _vm(GIB), "/var/lib/mysql/", None, None, False),
        Host("vm-2g", _vm(2 * GIB), "/var/lib/mysql/", 1500.0, 64 * KIB, True),
        Host("box-256g", big, "/home/mysql/", 25000.0, 50 * MIB, True, 40),
        Host("practice", practice.os, practice.server.datadir or "/", None, None, False),  # type: ignore[union-attr]
    ]


CARRIED_OVER = (
    ("innodb_buffer_pool_instances", "4"),
    ("innodb_log_files_in_group", "2"),
    ("innodb_change_buffering", "none"),
    ("key_buffer_size", "16M"),
)


def facts_for(host: Host, line: Line) -> HostFacts:
    """The host with a server of ``line`` on it (its default variables, SYNTHETIC rates)."""
    server = server_facts(
        line.flavour,
        line.version,
        binlog=host.binlog,
        redo_rate=host.redo_rate,
        datadir=host.datadir,
    )
    if server.rates is not None:
        server = dataclasses.replace(
            server, rates=dataclasses.replace(server.rates, log_waits=host.log_waits)
        )
    # An option file carried over from older servers (SYNTHETIC): what it sets that this
    # line removed or ignores must be planned for removal, and nothing else.
    server = dataclasses.replace(
        server,
        option_lines=tuple(
            OptionLine(name, value, "/etc/mysql/my.cnf", n, f"{name}={value}")
            for n, (name, value) in enumerate(CARRIED_OVER, start=12)
        ),
    )
    probe = None
    if host.page_rate is not None:
        probe = DiskProbe(
            host.datadir,
            "python3",
            host.page_rate / 4,
            400.0,
            64 * MIB,
            6.0,
            page_writes_per_s=host.page_rate,
            page_queue_depth=8,
            page_method="fio",
        )
    return HostFacts(
        target=host.name,
        collected_at="2026-11-25T05:00:00+00:00",
        os=host.os,
        instances=(server.instance,),
        server=server,
        disk_probe=probe,
    )


# -- the checks -----------------------------------------------------------------------------


def _var(server: ServerFacts, name: str) -> str | None:
    return server.variable(name)


def _final(plan: Plan, server: ServerFacts, name: str) -> str | None:
    change = plan.change(name)
    return change.proposed if change is not None else _var(server, name)


def _int(value: str | None) -> int | None:
    return parse_int(value)


def _memory_need(server: ServerFacts, plan: Plan, line: Line) -> int:
    """What the server can take with the plan's values, counted here, not by the planner."""

    def num(name: str, default: int = 0) -> int:
        value = _int(_final(plan, server, name))
        return default if value is None else value

    per = sum(
        num(n)
        for n in (
            "sort_buffer_size",
            "join_buffer_size",
            "read_buffer_size",
            "read_rnd_buffer_size",
            "thread_stack",
            "net_buffer_length",
        )
    )
    if server.binlog_enabled:
        per += num("binlog_cache_size")
    total = int(num("innodb_buffer_pool_size") * 1.05)  # the pool's own bookkeeping
    total += per * num("max_connections", 151)
    total += num("key_buffer_size") + num("innodb_log_buffer_size")
    if line.memory_extra == "temptable":
        total += num("temptable_max_ram", GIB)  # [MY-TMP]
    else:
        total += min(num("tmp_table_size", 16 * MIB), num("max_heap_table_size", 16 * MIB))
    if line.mariadb:
        total += num("aria_pagecache_buffer_size", 128 * MIB)  # [MDB-ARIA]
    return total


#: Sentences in which InnoTune promises an action (not facts a device or a server reports).
FLAGS = re.compile(r"\bflags?\b", re.IGNORECASE)
REPORTS = re.compile(r"\b(?:InnoTune|it) (?:only )?reports\b|\breported in the warnings\b")
PROPOSES = re.compile(r"\b(?:InnoTune|then) proposes\b")
WILL = re.compile(r"\b(?:InnoTune|it|the plan|the job) will\b", re.IGNORECASE)
UP_TO = re.compile(r"\bup to (1 second|innodb_flush_log_at_timeout)")
ONE_BYTE_FREE = re.compile(r"\b1 B stay free\b.*should not need")


def _texts(plan: Plan) -> Iterator[tuple[str, str]]:
    for c in plan.changes:
        yield f"change {c.id} reason", c.reason
        yield f"change {c.id} risk", c.risk
    for x in plan.left_alone:
        yield f"left alone {x.knob}", x.why
    for w in plan.warnings:
        yield "warning", w
    for slider, sentence in plan.sentences:
        yield f"sentence {slider}", sentence


@functools.cache
def _said(text: str) -> tuple[bool, bool, bool, bool, bool, bool]:
    """Which of the checked phrasings ``text`` holds (the plans repeat their sentences: each
    distinct one is searched once)."""
    return (
        bool(FLAGS.search(text)),
        bool(REPORTS.search(text)),
        bool(PROPOSES.search(text)),
        bool(WILL.search(text)),
        bool(UP_TO.search(text)),
        bool(ONE_BYTE_FREE.search(text)),
    )


def _promises(plan: Plan) -> list[str]:
    """Every sentence promising an action that the plan's own content does not back."""
    bad = []
    for where, text in _texts(plan):
        knob = where.removeprefix("left alone ")
        flags, reports, proposes, will, _, _ = _said(text)
        if flags:
            bad.append(f"{where}: nothing flags anything: {text!r}")
        if reports and not any(knob in w for w in plan.warnings):
            bad.append(f"{where}: says it reports, no warning names {knob}: {text!r}")
        if proposes and where.startswith("left alone"):
            bad.append(f"{where}: left alone, yet says it proposes: {text!r}")
        if will:
            bad.append(f"{where}: a 'will' promise no check covers: {text!r}")
    return bad


def check(plan: Plan, facts: HostFacts, line: Line) -> list[str]:  # noqa: C901 - a list of rules
    """Every way this plan is wrong for this server and host (empty: none)."""
    server = facts.server
    assert server is not None
    bad: list[str] = []
    ids = [c.id for c in plan.changes]
    if len(ids) != len(set(ids)):
        bad.append(f"a change twice: {ids}")
    changed_keys = {(c.key, c.device) for c in plan.changes}
    for x in plan.left_alone:
        if (x.knob, x.device) in changed_keys:
            bad.append(f"{x.knob} both changed and left alone ({x.why})")
    for c in plan.changes:
        if c.target not in ("dynamic", "option_file") or c.key not in PLANNED:
            continue
        if c.key in line.absent:
            bad.append(f"{c.key}: {line.flavour} {line.version} does not have it")
            continue
        if c.live and c.key in line.restart:
            bad.append(f"{c.key}: planned live, but SET GLOBAL cannot change it")
        number = _int(c.proposed)
        low = line.minimum.get(c.key)
        if number is not None and low is not None and number < low:
            bad.append(f"{c.key}={c.proposed} below the minimum {low}")
        high = line.maximum.get(c.key)
        if number is not None and high is not None and number > high:
            bad.append(f"{c.key}={c.proposed} above the maximum {high}")
        allowed = line.allowed.get(c.key)
        if allowed is not None and c.proposed not in allowed:
            bad.append(f"{c.key}={c.proposed} not one of {sorted(allowed)}")
    # The io_capacity pair, applied one statement at a time in the plan's order.
    now = {n: _int(_var(server, n)) or 0 for n in ("innodb_io_capacity", "innodb_io_capacity_max")}
    for c in plan.changes:
        if c.key in now and c.live:
            for warning in set_io_pair(line, now, c.key, int(c.proposed)):
                bad.append(f"SET GLOBAL in plan order adjusts the pair: {warning}")
    for name in now:
        wanted = _int(_final(plan, server, name))
        if plan.change(name) is not None and plan.change(name).live and now[name] != wanted:  # type: ignore[union-attr]
            bad.append(f"{name} ends at {now[name]}, planned {wanted}")
    cap = _int(_final(plan, server, "innodb_io_capacity"))
    cap_max = _int(_final(plan, server, "innodb_io_capacity_max"))
    if cap is not None and cap_max is not None and cap_max < cap:
        bad.append(f"innodb_io_capacity_max {cap_max} < innodb_io_capacity {cap}")
    io = plan.change("innodb_io_capacity")
    if io is not None:
        if int(io.proposed) > 20000:
            bad.append(f"innodb_io_capacity {io.proposed} above the manual's 20000 [MY-IOCAP]")
        path = facts.os.path(server.datadir or "") or (facts.os.write_paths or (None,))[0]
        solid = path is not None and any(classify(d).kind in ("nvme", "ssd") for d in path.physical)
        if solid and int(io.proposed) < line.io_capacity_default and "default" not in io.reason:
            bad.append(f"innodb_io_capacity {io.proposed} below the default on SSD, no reason")
    # The buffer pool: MySQL refuses a live resize below 1 GiB with several instances.
    pool = plan.change("innodb_buffer_pool_size")
    instances = _int(_var(server, "innodb_buffer_pool_instances")) or 1
    if (
        pool is not None
        and pool.live
        and not line.mariadb
        and int(pool.proposed) < GIB
        and instances > 1
    ):
        bad.append("innodb_buffer_pool_size below 1 GiB planned live with several instances")
    ram = facts.os.machine.mem_total_bytes or 0
    others = sum(p.rss_bytes for p in facts.os.machine.big_processes)
    if pool is not None and ram and _memory_need(server, plan, line) + others > ram:
        bad.append(
            f"over RAM: the server can take {_memory_need(server, plan, line) >> 20} MiB "
            f"+ {others >> 20} MiB of others on {ram >> 20} MiB"
        )
    memory_sentence = dict(plan.sentences).get("memory", "")
    if "should not need to end the server" in memory_sentence and ram:
        free = ram - others - _memory_need(server, plan, line)
        if free < 256 * MIB:
            bad.append(f"memory sentence promises safety with {free >> 20} MiB free")
    # The redo log: monotonic in the rate, never below the default on an assumption.
    name = (
        "innodb_redo_log_capacity"
        if "innodb_redo_log_capacity" not in line.absent
        else "innodb_log_file_size"
    )
    redo = plan.change(name)
    files = 2 if (not line.mariadb and name == "innodb_log_file_size") else 1
    if redo is not None:
        total = int(redo.proposed) * files
        minutes = plan.positions.redo_minutes or 0
        if total < line.redo_default_total:  # at every position, fast recovery too
            default = line.redo_default_total >> 20
            bad.append(f"{name} total {total >> 20} MiB below the default {default} MiB")
        rate = server.rates.redo_bytes_per_s if server.rates else None
        current = (_int(_var(server, name)) or 0) * files
        # Fast recovery (15 min or less) is asked to shorten recovery: it may shrink, and
        # never grows the log beyond the default.
        fast = 0 < minutes <= 15
        if (rate is None or rate < GIB / 3600) and total < current and not fast:
            bad.append(f"{name} shrunk on a sample that saw {rate} B/s of redo")
        if fast and total >= max(current, line.redo_default_total + 1):
            bad.append(f"fast recovery grows {name}: {current >> 20} -> {total >> 20} MiB")
    if line.log_file_at_least_buffer:
        log_file = _int(_final(plan, server, "innodb_log_file_size"))
        log_buffer = _int(_final(plan, server, "innodb_log_buffer_size"))
        if log_file is not None and log_buffer is not None and log_file < log_buffer:
            bad.append("innodb_log_file_size below innodb_log_buffer_size (refused) [MDB-IVARS]")
    # The log buffer follows Innodb_log_waits, and only it.
    waits = server.rates.log_waits if server.rates else None
    grown = plan.change("innodb_log_buffer_size") is not None
    if grown != bool(waits) and plan.positions.rejected == ():
        bad.append(f"innodb_log_buffer_size changed={grown} with {waits} log waits")
    # Storage facts.
    path = facts.os.path(server.datadir or "") or facts.os.write_paths[0]
    dw = plan.change("innodb_doublewrite")
    if dw is not None and parse_bool(dw.proposed) is False and path.fs_type != "zfs":
        bad.append(f"doublewrite turned off on {path.fs_type}")
    fm = plan.change("innodb_flush_method")
    if fm is not None and fm.proposed.startswith("O_DIRECT"):
        if path.data_mode == "journal" or path.fs_type not in ("ext4", "xfs", "ext3"):
            bad.append(f"O_DIRECT proposed on {path.fs_type} {path.data_mode}")
    for x in plan.left_alone:
        if (
            x.knob == "innodb_flush_method"
            and "already O_DIRECT" in x.why
            and path.data_mode == "journal"
        ):
            bad.append("'already O_DIRECT' on ext4 data=journal, which disables O_DIRECT")
    for c in plan.changes:
        if c.key == "queue/scheduler" and "cfq" in c.reason and (c.current or "") != "cfq":
            bad.append(f"cfq result cited for {c.current} -> {c.proposed}")
        if c.key == "vm.dirty_ratio" and "free plus" not in c.reason:
            bad.append(
                "dirty_ratio reason ignores what the kernel applies the ratio to [KERNEL-VM]"
            )
    for where, text in _texts(plan):
        said = _said(text)
        if said[4]:
            bad.append(f"{where}: 'up to' a flush interval the manual does not guarantee")
        if said[5]:
            bad.append(f"{where}: '1 B stay free' called safe")
    removed = {c.key for c in plan.changes if c.target == "option_remove"}
    carried = {o.name for o in server.option_lines}
    if removed - line.obsolete:
        bad.append(f"removes lines the server still reads: {sorted(removed - line.obsolete)}")
    if (carried & line.obsolete) - removed:
        bad.append(
            f"leaves lines the server ignores: {sorted((carried & line.obsolete) - removed)}"
        )
    bad += _promises(plan)
    bad += _binlog_sync(plan, server)
    return bad


def _binlog_sync(plan: Plan, server: ServerFacts) -> list[str]:
    """sync_binlog follows the crash-loss position the person chose, and only then.

    At "none" the binary log is forced to disk at every commit group; moved to a lossier
    position than the server's now, a binary log forced to disk at every commit group
    (sync_binlog 1) is let go (0) unless replicas read it; not moved, it is never lowered.
    """
    if not server.binlog_enabled:
        return []
    change = plan.change("sync_binlog")
    now = server_variable(server, "sync_binlog")
    final = change.proposed if change else now
    position = plan.positions.crash_loss
    moved = CRASH_LOSS.index(position) > CRASH_LOSS.index(crash_position(server))
    if position == "none" and final != "1":
        return [f"at none sync_binlog ends at {final}"]
    if moved and now == "1" and not server.replicas_connected and final != "0":
        return [f"moved to {position}, sync_binlog still 1: every commit group pays its flush"]
    if not moved and change is not None and change.proposed != "1":
        return [f"sync_binlog lowered to {change.proposed} where crash loss was not moved"]
    return []


def _matrix(lines: tuple[Line, ...]) -> tuple[int, list[str]]:
    failures: list[str] = []
    count = 0
    for line in lines:
        for host in hosts():
            facts = facts_for(host, line)
            for pos in POSITIONS:
                plan = make_plan(facts, pos, CAT)
                count += 1
                for problem in check(plan, facts, line):
                    failures.append(
                        f"{line.flavour} {line.version} / {host.name} / {pos.crash_loss} "
                        f"{pos.memory_share}% redo={pos.redo_minutes} dw={pos.doublewrite}: "
                        f"{problem}"
                    )
    return count, failures


def test_every_line_every_host_every_position() -> None:
    count, failures = _matrix(LINES)
    assert count == len(LINES) * len(hosts()) * len(POSITIONS) == 10 * 13 * 54
    distinct = sorted({f.split(": ", 1)[1] for f in failures})
    assert not failures, f"{len(failures)} failing of {count} plans:\n" + "\n".join(distinct[:60])


def test_lines_between_the_catalogues_lines() -> None:
    count, failures = _matrix(BETWEEN)
    assert count == len(BETWEEN) * len(hosts()) * len(POSITIONS)
    assert not failures, "\n".join(sorted({f.split(": ", 1)[1] for f in failures})[:40])


def test_the_checks_catch_what_they_are_for() -> None:
    """The checks are not vacuous: plans broken on purpose are caught."""
    line = next(x for x in LINES if x.version == "8.0.36")  # io_capacity 200, max 2000
    facts = facts_for(hosts()[0], line)
    plan = make_plan(facts, POSITIONS[0], CAT)
    cap = plan.change("innodb_io_capacity")
    cap_max = plan.change("innodb_io_capacity_max")
    assert cap is not None and cap_max is not None
    swapped = [c for c in plan.changes if c.id not in (cap.id, cap_max.id)]
    wrong = dataclasses.replace(plan, changes=(cap, cap_max, *swapped))
    assert any("adjusts the pair" in p for p in check(wrong, facts, line))
    left = dataclasses.replace(
        plan,
        left_alone=(*plan.left_alone, dataclasses.replace(plan.left_alone[0], why="it flags it")),
    )
    assert any("nothing flags" in p for p in check(left, facts, line))
    live_redo = dataclasses.replace(
        plan,
        changes=tuple(
            dataclasses.replace(c, live=True) if c.key == "innodb_write_io_threads" else c
            for c in plan.changes
        ),
    )
    if plan.change("innodb_write_io_threads") is not None:
        assert any("SET GLOBAL cannot change it" in p for p in check(live_redo, facts, line))
    # A fast-recovery log below the server's default (issue 36: 100 MiB -> 50 MiB) is caught.
    fast = make_plan(facts, dataclasses.replace(POSITIONS[0], redo_minutes=15), CAT)
    template = fast.changes[0]
    half = dataclasses.replace(
        template,
        id="innodb_redo_log_capacity",
        key="innodb_redo_log_capacity",
        target="dynamic",
        slider="redo",
        current=str(line.redo_default_total),
        proposed=str(line.redo_default_total // 2),
    )
    shrunk = dataclasses.replace(
        fast, changes=(*(c for c in fast.changes if c.id != half.id), half)
    )
    assert not any("below the default" in p for p in check(fast, facts, line))
    assert any("below the default 100 MiB" in p for p in check(shrunk, facts, line))


def test_redo_size_is_monotonic_in_the_measured_rate() -> None:
    """More redo measured never gives a smaller log, on every line and host."""
    for line in LINES:
        for host in hosts()[:4]:
            sizes = []
            for rate in (None, 0.0, 1 * KIB, 100 * KIB, 1 * MIB, 10 * MIB, 100 * MIB):
                facts = facts_for(dataclasses.replace(host, redo_rate=rate), line)
                plan = make_plan(facts, dataclasses.replace(POSITIONS[0], redo_minutes=60), CAT)
                name = (
                    "innodb_redo_log_capacity"
                    if "innodb_redo_log_capacity" not in line.absent
                    else "innodb_log_file_size"
                )
                change = plan.change(name)
                assert facts.server is not None
                sizes.append(int(change.proposed) if change else _int(_var(facts.server, name)))
            assert sizes == sorted(sizes), (line.version, host.name, sizes)


# -- the starting positions -------------------------------------------------------------------


def _os_reserve(ram: int) -> int:
    """10% of RAM, 512 MiB to 8 GiB: what the OS and its page cache keep (counted here)."""
    return min(max(ram // 10, 512 * MIB), 8 * GIB)


def _start_problems(  # noqa: C901 - a list of rules
    facts: HostFacts, line: Line, start: SliderPositions | None = None
) -> list[str]:
    """Every way the starting positions and their plan are wrong on this host (empty: none)."""
    server = facts.server
    assert server is not None
    start = start or default_positions(facts)
    plan = make_plan(facts, start, CAT)
    bad = check(plan, facts, line)
    # Durability: where the server is now, never lower (read here from the variables).
    trx = _var(server, "innodb_flush_log_at_trx_commit")
    now = {"0": "any", "2": "os"}.get(trx or "1", "none")
    if start.crash_loss != now:
        bad.append(f"crash loss starts at {start.crash_loss}, the server is at {now}")
    for knob in ("innodb_flush_log_at_trx_commit", "innodb_doublewrite"):
        if plan.change(knob) is not None:
            bad.append(f"the starting plan changes {knob}")
    dw = (_var(server, "innodb_doublewrite") or "ON").upper() not in ("OFF", "0", "DETECT_ONLY")
    if start.doublewrite != dw:
        bad.append(f"torn-page protection starts {start.doublewrite}, the server has {dw}")
    # The resource sliders start at the recommendation.
    if not (start.fit_disks and start.fit_os):
        bad.append("the disk and OS fits do not start ticked")
    myisam_data = any(
        e.engine.lower() == "myisam" and e.tables and e.data_bytes + e.index_bytes
        for e in server.engines
    )
    if start.myisam != myisam_data:
        bad.append(f"MyISAM starts {start.myisam} with MyISAM data {myisam_data}")
    rate = server.rates.redo_bytes_per_s if server.rates else None
    name = (
        "innodb_redo_log_capacity"
        if "innodb_redo_log_capacity" not in line.absent
        else "innodb_log_file_size"
    )
    files = 2 if (not line.mariadb and name == "innodb_log_file_size") else 1
    held = None
    if rate and rate >= GIB / 3600:
        held = (_int(_var(server, name)) or 0) * files / rate / 60
    want_redo = None if held is not None and held >= 60 else 60
    if start.redo_minutes != want_redo:
        bad.append(f"redo starts at {start.redo_minutes}, recommended {want_redo} (holds {held})")
    # Memory from the host: RAM, the other processes, the OS reserve, the connections.
    ram = facts.os.machine.mem_total_bytes or 0
    others = sum(p.rss_bytes for p in facts.os.machine.big_processes)
    pool = _int(_final(plan, server, "innodb_buffer_pool_size")) or 0
    current = _int(_var(server, "innodb_buffer_pool_size")) or 0
    beside = _memory_need(server, plan, line) - int(pool * 1.05)
    room = ram - others - beside - _os_reserve(ram)
    if ram and others * 10 <= ram:
        ceiling = ram * (75 if ram > 4 * GIB else 50) // 100  # a database host
    else:
        ceiling = (ram - others) // 2  # a shared host
    if pool > max(ceiling, current):
        bad.append(f"the starting pool {pool >> 20} MiB is above {ceiling >> 20} MiB")
    if int(pool * 1.05) > max(room, int(current * 1.05)):
        bad.append(f"the starting pool {pool >> 20} MiB leaves the OS reserve short")
    # A real recommendation: at least half of what the host can give with a margin left
    # for surprises (256 MiB or 5% of RAM); the server rounds the pool down to its unit,
    # up to 1 GiB on MySQL with 8 instances.
    room -= max(256 * MIB, ram // 20)
    if pool + GIB < min(ceiling, room) // 2 and pool <= current:
        bad.append(f"the starting pool {pool >> 20} MiB is no recommendation (room {room >> 20})")
    if (
        start.memory_share
        == (min(90, max(1, round(current * 100 / ram))) if ram else start.memory_share)
        and plan.change("innodb_buffer_pool_size") is None
        and pool < min(ceiling, room) // 2
    ):
        bad.append("the memory slider starts at the current share on a host with room")
    return bad


def test_starting_positions_on_every_line_and_host() -> None:
    """Starts at InnoTune's recommendation (durability where the server is) everywhere."""
    failures = []
    for line in LINES:
        for host in hosts():
            facts = facts_for(host, line)
            failures += [
                f"{line.flavour} {line.version} / {host.name}: {p}"
                for p in _start_problems(facts, line)
            ]
    for name, profile in PROFILES.items():
        version = profile.facts.server.version if profile.facts.server else None
        line = next((x for x in LINES if x.version == version), None)
        if line is not None:
            failures += [f"profile {name}: {p}" for p in _start_problems(profile.facts, line)]
    assert not failures, f"{len(failures)} failing:\n" + "\n".join(failures[:40])


def test_start_checks_catch_a_start_at_the_current_share() -> None:
    """The start checks are not vacuous: the old start (every slider where it is) fails."""
    line = next(x for x in LINES if x.version == "9.7.4")
    facts = facts_for(hosts()[1], line)  # 32 GiB, a 128 MiB pool
    keep = dataclasses.replace(
        default_positions(facts), memory_share=1, redo_minutes=None, myisam=False
    )
    problems = _start_problems(facts, line, keep)
    assert any("no recommendation" in p for p in problems), problems
    assert any("redo starts at None" in p for p in problems), problems
    lossy = dataclasses.replace(default_positions(facts), crash_loss="os")
    assert any("crash loss starts at os" in p for p in _start_problems(facts, line, lossy))


def test_binlog_sync_check_catches_a_flush_kept_or_lowered() -> None:
    """The sync_binlog check is not vacuous, both ways."""
    line = next(x for x in LINES if x.version == "9.7.4")
    host = next(h for h in hosts() if h.binlog)
    facts = facts_for(host, line)
    assert facts.server is not None and facts.server.binlog_enabled
    at_os = make_plan(facts, dataclasses.replace(default_positions(facts), crash_loss="os"), CAT)
    assert not _binlog_sync(at_os, facts.server)
    let_go = at_os.change("sync_binlog")
    assert let_go is not None
    kept = dataclasses.replace(
        at_os, changes=tuple(c for c in at_os.changes if c.key != "sync_binlog")
    )
    assert any("sync_binlog still 1" in p for p in _binlog_sync(kept, facts.server))
    start = make_plan(facts, default_positions(facts), CAT)
    lowered = dataclasses.replace(start, changes=(*start.changes, let_go))
    assert any("at none sync_binlog ends at 0" in p for p in _binlog_sync(lowered, facts.server))
    variables = tuple(
        dataclasses.replace(v, value="2") if v.name == "innodb_flush_log_at_trx_commit" else v
        for v in facts.server.variables
    )
    there = dataclasses.replace(
        facts, server=dataclasses.replace(facts.server, variables=variables)
    )
    assert there.server is not None and crash_position(there.server) == "os"
    stays = make_plan(there, default_positions(there), CAT)
    assert stays.change("sync_binlog") is None and not _binlog_sync(stays, there.server)
    lowered = dataclasses.replace(stays, changes=(*stays.changes, let_go))
    assert any("where crash loss was not moved" in p for p in _binlog_sync(lowered, there.server))
