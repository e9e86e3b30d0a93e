"""The sliders' arithmetic and the words that depend on the facts.

What a position means whatever the host (its label, its sentence, the knob values it sets)
is declared in resources/sliders.toml (:mod:`app.knobs.sliders`); this module adds what
needs the facts: where each slider starts, the memory and redo sentences, the sizes.
Pure functions of the facts; the catalogue is not needed to describe a position.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import ServerFacts
from app.domain.words import count
from app.knobs.sliders import slider, sliders
from app.planner.context import server_variable
from app.planner.values import GIB, MIB, duration_text, parse_bool, parse_int, size_text

#: Per-connection buffers a busy connection may allocate in full (worst case).
PER_CONNECTION = (
    "sort_buffer_size",
    "join_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "thread_stack",
    "net_buffer_length",
)

#: When no redo rate was measured: a labelled assumption of 1 GiB of redo per hour.
ASSUMED_REDO_BYTES_PER_S = GIB / 3600

#: InnoDB keeps its own bookkeeping beside the pool (about 5% of it).
POOL_OVERHEAD = 1.05

#: The server's own memory beside its buffers: threads, caches, dictionary.
SERVER_BASE_BYTES = 128 * MIB


def _version(server: ServerFacts) -> ServerVersion:
    return ServerVersion.parse(server.version, server.version_comment)


def _var_int(server: ServerFacts, name: str, default: int = 0) -> int:
    value = parse_int(server_variable(server, name))
    return default if value is None else value


# -- memory -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryBudget:
    """How much RAM the buffer pool may take once everything else has its room."""

    ram: int
    os_reserve: int
    other_processes: int
    per_connection: int
    max_connections: int
    other_buffers: int  # key buffer, log buffer, temporary tables, Aria, the server's own base
    fits: int  # the largest buffer pool that fits (before the server's rounding)
    other_parts: tuple[tuple[str, int], ...] = ()  # other_buffers, part by part
    # The memory limit of the container the server runs in, when it binds the pool.
    container_limit: int | None = None

    @property
    def connections(self) -> int:
        """All connections' buffers at once."""
        return self.per_connection * self.max_connections

    def headroom(self, pool: int) -> int:
        """RAM left with this pool and every connection's buffers in use (can be negative)."""
        return (
            self.ram
            - self.os_reserve
            - self.other_processes
            - self.connections
            - self.other_buffers
            - int(pool * POOL_OVERHEAD)
        )

    def thin(self, pool: int) -> bool:
        """True when what stays free with this pool is too little to absorb a surprise."""
        return self.headroom(pool) < max(THIN_HEADROOM, (self.container_limit or self.ram) // 20)

    def free_words(self, pool: int) -> str:
        """What stays free with this pool, said plainly (thin headroom named as such)."""
        free = self.headroom(pool)
        if free < 0:
            return (
                f"with every connection busy the server needs {size_text(-free)} more than "
                "the RAM, so Linux may swap or its OOM killer may end the server"
            )
        if free < MIB:
            return (
                "with every connection busy nothing stays free beyond the "
                f"{size_text(self.os_reserve)} kept for the OS: thin, so a memory-hungry "
                "process or a burst of connections can make Linux swap or its OOM killer end "
                "the server"
            )
        if self.thin(pool):
            return (
                f"with every connection busy only {size_text(free)} stay free beyond the "
                f"{size_text(self.os_reserve)} kept for the OS: thin, so a memory-hungry "
                "process or a burst of connections can make Linux swap or its OOM killer end "
                "the server"
            )
        return (
            f"with every connection busy {size_text(free)} stay free beyond the "
            f"{size_text(self.os_reserve)} kept for the OS, so the OOM killer should not need "
            "to end the server"
        )

    def words(self) -> str:
        """The budget in one clause, for reasons."""
        parts = ", ".join(f"{name} {size_text(n)}" for name, n in self.other_parts if n)
        detail = f": {parts}" if parts else ""
        if self.container_limit is not None:
            return (
                f"the server's container may use {size_text(self.container_limit)}, and "
                f"{self.max_connections} connections x {size_text(self.per_connection)} of "
                f"buffers ({size_text(self.connections)}) and the server's other memory "
                f"({size_text(self.other_buffers)}{detail}) need room in it, so at most "
                f"{size_text(self.fits)} fits"
            )
        return (
            f"room is kept for the OS ({size_text(self.os_reserve)}), the other processes "
            f"seen ({size_text(self.other_processes)}), {self.max_connections} connections x "
            f"{size_text(self.per_connection)} of buffers ({size_text(self.connections)}) and "
            f"the server's other memory ({size_text(self.other_buffers)}{detail}), so at most "
            f"{size_text(self.fits)} fits"
        )


#: Below this (or 5% of RAM) what stays free is called thin.
THIN_HEADROOM = 256 * MIB


#: The OS reserve: RAM // divisor, within min..max (carried in PoolRule for exports).
OS_RESERVE_DIVISOR = 10
OS_RESERVE_MIN = 512 * MIB
OS_RESERVE_MAX = 8 * GIB


def os_reserve(ram: int) -> int:
    """What the OS and its page cache keep: 10% of RAM, at least 512 MiB, at most 8 GiB."""
    return int(min(max(ram // OS_RESERVE_DIVISOR, OS_RESERVE_MIN), OS_RESERVE_MAX))


def memory_budget(facts: HostFacts, key_buffer: int | None = None) -> MemoryBudget | None:
    """The buffer pool's room on this host, or None when RAM or the server is unknown.

    Args:
        facts: the host's facts.
        key_buffer: the key buffer size the plan will use (default: the current one).
    """
    server, ram = facts.server, facts.os.machine.mem_total_bytes
    if server is None or not ram:
        return None
    per_conn = sum(_var_int(server, name) for name in PER_CONNECTION)
    if server.binlog_enabled:
        per_conn += _var_int(server, "binlog_cache_size")
    max_conn = _var_int(server, "max_connections", 151)
    keys = _var_int(server, "key_buffer_size") if key_buffer is None else key_buffer
    others = sum(p.rss_bytes for p in facts.os.machine.big_processes)
    parts = [
        ("key buffer", keys),
        ("log buffer", _var_int(server, "innodb_log_buffer_size")),
        *_temporary_and_caches(server),
        ("the server itself", SERVER_BASE_BYTES),
    ]
    other_buffers = sum(n for _, n in parts)
    reserve = os_reserve(ram)
    room = ram - reserve - others - per_conn * max_conn - other_buffers
    fits = max(0, int(room / POOL_OVERHEAD))
    # A server in a container lives within the engine's memory limit: past it the kernel
    # ends the server whatever the host has free. The job refuses a pool above 90% of it.
    container = server.instance.container
    limit = container.memory_limit_bytes if container is not None else None
    binding = None
    if limit:
        inside = min(limit - per_conn * max_conn - other_buffers, limit * 9 // 10)
        limit_fits = max(0, int(inside / POOL_OVERHEAD))
        if limit_fits < fits:
            fits, binding = limit_fits, limit
    return MemoryBudget(
        ram=ram,
        os_reserve=reserve,
        other_processes=others,
        per_connection=per_conn,
        max_connections=max_conn,
        other_buffers=other_buffers,
        fits=fits,
        other_parts=tuple(parts),
        container_limit=binding,
    )


def _temporary_and_caches(server: ServerFacts) -> list[tuple[str, int]]:
    """Memory beside the pool that the server takes under load, by flavour and version.

    - MySQL 8.0+: internal temporary tables live in the TempTable engine, which takes up
      to temptable_max_ram for all of them together (1 GiB by default; the manual,
      "Internal Temporary Table Use in MySQL").
    - MySQL 5.7 and MariaDB: an in-memory temporary table may grow to
      min(tmp_table_size, max_heap_table_size) before it goes to disk; one is counted
      (per query, as mysqltuner does), the per-connection buffers above are counted for all.
    - MariaDB: Aria's page cache (aria_pagecache_buffer_size, 128 MiB by default) is
      allocated at start, for the system tables and on-disk temporary tables.
    """
    version = _version(server)
    parts: list[tuple[str, int]] = []
    temptable = parse_int(server_variable(server, "temptable_max_ram"))
    if version.family is Flavour.MYSQL and version.number >= (8, 0, 0):
        parts.append(("temptable_max_ram", GIB if temptable is None else temptable))
    else:
        tmp = _var_int(server, "tmp_table_size", 16 * MIB)
        heap = _var_int(server, "max_heap_table_size", 16 * MIB)
        parts.append(("one in-memory temporary table", min(tmp, heap)))
    if version.family is Flavour.MARIADB:
        parts.append(("Aria page cache", _var_int(server, "aria_pagecache_buffer_size", 128 * MIB)))
    return parts


def current_share(facts: HostFacts) -> int | None:
    """The buffer pool's share of RAM now, in whole percent (1-90)."""
    ram = facts.os.machine.mem_total_bytes
    pool = (
        parse_int(server_variable(facts.server, "innodb_buffer_pool_size"))
        if facts.server
        else None
    )
    if not ram or pool is None:
        return None
    return min(90, max(1, round(pool * 100 / ram)))


# -- redo ---------------------------------------------------------------------------------


def uses_capacity(version: ServerVersion) -> bool:
    """MySQL 8.0.30+ sizes the redo log with innodb_redo_log_capacity."""
    return version.family is Flavour.MYSQL and version.number >= (8, 0, 30)


def redo_total(server: ServerFacts) -> int | None:
    """The redo log's whole size now (all files)."""
    return server.redo_bytes()


def redo_rate(server: ServerFacts) -> float | None:
    """Measured redo bytes per second, or None without a (non-idle) sample."""
    rate = server.rates.redo_bytes_per_s if server.rates else None
    return rate if rate else None


def planning_rate(server: ServerFacts) -> tuple[float, str]:
    """The redo rate to size the log with, and the words that say where it comes from.

    A short sample of an idle or nearly idle server says little about its peak: below the
    stated assumption (1 GiB per hour) the assumption is used instead, so the size never
    falls as the measured rate rises (monotonic) and an idle sample never shrinks the log.
    """
    rate = redo_rate(server)
    secs = server.rates.seconds if server.rates else 0
    if rate is not None and rate >= ASSUMED_REDO_BYTES_PER_S:
        return rate, (
            f"the server wrote {size_text(rate)} of redo per second during the {secs:.0f} s sample"
        )
    seen = (
        f"the {secs:.0f} s sample saw only {size_text(rate)} of redo per second, too little "
        "to show the peak"
        if rate is not None
        else "no redo write rate was measured (no sample, or an idle server)"
    )
    return ASSUMED_REDO_BYTES_PER_S, (
        f"{seen}, so this is a labelled default: an assumed 1 GiB of redo per hour (inspect "
        "with a longer status sample under the real load to size it from a measurement)"
    )


def representative(server: ServerFacts) -> bool:
    """True when the sample's redo rate is what the log is sized from (see planning_rate)."""
    rate = redo_rate(server)
    return rate is not None and rate >= ASSUMED_REDO_BYTES_PER_S


def recovery_range(total: float, spinning: bool) -> tuple[float, float]:
    """A rough crash-recovery time for a redo log of ``total`` bytes, in seconds.

    Recovery replays the log written since the last checkpoint: usually a small part of
    the log, at worst about three quarters of it. Replay speed is taken as 50-200 MB/s on
    solid state, 10-50 MB/s on spinning disks (rough figures; the checkpoint age decides).
    """
    slow, fast = (10e6, 50e6) if spinning else (50e6, 200e6)
    return (0.1 * total / fast, 0.75 * total / slow)


def recovery_span(total: float, spinning: bool) -> str:
    """The rough recovery range alone: "roughly 1 s to 8 s"."""
    low, high = (duration_text(t) for t in recovery_range(total, spinning))
    return f"about {low}" if low == high else f"roughly {low} to {high}"


def recovery_words(total: float, spinning: bool) -> str:
    """The rough recovery range in words."""
    return (
        f"crash recovery {recovery_span(total, spinning)} "
        "(it depends on how far the last checkpoint lags, not on the size alone)"
    )


# -- positions ----------------------------------------------------------------------------


def crash_position(server: ServerFacts) -> str:
    """The crash-cost position the server is in now.

    trx_commit 0 is "any", 2 is "os"; 1 (and MariaDB's 3) is "none", which a binary log
    with sync_binlog other than 1 does not change: the slider then starts at "none" and
    the plan makes that true with sync_binlog=1 (never at a lossier position).
    """
    trx = parse_int(server_variable(server, "innodb_flush_log_at_trx_commit"))
    if trx == 0:
        return "any"
    if trx == 2:
        return "os"
    return "none"


def doublewrite_on(value: str | None) -> bool:
    """ON, DETECT_AND_RECOVER (MySQL) and fast (MariaDB) protect pages; OFF, DETECT_ONLY don't."""
    if value is None:
        return True
    flag = parse_bool(value)
    if flag is not None:
        return flag
    return value.strip().upper() in ("DETECT_AND_RECOVER", "FAST")


@dataclass(frozen=True)
class Start:
    """Where a slider starts on a host, and why.

    Attributes:
        value: the SliderPositions value.
        why: the reason, from the facts, in plain words.
        recommended: True when it is InnoTune's recommendation for this host; False when
            the slider starts where the server is now (crash loss, torn-page protection:
            InnoTune never lowers durability unless the person asks).
    """

    value: object
    why: str
    recommended: bool = True


#: A dedicated server's buffer pool: 75% of RAM above 4 GiB, 50% up to it (the shares
#: MySQL's innodb_dedicated_server uses), never more than fits.
DEDICATED_LARGE_SHARE = 75
DEDICATED_SMALL_SHARE = 50
DEDICATED_LARGE_RAM = 4 * GIB
#: Other processes holding more than this share of RAM make the host a shared one.
SHARED_HOST_SHARE = 10
#: A shared host's buffer pool: at most half of what is left after the other processes.
SHARED_POOL_SHARE = 50


def recommended_share(facts: HostFacts) -> Start | None:
    """InnoTune's buffer-pool share for this host, from the host (not from the current share).

    RAM, the resident memory of the other processes the facts list, the OS reserve and
    what the server needs beside the pool (memory_budget) decide what fits; a dedicated
    host gets MySQL's innodb_dedicated_server share (75% of RAM above 4 GiB, 50% below),
    a shared one at most half of what the other processes leave. A pool that already
    fits and is larger is kept: InnoTune does not shrink a pool that fits. None when RAM
    or the server is unknown.
    """
    budget = memory_budget(facts)
    if budget is None:
        return None
    ram = budget.ram
    others = budget.other_processes
    shared = others * 100 > ram * SHARED_HOST_SHARE
    if shared:
        target = (ram - others) * SHARED_POOL_SHARE // 100
        kind = (
            f"other processes hold {size_text(others)} ({others * 100 // ram}% of RAM), so this "
            f"is a shared host: the pool may take at most half of the {size_text(ram - others)} "
            "they leave"
        )
    else:
        big = ram > DEDICATED_LARGE_RAM
        target = ram * (DEDICATED_LARGE_SHARE if big else DEDICATED_SMALL_SHARE) // 100
        seen = (
            f"other processes hold only {size_text(others)}"
            if others
            else "no other process was seen holding much memory"
        )
        kind = (
            f"{seen}, so this is a database host: the pool may "
            f"take {DEDICATED_LARGE_SHARE if big else DEDICATED_SMALL_SHARE}% of RAM, as "
            "MySQL's innodb_dedicated_server gives "
            + ("above 4 GiB of RAM" if big else "up to 4 GiB of RAM")
        )
    # What fits with a margin left free beyond the OS reserve (what ``thin`` asks for).
    margin = max(THIN_HEADROOM, (budget.container_limit or ram) // 20)
    roomy = max(0, int((budget.fits * POOL_OVERHEAD - margin) / POOL_OVERHEAD))
    room = min(target, roomy)
    # Rounded down, so the share's own size (RAM x share) never exceeds the room.
    share = min(90, max(1, room * 100 // ram))
    fit = (
        f"; {budget.words()}, and {size_text(margin)} more stays free for surprises, which caps it"
        if roomy < target
        else f"; it fits ({budget.words()})"
    )
    why = f"The host has {size_text(ram)} of RAM; {kind}{fit}."
    now = current_share(facts)
    server = facts.server
    pool = parse_int(server_variable(server, "innodb_buffer_pool_size")) if server else None
    if now is not None and pool is not None and now > share and pool <= budget.fits:
        return Start(
            now,
            f"The buffer pool is {size_text(pool)} (about {now}% of RAM), more than the "
            f"{share}% InnoTune would give it, and it fits, so it stays: InnoTune does not "
            f"shrink a pool that fits. {why}",
        )
    return Start(share, why)


def recommended_redo(facts: HostFacts) -> Start:
    """The redo slider's start: an hour of writes, unless the log already holds that much."""
    server = facts.server
    balanced = slider("redo").position("balanced")
    held = redo_minutes_of(facts)
    if server is not None and held is not None and representative(server) and held >= 60:
        return Start(
            None,
            f"The redo log already holds about {duration_text(held * 60)} of the measured "
            "writes, at least the hour InnoTune recommends, so it keeps its size.",
        )
    return Start(
        balanced.value,
        "About an hour of writes lets InnoDB write pages back in large, calm batches instead "
        "of in a hurry when the log fills; the price is a longer crash recovery (below).",
    )


def _myisam_holds_data(server: ServerFacts) -> bool:
    return any(
        e.engine.lower() == "myisam" and e.tables > 0 and e.data_bytes + e.index_bytes > 0
        for e in server.engines
    )


def starting_points(facts: HostFacts) -> dict[str, Start]:
    """Where each slider starts on this host, and why (slider key -> Start).

    The sliders that trade speed for a resource (memory, redo, the disk and OS fits,
    MyISAM) start at InnoTune's recommendation; crash loss and torn-page protection start
    where the server is now, never at a lossier position.

    Raises:
        ValueError: the facts hold no server.
    """
    server = facts.server
    if server is None:
        raise ValueError("no server in these facts")
    crash = crash_position(server)
    dw = doublewrite_on(server_variable(server, "innodb_doublewrite"))
    starts: dict[str, Start] = {
        "crash_loss": Start(
            crash,
            "InnoTune never lowers durability unless you move this slider.",
            recommended=False,
        ),
        "doublewrite": Start(
            dw,
            "InnoTune changes torn-page protection only if you do.",
            recommended=False,
        ),
        "redo": recommended_redo(facts),
        "binlog": Start(
            True,
            "InnoTune keeps the binary log unless you turn it off here.",
            recommended=False,
        ),
        "fit_disks": Start(
            True,
            "The disk settings follow the disks under the data directory and the measured "
            "sync rate; each change below can be turned down on its own.",
        ),
        "fit_os": Start(
            True,
            "A database host wants its memory kept and its writes flowing steadily; each "
            "change below can be turned down on its own.",
        ),
    }
    memory = recommended_share(facts)
    if memory is not None:
        starts["memory"] = memory
    if _myisam_holds_data(server):
        starts["myisam"] = Start(
            True, "MyISAM tables hold data here, so the key buffer is sized for their indexes."
        )
    else:
        starts["myisam"] = Start(
            False, "No MyISAM table holds data, so the key buffer does not matter for writes."
        )
    return starts


def default_positions(facts: HostFacts) -> SliderPositions:
    """The starting positions: InnoTune's recommendation, durability where the server is.

    The same for the wizard and ``innotune plan`` without slider options (see
    :func:`starting_points`). Sliders the facts say nothing about start at their declared
    default.

    Raises:
        ValueError: the facts hold no server.
    """
    starts: dict[str, Any] = {s.field: s.default for s in sliders()}
    for key, start in starting_points(facts).items():
        starts[slider(key).field] = start.value
    return dataclasses.replace(SliderPositions(), **starts)


# -- the binary log -------------------------------------------------------------------------


def binlog_lock(server: ServerFacts) -> str | None:
    """Why the binary log cannot be turned off here, in a few words; None when it can.

    It is never turned off while replicas are connected or registered, or while any
    connection reads it (a replica's or a tool's dump thread); and InnoTune never turns
    it on, so a binary log that is off already has nothing to offer.
    """
    if not server.binlog_enabled:
        return "the binary log is off already"
    use = server.binlog_use
    users = []
    connected = server.replicas_connected or 0
    registered = use.replica_hosts if use is not None and use.replica_hosts else 0
    replicas = max(connected, registered)
    if replicas:
        users.append(
            count(replicas, "replica") + (" is" if replicas == 1 else " are") + " connected"
        )
    dumps = use.dump_threads if use is not None and use.dump_threads else 0
    if dumps:
        users.append(count(dumps, "connection") + (" reads" if dumps == 1 else " read") + " it now")
    if not users:
        return None
    return " and ".join(users)


def binlog_where(server: ServerFacts) -> str:
    """Where the binary log was turned on: the option-file line, else the server's default."""
    lines = [line for line in server.option_lines if line.name == "log_bin"]
    if lines:
        last = lines[-1]
        return f"line {last.line} of {last.file} turns it on ({last.text})"
    path = next(
        (v.path for v in server.variables if v.name == "log_bin" and v.path),
        None,
    )
    if path:
        return f"{path} turns it on"
    if _version(server).family is Flavour.MYSQL:
        return "MySQL 8.0 and later turn it on by default, and no option file sets it"
    return "no option file InnoTune read sets it, so the server's command line may"


def binlog_found(server: ServerFacts) -> list[str]:
    """What InnoTune found about the binary log's users, one clause each."""
    found: list[str] = []
    use = server.binlog_use
    connected = server.replicas_connected
    registered = use.replica_hosts if use is not None else None
    replicas = max(connected or 0, registered or 0)
    if connected is None and registered is None:
        found.append("whether replicas are connected is unknown")
    else:
        found.append(
            "no replica is connected"
            if not replicas
            else count(replicas, "replica") + (" is" if replicas == 1 else " are") + " connected"
        )
    found.append(
        "this server is itself a replica of another server"
        if server.replica
        else "this server is not a replica"
    )
    dumps = use.dump_threads if use is not None else None
    if dumps is None:
        found.append("who reads the binary log now is unknown")
    else:
        found.append(
            "no connection reads the binary log now"
            if not dumps
            else count(dumps, "connection") + (" reads" if dumps == 1 else " read") + " it now"
        )
    gtid = server_variable(server, "gtid_mode")
    if gtid is not None:
        found.append(f"GTIDs are {'on' if gtid.upper().startswith('ON') else 'off'} ({gtid})")
    else:
        pos = server_variable(server, "gtid_binlog_pos")
        if pos:
            found.append(f"the binary log carries GTIDs (position {pos})")
    if use is not None and use.logs is not None:
        kept = f"{count(use.logs, 'binary log')} kept ({size_text(use.logs_bytes or 0)})"
        first = use.first_log or ""
        number = parse_int(first.rsplit(".", 1)[-1]) if "." in first else None
        if number is not None and number > 1:
            kept += f", the oldest {first}, so older ones were purged (by expiry or a tool)"
        found.append(kept)
    expire = parse_int(server_variable(server, "binlog_expire_logs_seconds"))
    if expire:
        days = expire // 86400
        after = count(days, "day") if days and expire % 86400 == 0 else duration_text(expire)
        found.append(f"binary logs are purged after {after}")
    return found


def redo_minutes_of(facts: HostFacts) -> float | None:
    """How many minutes of the measured redo writes the current log holds."""
    server = facts.server
    if server is None:
        return None
    total, rate = redo_total(server), redo_rate(server)
    if total is None or rate is None:
        return None
    return total / rate / 60


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


def pool_of(plan: Plan, facts: HostFacts) -> int | None:
    """The buffer pool the plan leaves: its proposed size, else the current one."""
    change = plan.change("innodb_buffer_pool_size")
    if change is not None:
        return parse_int(change.proposed)
    if facts.server is None:
        return None
    return parse_int(server_variable(facts.server, "innodb_buffer_pool_size"))


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
