"""Gathering the server's facts through a database session, in a fixed number of queries.

No query is per table or per variable, so the cost does not grow with the schema. The
queries travel in batches (one round trip for the variables and what goes with them, one
for the status sample), and the commands the inspection runs on the host are sent before
the status is read, so they run while the database answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from app.domain.errors import InnoTuneError
from app.domain.facts import Unknown
from app.domain.instance import ServerInstance
from app.domain.server import ServerVersion, VersionError
from app.domain.serverfacts import (
    BinlogUse,
    EngineUse,
    ErrorLog,
    OptionLine,
    Rates,
    ServerFacts,
    Variable,
)
from app.domain.service import ServiceInfo
from app.inspect.systemd import service_from, systemd_argv_for
from app.mysql.session import Outcome, Row, Session, query_many
from app.optionfiles import (
    TopFile,
    batch_argv,
    batch_reader,
    parse_argv,
    read_config,
    resolve,
    search_order,
    server_groups,
)
from app.remote.transport import Pending, Transport, flush, submit

Prefetched = dict[str, Outcome]
"""Answers already fetched in a batch, by statement; each is used once."""


def ask(session: Session, sql: str, pre: Prefetched | None = None) -> list[Row]:
    """The rows of ``sql``: from ``pre`` when the batch fetched them, else asked now.

    Raises:
        InnoTuneError: the statement failed (in the batch, or now).
    """
    if pre is not None and sql in pre:
        outcome = pre.pop(sql)
        if isinstance(outcome, InnoTuneError):
            raise outcome
        return outcome
    return session.query(sql)


def prefetch(session: Session, statements: list[str], pre: Prefetched) -> None:
    """Ask ``statements`` in one round trip; keep their answers in ``pre``."""
    pre.update(zip(statements, query_many(session, statements), strict=True))


# Where Debian, Ubuntu and the EL family keep their drop-in option files.
INCLUDE_DIRS = (
    "/etc/mysql/conf.d",
    "/etc/mysql/mariadb.conf.d",
    "/etc/mysql/mysql.conf.d",
    "/etc/my.cnf.d",
)

WRITE_COUNTERS = (
    "Com_insert",
    "Com_insert_select",
    "Com_update",
    "Com_update_multi",
    "Com_delete",
    "Com_delete_multi",
    "Com_replace",
    "Com_replace_select",
    "Com_load",
)


def flavour_of(version: str, comment: str) -> str:
    """mariadb, percona or mysql, from VERSION() and @@version_comment."""
    try:
        return str(ServerVersion.parse(version, comment).flavour)
    except VersionError:
        return "mariadb" if "mariadb" in version.lower() else "mysql"


def _rate(
    before: dict[str, str], after: dict[str, str], names: tuple[str, ...], secs: float
) -> float | None:
    total = 0
    seen = False
    for name in names:
        if name in before and name in after:
            try:
                total += int(after[name]) - int(before[name])
            except ValueError:
                continue
            seen = True
    if not seen or secs <= 0:
        return None
    return max(total, 0) / secs


def compute_rates(before: dict[str, str], after: dict[str, str], seconds: float) -> Rates:
    """Per-second rates from two samples of SHOW GLOBAL STATUS ``seconds`` apart (pure).

    A counter that went backwards (the server restarted between samples) counts as zero.
    """
    reads = _rate(before, after, ("Innodb_buffer_pool_reads",), 1.0)
    requests = _rate(before, after, ("Innodb_buffer_pool_read_requests",), 1.0)
    hit = None
    if reads is not None and requests:
        hit = max(0.0, 1.0 - reads / requests)
    return Rates(
        seconds=seconds,
        transactions_per_s=_rate(before, after, ("Handler_commit",), seconds) or 0.0,
        writes_per_s=_rate(before, after, WRITE_COUNTERS, seconds) or 0.0,
        # The LSN counts redo bytes generated (MariaDB, Percona); MySQL has only the writes.
        redo_bytes_per_s=_rate(before, after, ("Innodb_lsn_current",), seconds)
        if "Innodb_lsn_current" in after
        else _rate(before, after, ("Innodb_os_log_written",), seconds),
        pages_written_per_s=_rate(before, after, ("Innodb_pages_written",), seconds),
        data_fsyncs_per_s=_rate(before, after, ("Innodb_data_fsyncs",), seconds),
        log_fsyncs_per_s=_rate(before, after, ("Innodb_os_log_fsyncs",), seconds),
        buffer_pool_hit_rate=hit,
        log_waits=_delta(before, after, "Innodb_log_waits"),
    )


def _delta(before: dict[str, str], after: dict[str, str], name: str) -> int | None:
    """How much a counter grew between the samples (None: not reported; a restart: 0)."""
    try:
        return max(0, int(after[name]) - int(before[name]))
    except (KeyError, ValueError):
        return None


def dirty_share(status: dict[str, str]) -> float | None:
    """The share of buffer-pool pages that are dirty."""
    try:
        dirty = int(status["Innodb_buffer_pool_pages_dirty"])
        total = int(status["Innodb_buffer_pool_pages_total"])
    except (KeyError, ValueError):
        return None
    return dirty / total if total else None


def parse_default_files(help_text: str) -> tuple[str, ...]:
    """The option files from `mysqld --verbose --help`'s "Default options are read…" line."""
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Default options are read from the following files"):
            if i + 1 < len(lines):
                return tuple(lines[i + 1].split())
    return ()


def error_log_of(variables: dict[str, str], instance: ServerInstance) -> ErrorLog:
    """Where error messages go, from log_error, the instance's arguments and how it started."""
    log_error = (variables.get("log_error") or "").strip()
    datadir = variables.get("datadir", "")
    if log_error and log_error != "stderr":
        path = log_error if log_error.startswith("/") else f"{datadir.rstrip('/')}/{log_error}"
        return ErrorLog("file", path, f"sudo tail -n 50 {path}")
    if instance.container is not None:
        c = instance.container
        return ErrorLog("container", None, f"sudo {c.engine} logs --tail 50 {c.name}")
    if instance.started_by == "systemd" and instance.service:
        return ErrorLog("journal", None, f"sudo journalctl -u {instance.service} -n 50 --no-pager")
    if "--skip-log-error" in instance.argv or instance.started_by in ("sysv", "mysqld_safe"):
        # Debian's mysqld_safe runs with `syslog`: the lines go to the system log.
        name = instance.binary.rsplit("/", 1)[-1] or "mysqld"
        return ErrorLog(
            "syslog",
            "/var/log/syslog",
            f"sudo grep -E '{name}|mysqld' /var/log/syslog | tail -n 50 (or journalctl -t {name})",
        )
    return ErrorLog(
        "stderr", None, "the server writes to the standard error of whatever started it"
    )


_SYSTEM = "('mysql', 'information_schema', 'performance_schema', 'sys')"
_COUNT_USER_TABLES = (
    f"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN {_SYSTEM}"  # noqa: S608
)
# Partitions, full-text index tables and temporary tables are InnoDB's own, not user tables.
_COUNT_INNODB_TABLES = (
    "SELECT COUNT(*) FROM information_schema.INNODB_SYS_TABLES WHERE NAME LIKE '%/%' "
    "AND NAME NOT LIKE 'mysql/%' AND NAME NOT LIKE 'sys/%' AND NAME NOT LIKE '%/FTS\\_%' "
    "AND NAME NOT LIKE '%#P#%' AND NAME NOT LIKE '%#p#%' AND NAME NOT LIKE '%/#sql%'"
)
_PER_ENGINE = (
    "SELECT ENGINE, COUNT(*), COALESCE(SUM(DATA_LENGTH), 0), "
    "COALESCE(SUM(INDEX_LENGTH), 0) FROM information_schema.TABLES "
)
_PLAIN_ENGINES = (
    _PER_ENGINE + f"WHERE TABLE_SCHEMA NOT IN {_SYSTEM} AND ENGINE IS NOT NULL GROUP BY ENGINE"  # noqa: S608
)
_INNODB_BYTES = (
    "SELECT COALESCE(SUM(FILE_SIZE), 0) FROM information_schema.INNODB_SYS_TABLESPACES "
    "WHERE NAME LIKE '%/%' AND NAME NOT LIKE 'mysql/%'"
)
_ORIGINS = {
    "mariadb": (
        "SELECT LOWER(VARIABLE_NAME), GLOBAL_VALUE_ORIGIN, GLOBAL_VALUE_PATH "
        "FROM information_schema.SYSTEM_VARIABLES"
    ),
    "mysql": (
        "SELECT VARIABLE_NAME, VARIABLE_SOURCE, VARIABLE_PATH "
        "FROM performance_schema.variables_info"
    ),
}
_REPLICA = ("SHOW REPLICA STATUS", "SHOW SLAVE STATUS")
_REPLICA_HOSTS = ("SHOW REPLICAS", "SHOW SLAVE HOSTS")
_DUMP_THREADS = (
    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
)


def _uses_dictionary(flavour: str, version: str) -> bool:
    """Whether engine use is counted from InnoDB's dictionary (MariaDB, MySQL 5.x)."""
    return flavour == "mariadb" or version.startswith("5.")


def _guess(announced: str) -> tuple[str, str]:
    """(flavour, version) from the version the server announced at login."""
    flavour = "mariadb" if "mariadb" in announced.lower() else "mysql"
    return flavour, announced.removeprefix("5.5.5-")


def first_batch(announced: str) -> list[str]:
    """The statements read in one round trip with SHOW GLOBAL VARIABLES.

    Which ones is guessed from the version the server announced at login (no guess: the
    variables alone). A wrong guess costs queries later, never a wrong fact: what is used
    is chosen from the variables themselves.
    """
    if not announced:
        return ["SHOW GLOBAL VARIABLES"]
    return ["SHOW GLOBAL VARIABLES", _ORIGINS[_guess(announced)[0]]]


def last_batch(announced: str) -> list[str]:
    """The statements read with the (last) status sample: replication and engine counts.

    They come after the sampling window, as they always did, so tables made meanwhile count.
    """
    statements = ["SHOW GLOBAL STATUS", _REPLICA[0]]
    if announced:
        flavour, version = _guess(announced)
        if _uses_dictionary(flavour, version):
            statements += [_INNODB_BYTES, _COUNT_USER_TABLES, _COUNT_INNODB_TABLES]
        else:
            statements.append(_PLAIN_ENGINES)
    return statements


def engine_use(
    session: Session, flavour: str, version: str, pre: Prefetched | None = None
) -> list[EngineUse]:
    """Tables and bytes per storage engine in user schemas, in a few queries whatever the count.

    Asking information_schema.TABLES for sizes makes MariaDB and MySQL 5.7 open every
    table (seconds with tens of thousands). So: every table name (a directory scan), minus
    the InnoDB tables InnoDB's own dictionary lists with their file sizes, leaves the few
    other tables, whose sizes are then asked for by name. MySQL 8.0+ keeps sizes in its
    data dictionary, so one query is cheap there.
    """
    if not _uses_dictionary(flavour, version):
        return _engine_rows(ask(session, _PLAIN_ENGINES, pre))
    try:
        return _engine_use_from_dictionary(session, pre)
    except InnoTuneError:
        # InnoDB's dictionary tables need PROCESS; the slow query needs only SELECT.
        return _engine_rows(ask(session, _PLAIN_ENGINES, pre))


def _engine_use_from_dictionary(session: Session, pre: Prefetched | None) -> list[EngineUse]:
    innodb_bytes = 0
    for (size,) in ask(session, _INNODB_BYTES, pre):
        innodb_bytes = int(size or 0)
    # Counting is a directory scan; when every user table is InnoDB, that is all it takes.
    total = int(ask(session, _COUNT_USER_TABLES, pre)[0][0] or 0)
    innodb_count = int(ask(session, _COUNT_INNODB_TABLES, pre)[0][0] or 0)
    if total == innodb_count:
        return _engine_rows([("InnoDB", str(total), str(innodb_bytes), "0")] if total else [])
    names = session.query(
        f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "  # noqa: S608
        f"WHERE TABLE_SCHEMA NOT IN {_SYSTEM}"
    )
    innodb: set[tuple[str, str]] = set()
    for (name,) in session.query("SELECT NAME FROM information_schema.INNODB_SYS_TABLES"):
        schema, _, table = (name or "").partition("/")
        table = table.split("#P#")[0].split("#p#")[0]
        if table and schema not in ("mysql", "sys") and not table.startswith(("FTS_", "#sql")):
            innodb.add((decode_filename(schema), decode_filename(table)))
    others: dict[str, list[str]] = {}
    innodb_tables = 0
    for row_schema, row_table in names:
        if row_schema is None or row_table is None:
            continue
        if (row_schema, row_table) in innodb:
            innodb_tables += 1
        else:
            others.setdefault(row_schema, []).append(row_table)
    rows: list[tuple[str | None, ...]] = []
    for schema, tables in sorted(others.items()):
        for start in range(0, len(tables), 500):
            chunk = tables[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            sql = _PER_ENGINE + f"WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN ({marks})"
            rows += session.query(sql + " AND ENGINE IS NOT NULL GROUP BY ENGINE", [schema, *chunk])
    if innodb_tables:
        # Table files hold data and indexes together; the split is not known cheaply.
        rows.append(("InnoDB", str(innodb_tables), str(innodb_bytes), "0"))
    return _engine_rows(rows)


def _engine_rows(rows: list[tuple[str | None, ...]]) -> list[EngineUse]:
    merged: dict[str, list[int]] = {}
    for engine, count, data, index in rows:
        slot = merged.setdefault(engine or "", [0, 0, 0])
        slot[0] += int(count or 0)
        slot[1] += int(float(data or 0))
        slot[2] += int(float(index or 0))
    uses = [EngineUse(e, n, d, i) for e, (n, d, i) in merged.items()]
    return sorted(uses, key=lambda u: (-(u.data_bytes + u.index_bytes), u.engine))


def decode_filename(name: str) -> str:
    """Undo the server's file-name encoding of schema and table names (@0020 is a space)."""
    out, i = [], 0
    while i < len(name):
        if name[i] == "@" and i + 5 <= len(name):
            code = name[i + 1 : i + 5]
            try:
                out.append(chr(int(code, 16)))
                i += 5
                continue
            except ValueError:
                pass
        out.append(name[i])
        i += 1
    return "".join(out)


def _variables_with_origin(
    session: Session,
    flavour: str,
    values: dict[str, str],
    unknown: list[Unknown],
    pre: Prefetched | None = None,
) -> tuple[Variable, ...]:
    origins: dict[str, tuple[str | None, str | None]] = {}
    sql = _ORIGINS["mariadb" if flavour == "mariadb" else "mysql"]
    try:
        for name, origin, path in ask(session, sql, pre):
            if name:
                origins[name.lower()] = (origin, path or None)
    except InnoTuneError as exc:
        unknown.append(Unknown("where each variable was set", exc.problem))
    return tuple(
        Variable(name, value, *origins.get(name, (None, None)))
        for name, value in sorted(values.items())
    )


def _query_pairs(session: Session, sql: str, pre: Prefetched | None = None) -> dict[str, str]:
    return {str(k): v or "" for k, v, *_ in ask(session, sql, pre) if k is not None}


def gather_server_facts(
    session: Session,
    instance: ServerInstance,
    transport: Transport | None = None,
    *,
    sample_seconds: float = 10.0,
    say: Callable[[str], None] = lambda _t: None,
    sleep: Callable[[float], None] = time.sleep,
    on_variables: Callable[[dict[str, str]], None] = lambda _values: None,
) -> ServerFacts:
    """Read the chosen instance's facts; what cannot be read is listed as unknown.

    ``on_variables`` is called with the server's variables as soon as they are read; what
    it submits on ``transport`` goes out with the server's own commands, in one round
    trip, before the status is read.
    """
    unknown: list[Unknown] = []
    pre: Prefetched = {}
    say("Reading the server's variables")
    announced = str(getattr(session, "server_version", "") or "")
    prefetch(session, first_batch(announced), pre)
    values = _query_pairs(session, "SHOW GLOBAL VARIABLES", pre)
    version = values.get("version", "")
    comment = values.get("version_comment", "")
    flavour = flavour_of(version, comment)
    on_variables(values)

    help_run: Pending | None = None
    option_files: tuple[str, ...] = ()
    if instance.defaults_file:
        option_files = (instance.defaults_file,)
    elif transport is not None and instance.binary:
        say("Asking the server binary which option files it reads")
        # --no-defaults keeps its own options out; the list it prints is the default order.
        argv = [instance.binary, "--no-defaults", "--verbose", "--help"]
        help_run = submit(transport, argv, timeout=60)
    systemd_run: Pending | None = None
    if transport is not None and instance.started_by == "systemd" and instance.service:
        say(f"Asking systemd about {instance.service}")
        systemd_run = submit(transport, systemd_argv_for(instance.service), timeout=20)
    lines_run: Pending | None = None
    if transport is not None:
        # The option files' lines travel with the commands above: the usual places now,
        # whatever they include later (read on its own when the batch did not cover it).
        guess = _option_tops(instance, flavour, option_files)
        wanted = [t.path for t in guess] + list(INCLUDE_DIRS)
        lines_run = submit(transport, batch_argv(wanted), timeout=30)
        flush(transport)

    variables = _variables_with_origin(session, flavour, values, unknown, pre)

    say("Reading status counters")
    rates = None
    if sample_seconds > 0:
        first = _query_pairs(session, "SHOW GLOBAL STATUS")
        first_at = time.monotonic()
        say(f"Sampling write rates for {sample_seconds:g} s")
        sleep(sample_seconds)
        prefetch(session, last_batch(announced), pre)
        last = _query_pairs(session, "SHOW GLOBAL STATUS", pre)
        rates = compute_rates(first, last, time.monotonic() - first_at)
    else:
        prefetch(session, last_batch(announced), pre)
        last = _query_pairs(session, "SHOW GLOBAL STATUS", pre)

    say("Counting tables per storage engine")
    engines: list[EngineUse] = []
    try:
        engines = engine_use(session, flavour, version, pre)
    except InnoTuneError as exc:
        unknown.append(Unknown("storage engines in use", exc.problem))

    replica = False
    for sql in _REPLICA:
        try:
            replica = bool(ask(session, sql, pre))
            break
        except InnoTuneError as exc:
            last_error = exc.problem
    else:
        unknown.append(Unknown("whether this server is a replica", last_error))
    connected = last.get("Slaves_connected") or last.get("Replicas_connected")
    binlog_on = values.get("log_bin", "OFF").upper() in ("ON", "1")
    say("Asking who uses the binary log")
    binlog = binlog_use(session, binlog_on, unknown)

    if help_run is not None:
        try:
            result = help_run.result()
            option_files = parse_default_files(result.out)
            why = result.err.strip()[:200]
        except InnoTuneError as exc:
            why = exc.problem
        if not option_files:
            unknown.append(Unknown("the option files the server reads", why))

    option_lines: tuple[OptionLine, ...] = ()
    if transport is not None:
        say("Reading the option files the server reads")
        try:
            batch = lines_run.result().stdout if lines_run is not None else b""
            option_lines = read_option_lines(
                transport, instance, flavour, version, option_files, batch
            )
        except InnoTuneError as exc:
            unknown.append(Unknown("the lines of the option files", exc.problem))
        except OSError as exc:
            unknown.append(Unknown("the lines of the option files", f"{exc.filename}: {exc}"))

    service: ServiceInfo | None = None
    if systemd_run is not None and instance.service:
        try:
            service = service_from(systemd_run.result(), instance.service)
        except InnoTuneError as exc:
            unknown.append(Unknown(f"the systemd unit {instance.service}", exc.problem))

    uptime = last.get("Uptime")
    return ServerFacts(
        instance=instance,
        version=version,
        version_comment=comment,
        flavour=flavour,
        variables=variables,
        status=tuple(sorted(last.items())),
        rates=rates,
        engines=tuple(engines),
        binlog_enabled=binlog_on,
        replica=replica,
        replicas_connected=int(connected) if connected and connected.isdigit() else None,
        uptime_seconds=int(uptime) if uptime and uptime.isdigit() else None,
        datadir=values.get("datadir"),
        dirty_pages_share=dirty_share(last),
        error_log=error_log_of(values, instance),
        option_files=option_files,
        login_via=session.via,
        unknown=tuple(unknown),
        service=service,
        option_lines=option_lines,
        binlog_use=binlog,
    )


def binlog_use(session: Session, enabled: bool, unknown: list[Unknown]) -> BinlogUse:
    """Who uses the binary log: registered replicas, dump threads, the logs kept.

    SHOW REPLICAS is MySQL 8.0.22+'s name (MariaDB and older MySQL: SHOW SLAVE HOSTS); a
    replica registers itself only when it connects, and a dump thread is any client
    reading the binary log now (a replica, or a tool such as Debezium or mysqlbinlog).
    """
    hosts: int | None = None
    problem = ""
    for sql in _REPLICA_HOSTS:
        try:
            hosts = len(session.query(sql))
            break
        except InnoTuneError as exc:
            problem = exc.problem
    if hosts is None:
        unknown.append(Unknown("the replicas registered with this server", problem))
    dumps: int | None = None
    try:
        rows = session.query(_DUMP_THREADS)
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


def _option_tops(
    instance: ServerInstance, flavour: str, option_files: tuple[str, ...]
) -> list[TopFile]:
    """The files the server reads on its own, in order (the binary's list when known)."""
    cmdline = parse_argv(instance.argv or (instance.binary,))
    family = "mysql" if flavour in ("mysql", "percona") else "mariadb"
    defaults_file = cmdline.defaults_file or instance.defaults_file
    return list(
        search_order(
            family,
            defaults_file=defaults_file,
            extra_file=cmdline.extra_file,
            no_defaults=cmdline.no_defaults,
            home="~",
            help_files=[f for f in option_files if f != defaults_file] or None,
        )
    )


def read_option_lines(
    transport: Transport,
    instance: ServerInstance,
    flavour: str,
    version: str,
    option_files: tuple[str, ...],
    batch: bytes = b"",
) -> tuple[OptionLine, ...]:
    """The options the server's option files give it, each with its file and line.

    ``batch`` is the output of :func:`app.optionfiles.batch_argv` over the likely files, run
    earlier with other commands; a file it lacks is read on its own.

    Read as the server reads them (its groups, includes, ``!includedir``), without sudo: a
    file the login cannot read raises, and the caller records it as unknown.

    Raises:
        OptionFileError: a file cannot be read, or the server would refuse the files.
    """
    cmdline = parse_argv(instance.argv or (instance.binary,))
    family = "mysql" if flavour in ("mysql", "percona") else "mariadb"
    groups = server_groups(family, version, cmdline.group_suffix or "")
    tops = _option_tops(instance, flavour, option_files)
    # CommandResult is frozen; the reader's protocol declares plain attributes. Same shape.
    reading = read_config(batch_reader(cast(Any, transport), batch), tops, groups)
    lines = []
    for arg in reading.args:
        meaning = resolve(arg.text)
        lines.append(
            OptionLine(
                name=meaning.name.replace("-", "_"),
                value=meaning.value,
                file=arg.file,
                line=arg.line,
                text=arg.text.lstrip("-"),
            )
        )
    return tuple(lines)
