"""Gathering the server's facts through a database session, in a fixed number of queries.

No query is per table or per variable, so the cost does not grow with the schema. The
queries travel in batches (one round trip for the variables and what goes with them, one
for the status sample), and the commands the inspection runs on the host are sent before
the status is read, so they run while the database answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.domain.errors import InnoTuneError
from app.domain.facts import Unknown
from app.domain.instance import ServerInstance
from app.domain.server import ServerVersion, VersionError
from app.domain.serverfacts import EngineUse, ErrorLog, OptionLine, ServerFacts, Variable
from app.domain.service import ServiceInfo
from app.inspect.engines import (
    COUNT_INNODB_TABLES,
    COUNT_USER_TABLES,
    INNODB_BYTES,
    PLAIN_ENGINES,
    engine_use,
    uses_dictionary,
)
from app.inspect.option_lines import INCLUDE_DIRS, option_tops, read_option_lines
from app.inspect.prefetch import Prefetched, ask, prefetch
from app.inspect.rates import compute_rates, dirty_share
from app.inspect.replication import REPLICA, binlog_use
from app.inspect.systemd import service_from, systemd_argv_for
from app.mysql.session import Session
from app.optionfiles import batch_argv, parse_help_default_files
from app.remote.transport import Pending, Transport, flush, submit


def flavour_of(version: str, comment: str) -> str:
    """mariadb, percona or mysql, from VERSION() and @@version_comment."""
    try:
        return str(ServerVersion.parse(version, comment).flavour)
    except VersionError:
        return "mariadb" if "mariadb" in version.lower() else "mysql"


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
    statements = ["SHOW GLOBAL STATUS", REPLICA[0]]
    if announced:
        flavour, version = _guess(announced)
        if uses_dictionary(flavour, version):
            statements += [INNODB_BYTES, COUNT_USER_TABLES, COUNT_INNODB_TABLES]
        else:
            statements.append(PLAIN_ENGINES)
    return statements


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
        guess = option_tops(instance, flavour, option_files)
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
    for sql in REPLICA:
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
            option_files = tuple(parse_help_default_files(result.out))
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
