"""A running database server instance as found on a host."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.domain.container import Container


@dataclass(frozen=True)
class ServerInstance:
    """One mysqld/mariadbd process and how to reach and restart it."""

    pid: int
    binary: str
    argv: tuple[str, ...]
    user: str = ""
    sockets: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    defaults_file: str | None = None
    datadir: str | None = None
    started_by: str = "unknown"  # systemd, sysv, mysqld_safe, manual, container, unknown
    service: str | None = None  # unit or init-script name
    notes: tuple[str, ...] = field(default=())
    container: Container | None = None  # the Docker or Podman container it runs in
    # Another server's buffer pool as its option files set it, read without logging in
    # (app.inspect.otherpools): the value as written ("2G"), None when they set none.
    files_pool: str | None = None
    files_read: bool = False  # True when its option files were read for files_pool
    files_connections: str | None = None  # max_connections as its option files set it

    @property
    def socket(self) -> str | None:
        """The first Unix socket the server listens on."""
        return self.sockets[0] if self.sockets else None

    @property
    def port(self) -> int | None:
        """The first TCP port the server listens on."""
        return self.ports[0] if self.ports else None

    @property
    def spec(self) -> str:
        """What names it again after a restart: its container, socket, port, else its pid."""
        if self.container is not None:
            return self.container.name
        return self.socket or (str(self.port) if self.port else str(self.pid))

    @property
    def label(self) -> str:
        """A one-line description for choosers and messages."""
        if self.container is not None:
            name = self.binary.rsplit("/", 1)[-1] or "server"
            return f"{self.container.label}: {name}, host pid {self.pid}"
        where = self.socket or (f"port {self.port}" if self.port else "no socket found")
        how = f", {self.started_by}" + (f" {self.service}" if self.service else "")
        return f"pid {self.pid} ({self.binary.rsplit('/', 1)[-1]}) at {where}{how}"

    def restart_argv(self) -> list[str] | None:
        """How the service manager restarts it, or None when it was started by hand."""
        if self.container is not None:
            return self.container.restart_argv
        if self.started_by == "systemd" and self.service:
            return ["systemctl", "restart", self.service]
        if self.started_by == "sysv" and self.service:
            return [f"/etc/init.d/{self.service}", "restart"]
        return None
