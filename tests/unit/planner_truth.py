"""What each server line really does with a setting: a truth table that is NOT the catalogue.

The planner reads ``resources/knobs/*.toml``; this table is written separately, from the
sources below, so that a wrong catalogue entry shows up as a failing plan instead of being
checked against itself. Where the two disagree, fix the one the sources contradict.

SOURCES (the key in brackets is quoted beside each fact)

[LIVE-1011]  The Debian MariaDB 10.11.19 on this machine, queried 2026-11-25:
             ``SELECT VARIABLE_NAME, READ_ONLY, NUMERIC_MIN_VALUE FROM
             information_schema.SYSTEM_VARIABLES`` (READ_ONLY=YES: no SET GLOBAL), and
             ``mariadbd --no-defaults --innodb-buffer-pool-instances=4 --verbose --help``:
             "'innodb-buffer-pool-instances' was removed. It does nothing now" (the same for
             innodb-log-files-in-group). tests/integration/test_planner_truth_live.py asks the
             live server again and fails when this table drifts from it.
[LIVE-97]    Oracle MySQL 9.7.4 from Debian sid's mysql-server, booted by the suite
             (tests/hosts/debian_hosts.py), queried 2026-11-25: SET GLOBAL x = @@GLOBAL.x
             (error 1238 "read only": no SET GLOBAL), performance_schema.variables_metadata
             (innodb_redo_log_capacity 8388608..549755813888), and "Unknown system variable"
             for innodb_log_file_size and innodb_log_files_in_group.
             tests/integration/test_planner_truth_live.py asks it again.
[LIVE-1011-IO] The MariaDB 10.11 above: ``SET GLOBAL innodb_io_capacity=60000`` with the max at 2000
             gives warning 1210 "Setting innodb_max_io_capacity to 120000" (the max is moved
             up); ``SET GLOBAL innodb_io_capacity_max=100`` under io_capacity 60000 gives
             "Setting innodb_io_capacity to 100" (io_capacity is moved down).
[MY-SRC-IO]  MySQL ha_innodb.cc, innodb_io_capacity_update(): "innodb_io_capacity cannot be
             set higher than innodb_io_capacity_max." then "Setting innodb_io_capacity to
             <max>" (the new value is clamped to the current max); innodb_io_capacity_max_update():
             "innodb_io_capacity_max cannot be set lower than innodb_io_capacity." (the max is
             clamped up to the current io_capacity). MySQL 8.0, 8.4 and 9.x alike.
[MY-SRC-BP]  MySQL ha_innodb.cc, innodb_buffer_pool_size_validate(): "Cannot update
             innodb_buffer_pool_size to less than 1GB if innodb_buffer_pool_instances > 1."
             (a warning; the pool keeps its size).
[MY-PARAM]   dev.mysql.com/doc/refman/{5.7,8.0,8.4}/en/innodb-parameters.html, each variable's
             "Dynamic" row and minimum: innodb_buffer_pool_size dynamic (5.7.5+), min 5 MiB;
             innodb_log_file_size not dynamic, min 4 MiB (5.7.11+); innodb_log_buffer_size
             dynamic from 8.0 (not in 5.7), min 256 KiB; innodb_redo_log_capacity 8.0.30+,
             dynamic, 8 MiB-128 GiB; innodb_io_capacity min 100, dynamic; innodb_doublewrite
             needs a restart to turn on or off; innodb_flush_method, innodb_write_io_threads
             not dynamic; innodb_use_fdatasync 8.0.26+, dynamic; innodb_flush_log_at_trx_commit
             0, 1, 2; "innodb_log_file_size x innodb_log_files_in_group cannot exceed 512GB".
[MY-IOCAP]   dev.mysql.com/doc/refman/8.4/en/innodb-configuring-io-capacity.html: default 200
             (10000 in 8.4); "a value greater than 20000 is generally not recommended unless
             you have proven that lower values are insufficient".
[MY-BPI]     MySQL manual, innodb_buffer_pool_instances: "This option takes effect only when
             you set innodb_buffer_pool_size to 1GB or more".
[MY-TMP]     MySQL 8.0 manual, "Internal Temporary Table Use in MySQL": the TempTable engine
             takes up to temptable_max_ram (1 GiB by default) for all in-memory temporary
             tables.
[MDB-IVARS]  mariadb.com/kb innodb-system-variables: innodb_log_file_size "Dynamic: Yes
             (>= MariaDB 10.9)", refused below innodb_log_buffer_size; innodb_doublewrite
             dynamic (OFF/ON/fast) from 11.0.6; innodb_buffer_pool_instances and
             innodb_log_files_in_group removed in 10.6.0; innodb_change_buffering removed in
             11.0; innodb_data_file_buffering added in 11.0 (dynamic);
             innodb_flush_log_at_trx_commit also takes 3; innodb_write_io_threads dynamic from
             10.11.
[MDB-ARIA]   mariadb.com/kb aria-system-variables: aria_pagecache_buffer_size, 128 MiB, read-only
             (allocated at start).
[KERNEL-VM]  docs.kernel.org admin-guide/sysctl/vm.rst, dirty_ratio: "a percentage of total
             available memory that contains free pages and reclaimable pages".
"""

from __future__ import annotations

from dataclasses import dataclass, field

KIB, MIB, GIB = 1024, 1024**2, 1024**3

#: The server variables the planner may change, each line's facts below are about these.
PLANNED = (
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_log_buffer_size",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_flush_method",
    "innodb_data_file_buffering",
    "innodb_use_fdatasync",
    "innodb_write_io_threads",
    "key_buffer_size",
)


@dataclass(frozen=True)
class Line:
    """One server release as the sources describe it."""

    flavour: str
    version: str
    absent: frozenset[str]  # variables this release does not have
    restart: frozenset[str]  # variables SET GLOBAL cannot change (read-only while running)
    minimum: dict[str, int] = field(default_factory=dict)
    maximum: dict[str, int] = field(default_factory=dict)
    allowed: dict[str, frozenset[str]] = field(default_factory=dict)
    io_capacity_default: int = 200
    redo_default_total: int = 0  # the whole redo log by default
    io_clamp: str = "mysql"  # how SET GLOBAL on the io_capacity pair resolves a conflict
    log_file_at_least_buffer: bool = False  # innodb_log_file_size >= innodb_log_buffer_size
    memory_extra: str = "temptable"  # temptable (MySQL 8+), tmp (one in-memory tmp table)
    obsolete: frozenset[str] = frozenset()  # options it removed or ignores: lines to remove

    @property
    def mariadb(self) -> bool:
        """True for MariaDB."""
        return self.flavour == "mariadb"


_MYSQL_MIN = {
    "innodb_buffer_pool_size": 5 * MIB,  # [MY-PARAM]
    "innodb_log_file_size": 4 * MIB,  # [MY-PARAM] 5.7.11+
    "innodb_log_buffer_size": 256 * KIB,  # [MY-PARAM]
    "innodb_io_capacity": 100,  # [MY-PARAM]
    "innodb_io_capacity_max": 100,
    "innodb_write_io_threads": 1,
}
_MARIADB_MIN = {
    "innodb_buffer_pool_size": 2 * MIB,  # [LIVE-1011] NUMERIC_MIN_VALUE
    "innodb_log_file_size": 1 * MIB,  # [MDB-IVARS] 10.5/10.6 (4 MiB from 10.8.3)
    "innodb_log_buffer_size": 2 * MIB,  # [LIVE-1011]
    "innodb_io_capacity": 100,  # [LIVE-1011]
    "innodb_io_capacity_max": 100,
    "innodb_write_io_threads": 1,
}
_TRX_MYSQL = frozenset({"0", "1", "2"})
_TRX_MARIADB = frozenset({"0", "1", "2", "3"})
_FLUSH_METHODS = frozenset(
    {"fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC"}
)
_NEIGHBORS = frozenset({"0", "1", "2"})

_MYSQL_RESTART = frozenset(
    {"innodb_log_file_size", "innodb_doublewrite", "innodb_flush_method", "innodb_write_io_threads"}
)


def _mysql(version: str, **kw: object) -> Line:
    base: dict[str, object] = {
        "flavour": "mysql",
        "version": version,
        "minimum": {**_MYSQL_MIN, "innodb_redo_log_capacity": 8 * MIB},
        "maximum": {"innodb_redo_log_capacity": 128 * GIB},
        "allowed": {
            "innodb_flush_log_at_trx_commit": _TRX_MYSQL,
            "innodb_flush_method": _FLUSH_METHODS,
            "innodb_flush_neighbors": _NEIGHBORS,
        },
        "io_clamp": "mysql",  # [MY-SRC-IO]
        "memory_extra": "temptable",  # [MY-TMP]
    }
    base.update(kw)
    return Line(**base)  # type: ignore[arg-type]


def _mariadb(version: str, **kw: object) -> Line:
    base: dict[str, object] = {
        "flavour": "mariadb",
        "version": version,
        "minimum": dict(_MARIADB_MIN),
        "allowed": {
            "innodb_flush_log_at_trx_commit": _TRX_MARIADB,
            "innodb_flush_method": _FLUSH_METHODS,
            "innodb_flush_neighbors": _NEIGHBORS,
        },
        "io_clamp": "mariadb",  # [LIVE-1011-IO]
        "memory_extra": "tmp",
        "redo_default_total": 96 * MIB,  # [LIVE-1011] DEFAULT_VALUE 100663296
    }
    base.update(kw)
    return Line(**base)  # type: ignore[arg-type]


_NO_MYSQL8 = frozenset(
    {"innodb_redo_log_capacity", "innodb_use_fdatasync", "innodb_data_file_buffering"}
)
_MARIADB_ABSENT = frozenset(
    {"innodb_redo_log_capacity", "innodb_use_fdatasync", "innodb_data_file_buffering"}
)

_REMOVED_106 = frozenset({"innodb_buffer_pool_instances", "innodb_log_files_in_group"})

LINES: tuple[Line, ...] = (
    _mysql(
        "5.7.44",
        absent=_NO_MYSQL8,
        restart=_MYSQL_RESTART | {"innodb_log_buffer_size"},  # [MY-PARAM] 5.7: not dynamic
        redo_default_total=2 * 48 * MIB,
        memory_extra="tmp",  # 5.7 has no TempTable engine
    ),
    _mysql(
        "8.0.28",
        absent=frozenset({"innodb_redo_log_capacity", "innodb_data_file_buffering"}),
        restart=_MYSQL_RESTART,
        redo_default_total=2 * 48 * MIB,
    ),
    _mysql(
        "8.0.36",
        absent=frozenset({"innodb_data_file_buffering"}),
        restart=_MYSQL_RESTART,
        redo_default_total=100 * MIB,
    ),
    _mysql(
        "8.4.3",
        absent=frozenset({"innodb_data_file_buffering"}),
        restart=_MYSQL_RESTART,
        redo_default_total=100 * MIB,
        io_capacity_default=10000,  # [MY-IOCAP]
    ),
    _mysql(
        "9.7.4",  # [LIVE-97] Debian sid's mysql-server, asked by test_planner_truth_live.py
        absent=frozenset(
            {"innodb_data_file_buffering", "innodb_log_file_size", "innodb_log_files_in_group"}
        ),
        restart=_MYSQL_RESTART - {"innodb_log_file_size"},
        maximum={"innodb_redo_log_capacity": 512 * GIB},  # [LIVE-97] variables_metadata
        redo_default_total=100 * MIB,
        io_capacity_default=10000,
        obsolete=frozenset({"innodb_log_file_size", "innodb_log_files_in_group"}),
    ),
    _mariadb(
        "10.5.27",
        absent=_MARIADB_ABSENT,
        # [MDB-IVARS]: ignored from 10.5.1 / 10.5.2 (one buffer pool, one log file)
        obsolete=frozenset({"innodb_buffer_pool_instances", "innodb_log_files_in_group"}),
        restart=frozenset(
            {
                "innodb_log_file_size",  # [MDB-IVARS] dynamic only from 10.9
                "innodb_log_buffer_size",
                "innodb_doublewrite",
                "innodb_flush_method",
                "innodb_write_io_threads",
            }
        ),
    ),
    _mariadb(
        "10.6.16",
        absent=_MARIADB_ABSENT,
        obsolete=_REMOVED_106,
        restart=frozenset(
            {
                "innodb_log_file_size",
                "innodb_log_buffer_size",
                "innodb_doublewrite",
                "innodb_flush_method",
                "innodb_write_io_threads",
            }
        ),
    ),
    _mariadb(
        "10.11.19",
        absent=_MARIADB_ABSENT,
        obsolete=_REMOVED_106,  # [LIVE-1011] "was removed. It does nothing now"
        # [LIVE-1011]: READ_ONLY=YES for exactly these of PLANNED
        restart=frozenset({"innodb_log_buffer_size", "innodb_doublewrite", "innodb_flush_method"}),
        minimum={**_MARIADB_MIN, "innodb_log_file_size": 4 * MIB, "innodb_write_io_threads": 2},
        log_file_at_least_buffer=True,  # [MDB-IVARS]
    ),
    _mariadb(
        "11.4.5",
        obsolete=_REMOVED_106 | {"innodb_change_buffering"},  # [MDB-IVARS] removed in 11.0
        absent=frozenset({"innodb_redo_log_capacity", "innodb_use_fdatasync"}),
        restart=frozenset(
            {"innodb_log_buffer_size", "innodb_flush_method"}
        ),  # doublewrite: 11.0.6+
        minimum={**_MARIADB_MIN, "innodb_log_file_size": 4 * MIB, "innodb_write_io_threads": 2},
        log_file_at_least_buffer=True,
    ),
    _mariadb(
        "11.8.2",
        obsolete=_REMOVED_106 | {"innodb_change_buffering"},
        absent=frozenset({"innodb_redo_log_capacity", "innodb_use_fdatasync"}),
        restart=frozenset({"innodb_log_buffer_size", "innodb_flush_method"}),
        minimum={**_MARIADB_MIN, "innodb_log_file_size": 4 * MIB, "innodb_write_io_threads": 2},
        log_file_at_least_buffer=True,
    ),
)

#: Lines between catalogue lines, planned with the older line's facts (checked on their own).
BETWEEN: tuple[Line, ...] = (
    _mariadb(
        "10.10.7",
        absent=_MARIADB_ABSENT,
        obsolete=_REMOVED_106,
        restart=frozenset(
            {
                "innodb_log_buffer_size",
                "innodb_doublewrite",
                "innodb_flush_method",
                "innodb_write_io_threads",
            }
        ),  # innodb_log_file_size is dynamic from 10.9 [MDB-IVARS]
        minimum={**_MARIADB_MIN, "innodb_log_file_size": 4 * MIB},
        log_file_at_least_buffer=True,
    ),
)


def set_io_pair(line: Line, now: dict[str, int], key: str, value: int) -> list[str]:
    """One SET GLOBAL on the io_capacity pair, as the server does it; the warnings it gives.

    MySQL clamps the value being set [MY-SRC-IO]; MariaDB 10.11 moves the other one
    [LIVE-1011-IO]. Either way a warning means the statement did not do what it said.
    """
    cap, cap_max = now["innodb_io_capacity"], now["innodb_io_capacity_max"]
    if key == "innodb_io_capacity" and value > cap_max:
        if line.io_clamp == "mysql":
            now["innodb_io_capacity"] = cap_max
        else:
            now["innodb_io_capacity"] = value
            now["innodb_io_capacity_max"] = value * 2
        return [f"{key} {value} above the max {cap_max}"]
    if key == "innodb_io_capacity_max" and value < cap:
        if line.io_clamp == "mysql":
            now["innodb_io_capacity_max"] = cap
        else:
            now["innodb_io_capacity_max"] = value
            now["innodb_io_capacity"] = value
        return [f"{key} {value} below io_capacity {cap}"]
    now[key] = value
    return []
