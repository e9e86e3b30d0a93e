"""A database server running in a Docker or Podman container, as its engine describes it."""

from __future__ import annotations

from dataclasses import dataclass, field

ENGINES = ("docker", "podman")
# The compose labels (Docker Compose, podman-compose).
COMPOSE_PROJECT = ("com.docker.compose.project", "io.podman.compose.project")
COMPOSE_SERVICE = ("com.docker.compose.service", "io.podman.compose.service")
# Environment variables the official images' entrypoints read (names only: values may be
# passwords).
ENV_PREFIXES = ("MARIADB_", "MYSQL_")


@dataclass(frozen=True)
class Mount:
    """One mount of the container: a host directory (bind) or a named volume."""

    kind: str  # bind, volume, tmpfs
    source: str  # the host path (for a volume, where the engine keeps it)
    destination: str  # the path inside the container
    read_write: bool = True
    name: str = ""  # a named volume's name

    @property
    def words(self) -> str:
        """The mount as a person reads it: the host directory, or the volume and its place."""
        if self.kind == "volume":
            return f"the volume {self.name or '?'} ({self.source} on the host)"
        return f"the host directory {self.source}"

    def host_path(self, inside: str) -> str | None:
        """The host path of ``inside`` when it lies under this mount, else None."""
        dest = self.destination.rstrip("/") or "/"
        if not self.source or self.kind == "tmpfs":
            return None
        if inside == dest:
            return self.source
        if inside.startswith(dest.rstrip("/") + "/"):
            return self.source.rstrip("/") + inside[len(dest.rstrip("/")) :]
        return None


#: A server program that takes options on its command line (a command starting with one of
#: these passes options to the server; a shell or script in front of it may not).
SERVER_PROGRAMS = ("mariadbd", "mysqld", "mariadbd-safe", "mysqld_safe")


@dataclass(frozen=True)
class Container:
    """A container running a database server, and where its options come from."""

    engine: str  # docker | podman
    id: str
    name: str
    image: str
    compose_project: str = ""
    compose_service: str = ""
    ports: tuple[str, ...] = ()  # "3306/tcp -> 0.0.0.0:13306"
    mounts: tuple[Mount, ...] = ()
    env_names: tuple[str, ...] = ()  # the MARIADB_*/MYSQL_* variables set (names only)
    command: tuple[str, ...] = ()  # entrypoint and arguments as the engine starts them
    entrypoint: tuple[str, ...] = ()  # the container's entrypoint (Config.Entrypoint)
    cmd: tuple[str, ...] = ()  # its command, the entrypoint's arguments (Config.Cmd)
    network: str = ""  # the engine's network mode, when not its default
    restart_policy: str = ""  # the engine's restart policy (always, unless-stopped…), if any
    compose_commands: tuple[str, ...] = ()  # compose commands this host has for the engine
    compose_labels: tuple[tuple[str, str], ...] = ()  # compose's labels (its project's place)
    server_uid: int | None = None  # the server's uid (the container's own numbering)
    memory_limit_bytes: int | None = None  # the engine's --memory; None: no limit
    notes: tuple[str, ...] = field(default=())

    @property
    def exec_argv(self) -> list[str]:
        """The start of a command run inside the container (standard input kept open)."""
        return [self.engine, "exec", "-i", self.name]

    @property
    def restart_argv(self) -> list[str]:
        """How the engine restarts it (the same container: its files are kept)."""
        return [self.engine, "restart", self.name]

    def host_path(self, inside: str) -> str | None:
        """The host path of the container's ``inside``, when a mount carries it."""
        best: tuple[int, str] | None = None
        for mount in self.mounts:
            path = mount.host_path(inside)
            if path is not None and (best is None or len(mount.destination) > best[0]):
                best = (len(mount.destination), path)
        return best[1] if best else None

    def bind_for(self, inside: str) -> Mount | None:
        """The read-write mount that keeps ``inside`` on the host, if any.

        A host directory (bind) or a named volume: both outlive the container (compose
        reattaches them when it recreates it); its own layer and a tmpfs do not.
        """
        found = None
        for mount in self.mounts:
            durable = mount.kind in ("bind", "volume")
            if durable and mount.read_write and mount.host_path(inside) is not None:
                if found is None or len(mount.destination) > len(found.destination):
                    found = mount
        return found

    @property
    def compose_label(self) -> str:
        """``project/service`` when compose labelled it, else empty."""
        if self.compose_project and self.compose_service:
            return f"{self.compose_project}/{self.compose_service}"
        return self.compose_project or self.compose_service

    @property
    def label(self) -> str:
        """One line: engine, name, image, compose service."""
        compose = f", compose {self.compose_label}" if self.compose_label else ""
        return f"{self.engine} container {self.name} ({self.image}{compose})"

    @property
    def labels(self) -> dict[str, str]:
        """Compose's labels on the container, by name."""
        return dict(self.compose_labels)

    @property
    def server_in_command(self) -> bool:
        """Whether the container's command starts the server, so options added reach it.

        The official images' entrypoints end with ``exec "$@"``; a shell or a script as the
        command may drop them.
        """
        first = self.cmd[0].rsplit("/", 1)[-1] if self.cmd else ""
        return first in SERVER_PROGRAMS


@dataclass(frozen=True)
class StoppedContainer:
    """A container the engine has but is not running (exited or only created)."""

    engine: str
    name: str
    status: str  # as the engine says it, e.g. "Exited (0) 3 minutes ago"

    @property
    def start_argv(self) -> list[str]:
        """How it is started again."""
        return [self.engine, "start", self.name]
