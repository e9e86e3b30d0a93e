"""The memory budget: how much RAM the buffer pool may take once everything else has its room.

Pure functions of the facts: the OS reserve, the other processes, every connection's
buffers and the server's other memory, and the pool's share of RAM now.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.plan import Plan
from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import ServerFacts
from app.planner.context import server_variable
from app.planner.memorysum import POOL_OVERHEAD as POOL_OVERHEAD
from app.planner.memorysum import MemorySum, Part
from app.planner.values import GIB, MIB, parse_int, size_text

#: Per-connection buffers a busy connection may allocate in full (worst case).
PER_CONNECTION = (
    "sort_buffer_size",
    "join_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "thread_stack",
    "net_buffer_length",
)


#: The server's own memory beside its buffers: threads, caches, dictionary.
SERVER_BASE_BYTES = 128 * MIB


def _version(server: ServerFacts) -> ServerVersion:
    return ServerVersion.parse(server.version, server.version_comment)


def _var_int(server: ServerFacts, name: str, default: int = 0) -> int:
    value = parse_int(server_variable(server, name))
    return default if value is None else value


@dataclass(frozen=True)
class MemoryBudget:
    """How much RAM the buffer pool may take once everything else has its room.

    Every figure said about it comes from ``sum`` (:mod:`app.planner.memorysum`), so the
    words add up.
    """

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
    # Other database servers on the host, at what they may take (their pools, else RSS).
    other_servers: int = 0
    sum: MemorySum = MemorySum(0, ())

    @property
    def connections(self) -> int:
        """All connections' buffers at once."""
        return self.per_connection * self.max_connections

    @property
    def others(self) -> int:
        """Everything beside this server that holds memory: processes and database servers."""
        return self.other_processes + self.other_servers

    def headroom(self, pool: int) -> int:
        """Memory left with this pool and every connection's buffers in use (can be negative)."""
        return self.sum.free(pool)

    def thin(self, pool: int) -> bool:
        """True when what stays free with this pool is too little to absorb a surprise."""
        return self.headroom(pool) < self.thin_below

    @property
    def thin_below(self) -> int:
        """Below this, what stays free is called thin."""
        return max(THIN_HEADROOM, (self.container_limit or self.ram) // 20)

    def free_words(self, pool: int) -> str:
        """What stays free with this pool, said plainly, with the figures that give it."""
        return self.sum.free_words(pool, self.thin_below)

    def words(self) -> str:
        """The budget in one clause, for reasons; its figures add up."""
        return self.sum.fits_words()


#: Below this (or 5% of RAM) what stays free is called thin.
THIN_HEADROOM = 256 * MIB


#: The OS reserve: RAM // divisor, within min..max (carried in PoolRule for exports).
OS_RESERVE_DIVISOR = 10
OS_RESERVE_MIN = 512 * MIB
OS_RESERVE_MAX = 8 * GIB


def os_reserve(ram: int) -> int:
    """What the OS and its page cache keep: 10% of RAM, at least 512 MiB, at most 8 GiB."""
    return int(min(max(ram // OS_RESERVE_DIVISOR, OS_RESERVE_MIN), OS_RESERVE_MAX))


def _argv_pool(argv: tuple[str, ...]) -> int | None:
    """The buffer pool a server was started with on its command line, if it was."""
    for arg in argv:
        name, _, value = arg.partition("=")
        if name.replace("_", "-") == "--innodb-buffer-pool-size" and value:
            return parse_int(value)
    return None


#: A server's buffer pool when neither its command line nor its option files set it.
DEFAULT_POOL = 128 * MIB


def configured_pool(inst: ServerInstance) -> tuple[int, str] | None:
    """The buffer pool another server is set to start with, and where that was read.

    Its command line beats its option files; files read that set none leave the server's
    default (128 MiB on every MySQL and MariaDB line). None when neither was read.
    """
    pool = _argv_pool(inst.argv)
    if pool is not None:
        return pool, "from its command line"
    if inst.files_read:
        pool = parse_int(inst.files_pool)
        if pool is not None:
            return pool, "from its option files"
        if inst.files_pool is None:
            return DEFAULT_POOL, "at the default size (its option files set none)"
    return None


#: max_connections when neither a server's command line nor its option files set it.
DEFAULT_CONNECTIONS = 151


def configured_connections(inst: ServerInstance) -> tuple[int, str]:
    """The connections another server lets in, and where that was read (its default else)."""
    for arg in inst.argv:
        name, _, value = arg.partition("=")
        if name.replace("_", "-") == "--max-connections" and value.isdigit():
            return int(value), " (its command line)"
    if inst.files_connections is not None and inst.files_connections.isdigit():
        return int(inst.files_connections), " (its option files)"
    return DEFAULT_CONNECTIONS, ""


def other_servers(facts: HostFacts, per_conn: int) -> tuple[int, str]:
    """The other database servers on the host, at what they may take, and the words for it.

    Each other mysqld/mariadbd (a process or a container the inspection saw) counts at the
    larger of its buffer pool with its bookkeeping (the pool its command line or option
    files set, :func:`configured_pool`) and its connections' buffers (its max_connections at
    ``per_conn``, this server's buffers per connection: the other's are not read), and its
    resident memory now; within its container's memory limit. A server whose memory was not
    read is named and not counted. The words name each figure and where it came from; they
    add up to the total.
    """
    server = facts.server
    me = server.instance.pid if server is not None else None
    rss = {p.pid: p.rss_bytes for p in facts.os.machine.database_processes}
    total, said, unread = 0, [], []
    seen = set()
    for inst in facts.instances:
        if inst.pid == me or inst.pid in seen:
            continue
        seen.add(inst.pid)
        name = inst.binary.rsplit("/", 1)[-1] or "server"
        who = (
            f"{name} in container {inst.container.name}"
            if inst.container is not None
            else f"{name} pid {inst.pid}"
        )
        configured, resident = configured_pool(inst), rss.get(inst.pid)
        limit = inst.container.memory_limit_bytes if inst.container is not None else None
        pool, where = configured if configured is not None else (0, "")
        with_books = int(pool * POOL_OVERHEAD)
        conns, conns_where = configured_connections(inst)
        buffers = conns * per_conn if configured is not None else 0
        if configured is not None and with_books + buffers >= (resident or 0):
            take = with_books + buffers
            parts = [
                f"its {size_text(pool)} buffer pool {where}",
                f"{size_text(with_books - pool)} of bookkeeping",
            ]
            if buffers:
                # The product only: the per-connection figure is this server's, named
                # once in the sentence, and the part's figures add up to its total.
                parts.append(
                    f"{size_text(buffers)} of buffers for its {conns} connections"
                    f"{conns_where}, at this server's buffers per connection"
                )
            how = ", ".join(parts[:-1]) + " and " + parts[-1]
        elif resident is not None:
            take, how = resident, f"{size_text(resident)} resident now"
            if configured is not None:
                how += f", more than its buffer pool {where} with its bookkeeping and buffers"
            elif not inst.files_read:
                how += " (its option files were not read)"
        else:
            unread.append(who)
            continue
        if limit and take > limit:
            take, how = limit, f"its container's {size_text(limit)} limit"
        total += take
        said.append(f"{who}, {how}")
    for p in facts.os.machine.database_processes:
        if p.pid != me and p.pid not in seen:
            seen.add(p.pid)
            total += p.rss_bytes
            said.append(f"{p.name} pid {p.pid}, {size_text(p.rss_bytes)} resident now")
    said += [
        f"{who} not counted, its memory was not read (inspect again to count it)" for who in unread
    ]
    return total, f": {'; '.join(said)}" if said else ""


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
    servers, servers_words = other_servers(facts, per_conn)
    parts = [
        ("key buffer", keys),
        ("log buffer", _var_int(server, "innodb_log_buffer_size")),
        *_temporary_and_caches(server),
        ("the server itself", SERVER_BASE_BYTES),
    ]
    other_buffers = sum(n for _, n in parts)
    detail = ", ".join(f"{name} {size_text(n)}" for name, n in parts if n)
    connections = Part(
        f"{max_conn} connections x {size_text(per_conn)} of buffers", per_conn * max_conn
    )
    server_part = Part("the server's other memory", other_buffers, f": {detail}" if detail else "")
    reserve = os_reserve(ram)
    host_parts = [Part("the OS", reserve), Part("the other processes seen", others)]
    if servers or servers_words:
        host_parts.append(Part("the other database servers", servers, servers_words))
    host = MemorySum(ram, (*host_parts, connections, server_part))
    chosen = host
    # A server in a container lives within the engine's memory limit: past it the kernel
    # ends the server whatever the host has free. The job refuses a pool above 90% of it.
    container = server.instance.container
    limit = container.memory_limit_bytes if container is not None else None
    binding = None
    if limit:
        inside = MemorySum(limit, (connections, server_part), container=True, cap=limit * 9 // 10)
        if inside.fits < host.fits:
            chosen, binding = inside, limit
    return MemoryBudget(
        ram=ram,
        os_reserve=reserve,
        other_processes=others,
        per_connection=per_conn,
        max_connections=max_conn,
        other_buffers=other_buffers,
        fits=chosen.fits,
        other_parts=tuple(parts),
        container_limit=binding,
        other_servers=servers,
        sum=chosen,
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


def pool_of(plan: Plan, facts: HostFacts) -> int | None:
    """The buffer pool the plan leaves: its proposed size, else the current one."""
    change = plan.change("innodb_buffer_pool_size")
    if change is not None:
        return parse_int(change.proposed)
    if facts.server is None:
        return None
    return parse_int(server_variable(facts.server, "innodb_buffer_pool_size"))
