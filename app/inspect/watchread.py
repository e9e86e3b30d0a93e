"""What a watch reads each round: status counters, performance_schema timers, the datadir's disk.

Reading goes through a database session and the target's Transport; the parsers
(:func:`parse_diskstats`, :func:`choose_disk`) are pure, and tested on outputs recorded from
the live servers (tests/fixtures/watch/).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from app.domain.pace import parse_schedstat
from app.domain.watch import STATUS_NAMES
from app.mysql.session import Session
from app.remote.transport import Transport

#: /proc/diskstats fields after major, minor and name (the kernel's iostats.rst), by the
#: name a watch keeps; flushes are fields 16 and 17 (kernel 5.5 and later).
DISKSTATS_FIELDS = {
    "writes": 4,
    "sectors_written": 6,
    "write_ms": 7,
    "io_ms": 9,
    "flushes": 15,
    "flush_ms": 16,
}

#: Whole disks that are never the datadir's: loop devices, RAM disks, compressed swap, CDs.
_NOT_DISKS = ("loop", "ram", "zram", "sr", "fd", "nbd")

#: The write statements whose mean time is the statement latency (performance_schema).
WRITE_STATEMENTS = (
    "statement/sql/insert",
    "statement/sql/insert_select",
    "statement/sql/update",
    "statement/sql/update_multi",
    "statement/sql/delete",
    "statement/sql/delete_multi",
    "statement/sql/replace",
    "statement/sql/replace_select",
    "statement/sql/commit",
)


def read_status(session: Session) -> dict[str, int]:
    """The counters of :data:`STATUS_NAMES` the server has, as integers."""
    listed = ", ".join(f"'{n}'" for n in STATUS_NAMES)
    rows = session.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({listed})")  # noqa: S608
    out = {}
    for row in rows:
        if row and row[0] and row[1] is not None and str(row[1]).isdigit():
            out[str(row[0])] = int(str(row[1]))
    return out


def read_timers(session: Session) -> dict[str, int]:
    """performance_schema's read-write transactions and write statements: counts, sums (ps).

    Empty when the tables cannot be read (performance_schema off).
    """
    from app.domain.errors import InnoTuneError

    out: dict[str, int] = {}
    try:
        rows = session.query(
            "SELECT COUNT_READ_WRITE, SUM_TIMER_READ_WRITE FROM "
            "performance_schema.events_transactions_summary_global_by_event_name "
            "WHERE EVENT_NAME = 'transaction'"
        )
        if rows and rows[0][0] is not None and rows[0][1] is not None:
            out["commit_count"] = int(str(rows[0][0]))
            out["commit_ps"] = int(str(rows[0][1]))
        listed = ", ".join(f"'{n}'" for n in WRITE_STATEMENTS)
        rows = session.query(
            "SELECT COALESCE(SUM(COUNT_STAR), 0), COALESCE(SUM(SUM_TIMER_WAIT), 0) FROM "  # noqa: S608
            "performance_schema.events_statements_summary_global_by_event_name "
            f"WHERE EVENT_NAME IN ({listed})"
        )
        if rows and rows[0][0] is not None and rows[0][1] is not None:
            out["statement_count"] = int(float(str(rows[0][0])))
            out["statement_ps"] = int(float(str(rows[0][1])))
    except InnoTuneError:
        return {}
    return out


def timers_note(session: Session, flavour: str) -> tuple[bool, str]:
    """Whether the latencies can be read, and where they come from (or why not), in words."""
    rows = session.query("SELECT @@performance_schema")
    on = bool(rows) and str(rows[0][0]) in ("1", "ON")
    if not on:
        restart = " (turning it on takes a restart)" if flavour == "mariadb" else ""
        return False, (
            f"performance_schema is off on this server{restart}: no commit or statement "
            "latency, the counters only"
        )
    from app.domain.errors import InnoTuneError

    try:
        rows = session.query(
            "SELECT ENABLED, TIMED FROM performance_schema.setup_instruments "
            "WHERE NAME = 'transaction'"
        )
    except InnoTuneError as exc:  # e.g. an account without access to performance_schema
        return False, f"performance_schema could not be read ({exc.problem}): the counters only"
    transactions = bool(rows) and rows[0][0] == "YES" and rows[0][1] == "YES"
    what = "read-write transactions and write statements" if transactions else "write statements"
    return True, f"latencies from performance_schema ({what})"


@dataclass(frozen=True)
class DiskChoice:
    """The disk a watch reads: its name in /proc/diskstats ("" none) and how it was found.

    ``own`` is False when the datadir's filesystem has no disk of its own and the machine's
    only disk was taken: everything else on the machine writes there too.
    """

    device: str
    note: str
    own: bool = True


def disk_script(path: str) -> list[str]:
    """The command that shows where ``path`` lives: its st_dev, mounts, disks, diskstats."""
    script = (
        'stat -L -c %d "$1"; echo ---; cat /proc/self/mountinfo; echo ---; ls /sys/block; '
        "echo ---; cat /proc/diskstats"
    )
    return ["sh", "-c", script, "sh", path]


def choose_disk(output: str, datadir: str) -> DiskChoice:
    """Which /proc/diskstats line is the datadir's disk, from :func:`disk_script`'s output.

    The device number of the datadir names it when it is a block device. On an overlay or
    another filesystem without a disk of its own (a container's), the machine's only whole
    disk is taken, and the note says so; with several, none is.
    """
    parts = output.split("---\n")
    if len(parts) < 4 or not parts[0].strip().isdigit():
        return DiskChoice("", f"the disk under {datadir} could not be found")
    dev = int(parts[0].strip())
    major, minor = os.major(dev), os.minor(dev)
    stats = parse_all_diskstats(parts[3])
    for name, (maj, mino, _fields) in stats.items():
        if (maj, mino) == (major, minor):
            return DiskChoice(name, f"{name}, the disk under {datadir}")
    fstype = ""
    for line in parts[1].splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[2] == f"{major}:{minor}" and "-" in fields:
            fstype = fields[fields.index("-") + 1]
            break
    disks = [name for name in parts[2].split() if not name.startswith(_NOT_DISKS) and name in stats]
    kind = f"an {fstype} filesystem" if fstype[:1] in tuple("aeiou") else f"a {fstype} filesystem"
    kind = kind if fstype else "a filesystem without a disk of its own"
    if len(disks) == 1:
        return DiskChoice(
            disks[0],
            f"{disks[0]}: {datadir} is on {kind}, and {disks[0]} is the machine's only disk "
            "(shared with everything on the machine: its figures are shown, not judged)",
            own=False,
        )
    return DiskChoice(
        "",
        f"{datadir} is on {kind} and the machine has {len(disks)} disks: no disk figures",
    )


def parse_all_diskstats(text: str) -> dict[str, tuple[int, int, list[int]]]:
    """Every /proc/diskstats line: name → (major, minor, the statistics fields)."""
    out = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 14 or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        try:
            numbers = [int(f) for f in fields[3:]]
        except ValueError:
            continue
        out[fields[2]] = (int(fields[0]), int(fields[1]), numbers)
    return out


def parse_diskstats(text: str, device: str) -> dict[str, int]:
    """The fields of :data:`DISKSTATS_FIELDS` of ``device`` (empty: no such line).

    A kernel before 5.5 has no flush fields: they are left out.
    """
    found = parse_all_diskstats(text).get(device)
    if found is None:
        return {}
    numbers = found[2]
    return {name: numbers[i] for name, i in DISKSTATS_FIELDS.items() if i < len(numbers)}


def locate_disk(transport: Transport, path: str, *, sudo: bool) -> DiskChoice:
    """Find the datadir's disk on the target (``path``: the datadir as the host sees it)."""
    result = transport.run(disk_script(path), sudo=sudo, timeout=30)
    if not result.ok:
        return DiskChoice("", f"the disk under {path} could not be found: {result.err.strip()}")
    return choose_disk(result.out, path)


def read_disk(transport: Transport, device: str) -> dict[str, int]:
    """The datadir disk's counters now (empty: no disk known)."""
    if not device:
        return {}
    return parse_diskstats(transport.read_file("/proc/diskstats").decode(), device)


def read_server_cpu(transport: Transport, pid: int | None) -> dict[str, int]:
    """The server's threads' time on a CPU and waiting for one, now (empty: not readable).

    ``/proc/PID/task/*/schedstat`` is readable by everyone: no sudo.
    """
    from app.domain.errors import InnoTuneError

    if not pid:
        return {}
    script = 'cat "/proc/$1"/task/*/schedstat 2>/dev/null || true'
    try:
        result = transport.run(["sh", "-c", script, "sh", str(pid)], timeout=20)
    except InnoTuneError:
        return {}
    return parse_schedstat(result.out)
