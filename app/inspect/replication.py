"""Replication facts: whether the server is a replica, and who uses its binary log."""

from __future__ import annotations

from app.domain.errors import InnoTuneError
from app.domain.facts import Unknown
from app.domain.serverfacts import BinlogUse
from app.mysql.session import Session

REPLICA = ("SHOW REPLICA STATUS", "SHOW SLAVE STATUS")
REPLICA_HOSTS = ("SHOW REPLICAS", "SHOW SLAVE HOSTS")
DUMP_THREADS = (
    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
)


def binlog_use(session: Session, enabled: bool, unknown: list[Unknown]) -> BinlogUse:
    """Who uses the binary log: registered replicas, dump threads, the logs kept.

    SHOW REPLICAS is MySQL 8.0.22+'s name (MariaDB and older MySQL: SHOW SLAVE HOSTS); a
    replica registers itself only when it connects, and a dump thread is any client
    reading the binary log now (a replica, or a tool such as Debezium or mysqlbinlog).
    """
    hosts: int | None = None
    problem = ""
    for sql in REPLICA_HOSTS:
        try:
            hosts = len(session.query(sql))
            break
        except InnoTuneError as exc:
            problem = exc.problem
    if hosts is None:
        unknown.append(Unknown("the replicas registered with this server", problem))
    dumps: int | None = None
    try:
        rows = session.query(DUMP_THREADS)
        dumps = int(rows[0][0] or 0) if rows else 0
    except InnoTuneError as exc:
        unknown.append(Unknown("who reads the binary log now", exc.problem))
    if not enabled:
        return BinlogUse(replica_hosts=hosts, dump_threads=dumps)
    try:
        logs = session.query("SHOW BINARY LOGS")
    except InnoTuneError as exc:
        unknown.append(Unknown("the binary logs kept", exc.problem))
        return BinlogUse(replica_hosts=hosts, dump_threads=dumps)
    size = sum(int(r[1] or 0) for r in logs if len(r) > 1 and (r[1] or "0").isdigit())
    return BinlogUse(
        replica_hosts=hosts,
        dump_threads=dumps,
        logs=len(logs),
        first_log=logs[0][0] if logs else None,
        logs_bytes=size,
    )
