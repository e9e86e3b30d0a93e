"""Facts about a database server instance, as plain values that round-trip through JSON."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.facts import Unknown
from app.domain.instance import ServerInstance
from app.domain.server import Flavour, ServerVersion, VersionError
from app.domain.service import ServiceInfo


@dataclass(frozen=True)
class Variable:
    """A global variable and, where the server says, where its value came from."""

    name: str
    value: str | None
    origin: str | None = None  # COMPILE-TIME, CONFIG, COMMAND-LINE, AUTO, SQL, PERSISTED, …
    path: str | None = None  # the option file that set it, when origin is CONFIG


@dataclass(frozen=True)
class Rates:
    """Status counters turned into per-second rates over a sampling window."""

    seconds: float
    transactions_per_s: float  # Handler_commit: every commit, autocommit statements included
    writes_per_s: float  # INSERT/UPDATE/DELETE/REPLACE/LOAD statements
    redo_bytes_per_s: float | None
    pages_written_per_s: float | None
    data_fsyncs_per_s: float | None
    log_fsyncs_per_s: float | None
    buffer_pool_hit_rate: float | None  # share of page reads served from memory, 0..1
    log_waits: int | None = None  # Innodb_log_waits grew by this much during the sample


@dataclass(frozen=True)
class OptionLine:
    """One option an option file gives the server, and where (file and line) it is written."""

    name: str  # the option as the server resolves it, with underscores (loose- removed)
    value: str | None
    file: str
    line: int
    text: str  # as written, e.g. "innodb-buffer-pool-instances=4"


@dataclass(frozen=True)
class EngineUse:
    """How much user data one storage engine holds."""

    engine: str
    tables: int
    data_bytes: int
    index_bytes: int


@dataclass(frozen=True)
class ErrorLog:
    """Where the server's error messages go and how to read them."""

    destination: str  # file, syslog, journal, stderr, unknown
    path: str | None
    how_to_read: str


@dataclass(frozen=True)
class BinlogUse:
    """Who uses the binary log: what InnoTune found before it offers to turn it off.

    Attributes:
        replica_hosts: replicas registered with this server (SHOW REPLICAS, SHOW SLAVE
            HOSTS); None when it could not be asked.
        dump_threads: connections reading the binary log now (a replica's or a tool's
            "Binlog Dump" thread); None when the process list could not be read.
        logs: how many binary logs the server keeps (SHOW BINARY LOGS).
        first_log: the oldest one kept; a number above 1 means older ones were purged
            (by the expiry setting or by a tool).
        logs_bytes: their total size.
    """

    replica_hosts: int | None = None
    dump_threads: int | None = None
    logs: int | None = None
    first_log: str | None = None
    logs_bytes: int | None = None


@dataclass(frozen=True)
class ServerFacts:
    """Everything about the chosen server instance that write tuning depends on."""

    instance: ServerInstance
    version: str  # as VERSION() says, e.g. 10.11.19-MariaDB-0+deb12u1
    version_comment: str
    flavour: str  # mariadb, mysql, percona
    variables: tuple[Variable, ...]
    status: tuple[tuple[str, str], ...]  # the last sample of SHOW GLOBAL STATUS
    rates: Rates | None
    engines: tuple[EngineUse, ...]
    binlog_enabled: bool
    replica: bool
    replicas_connected: int | None
    uptime_seconds: int | None
    datadir: str | None
    dirty_pages_share: float | None
    error_log: ErrorLog
    option_files: tuple[str, ...]
    login_via: str
    unknown: tuple[Unknown, ...] = ()
    service: ServiceInfo | None = None  # the systemd unit, when systemd started the server
    option_lines: tuple[OptionLine, ...] = ()  # what the option files give it (server groups)
    binlog_use: BinlogUse | None = None  # who uses the binary log (None: not asked)

    def redo_bytes(self) -> int | None:
        """The redo log's whole size now (all files), from the variables that size it.

        MySQL 8.0.30 and later size it with innodb_redo_log_capacity; older MySQL with
        innodb_log_file_size times innodb_log_files_in_group; MariaDB (10.5 and later) has
        one file.
        """
        try:
            version = ServerVersion.parse(self.version, self.version_comment)
        except VersionError:
            return None
        mysql = version.family is Flavour.MYSQL
        if mysql and version.number >= (8, 0, 30):
            return _int(self.variable("innodb_redo_log_capacity"))
        size = _int(self.variable("innodb_log_file_size"))
        if size is None:
            return None
        files = (_int(self.variable("innodb_log_files_in_group")) or 2) if mysql else 1
        return size * files

    def variable(self, name: str) -> str | None:
        """The value of a global variable, or None when the server has no such variable."""
        for var in self.variables:
            if var.name == name:
                return var.value
        return None

    def status_value(self, name: str) -> str | None:
        """The value of a status counter from the last sample."""
        for key, value in self.status:
            if key == name:
                return value
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
