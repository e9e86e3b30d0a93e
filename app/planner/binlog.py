"""The binary log's users and where it was turned on, in words, from the facts."""

from __future__ import annotations

from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import ServerFacts
from app.domain.words import count
from app.planner.context import server_variable
from app.planner.values import duration_text, parse_int, size_text


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
    if ServerVersion.parse(server.version, server.version_comment).family is Flavour.MYSQL:
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
