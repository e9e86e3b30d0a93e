"""How the job restarts, validates and health-checks this server (the bundle's commands).

Reading the facts, these say which command restarts the server (systemd, SysV, a custom
command, a container's engine), how to validate its option files before the restart, which
log to read, and how a restart command typed by a person is split.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ServerFacts
from app.jobs.control import DEFAULT_HEALTH_TIMEOUT, DEFAULT_WATCH_SECONDS, _sudo
from app.remote.transport import Transport

# -- how to restart, validate and health-check this server -----------------------------------


def _client_argv(transport: Transport, socket: str | None, sudo: bool) -> list[str] | None:
    """The client logging in as root over the socket, if that works on the target."""
    if not socket:
        return None
    found = transport.run(
        ["sh", "-c", "command -v mariadb || command -v mysql"], sudo=sudo
    ).out.split()
    if not found:
        return None
    argv = [found[0], "--no-defaults", f"--socket={socket}", "--user=root"]
    if transport.run([*argv, "-N", "-B", "-e", "SELECT 1"], sudo=sudo, timeout=20).ok:
        return argv
    return None


def _log_source(transport: Transport, server: ServerFacts) -> dict[str, Any] | None:
    log = server.error_log
    if log.destination == "file" and log.path:
        return {"kind": "file", "path": log.path}
    if log.destination == "syslog":
        for path in (log.path or "/var/log/syslog", "/var/log/messages"):
            if transport.run(["test", "-f", path]).ok:
                name = server.instance.binary.rsplit("/", 1)[-1]
                return {"kind": "syslog", "path": path, "match": [name, "mysqld"]}
    if log.destination == "journal" and server.instance.service:
        return {"kind": "journal", "unit": server.instance.service}
    return None


def _markers(instance: ServerInstance) -> list[str]:
    """Arguments that tell this instance's server process from any other on the host."""
    keep = ("--defaults-file=", "--pid-file=", "--socket=", "--datadir=")
    return [a for a in instance.argv if a.startswith(keep)]


def server_how(
    transport: Transport,
    server: ServerFacts,
    *,
    restart_argv: Sequence[str] | None = None,
    health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
    watch_seconds: float = DEFAULT_WATCH_SECONDS,
) -> dict[str, Any]:
    """How the job restarts this server and judges its health (stored in the snapshot)."""
    instance = server.instance
    sudo = _sudo(transport)
    if instance.container is not None:
        return _container_how(
            transport,
            server,
            restart_argv=restart_argv,
            health_timeout=health_timeout,
            watch_seconds=watch_seconds,
        )
    variables = {v.name: v.value for v in server.variables}
    restart = list(restart_argv) if restart_argv else instance.restart_argv()
    service = getattr(server, "service", None)
    unit = instance.service if instance.started_by == "systemd" else None
    if service is not None and (service.timeout_start_s or service.timeout_stop_s):
        # Our wait must outlast the unit's own stop + start timeouts (crash recovery).
        unit_wait = (service.timeout_start_s or 90.0) + (service.timeout_stop_s or 90.0)
        health_timeout = max(health_timeout, unit_wait + 30.0)
    return {
        "unit": unit,
        "memory_max_bytes": service.memory_max_bytes if service is not None else None,
        "restart": restart,
        "socket": instance.socket or variables.get("socket"),
        "pid_file": variables.get("pid_file"),
        "markers": _markers(instance),
        "binary": instance.binary,
        "client": _client_argv(transport, instance.socket or variables.get("socket"), sudo),
        "log": _log_source(transport, server),
        "health_timeout": health_timeout,
        "watch_seconds": watch_seconds,
    }


def _container_how(
    transport: Transport,
    server: ServerFacts,
    *,
    restart_argv: Sequence[str] | None,
    health_timeout: float,
    watch_seconds: float,
) -> dict[str, Any]:
    """How the job restarts a server in a container: through its engine, judged from outside.

    The job runs on the host: it finds the server among the host's processes by the
    container's id in their cgroup, logs in with the image's client through exec, and reads
    the server's lines from the engine's log. The container's socket and pid file are
    inside it, so neither is used.
    """
    from app.access.database import container_client

    container = server.instance.container
    assert container is not None
    sudo = _sudo(transport)
    client: list[str] | None = None
    try:
        name = container_client(transport, server.instance, sudo=sudo)
        argv = [container.engine, "exec", container.name, name, "--user=root"]
        if transport.run([*argv, "-N", "-B", "-e", "SELECT 1"], sudo=sudo, timeout=30).ok:
            client = argv
    except InnoTuneError:
        client = None
    return {
        "unit": None,
        # The engine's limit: the kernel kills the server there first (checked by validate).
        "memory_max_bytes": container.memory_limit_bytes,
        "restart": list(restart_argv) if restart_argv else container.restart_argv,
        "socket": None,
        # Greeted through the server process's root on the host (/proc/PID/root/…).
        "container_socket": server.variable("socket") or None,
        "pid_file": None,
        "markers": [],
        "cgroup_id": container.id,
        "binary": server.instance.binary,
        "client": client,
        "log": {"kind": "container", "engine": container.engine, "name": container.name},
        "health_timeout": health_timeout,
        "watch_seconds": watch_seconds,
    }


def _version_tuple(version: str) -> tuple[int, ...]:
    head = version.split("-", 1)[0]
    return tuple(int(p) for p in head.split(".") if p.isdigit())


def validation_command(server: ServerFacts, job_id: str) -> dict[str, Any]:
    """The server binary's own check of the new files, run as the service user.

    ``--validate-config`` on MySQL 8.0.16+; elsewhere ``--verbose --help`` with the
    instance's own option-file switches and arguments (it exits non-zero on an unknown
    variable); the ``--log-bin-index`` trick keeps it from touching a binary log index.
    """
    from app.optionfiles import parse_argv
    from app.optionfiles.serverview import defaults_switches

    instance = server.instance
    cmdline = parse_argv(instance.argv or (instance.binary,))
    base = [instance.binary, *defaults_switches(cmdline), *cmdline.checking_args()]
    container = instance.container
    if container is not None:
        # Inside the container, as the server's own uid: it reads the mounted directory.
        uid = [] if container.server_uid is None else ["--user", str(container.server_uid)]
        base = [container.engine, "exec", *uid, container.name, *base]
    if server.flavour in ("mysql", "percona") and _version_tuple(server.version) >= (8, 0, 16):
        argv = [*base, "--validate-config"]
    else:
        argv = [*base, "--verbose", "--help", f"--log-bin-index=/tmp/innotune-{job_id}.index"]
    return {"argv": argv, "user": None if container else instance.user or None}


def restart_argv_from(text: str | None) -> list[str] | None:
    """``--restart-command`` as an argv (split like a shell would, never run by one)."""
    return shlex.split(text) if text else None
