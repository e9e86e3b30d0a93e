"""The database servers in the host's Docker and Podman containers, from their engines' CLI.

The host's /proc shows a containerised mysqld/mariadbd in a pid namespace of its own, with
the container's id in its cgroup path (``/docker/<id>``, ``libpod-<id>.scope``…). The find
script asks each engine present for its running containers (``ps`` then ``inspect``) only
when such a server exists; :func:`parse_containers` reads the JSON and :func:`owner` joins a
server process to its container by that id.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from app.domain.container import (
    COMPOSE_PROJECT,
    COMPOSE_SERVICE,
    ENGINES,
    ENV_PREFIXES,
    Container,
    Mount,
    StoppedContainer,
)

COMPOSE_LABELS = ("com.docker.compose.", "io.podman.compose.")

# Appended to the instance finder's script; $inner is set when a server runs in another pid
# namespace, $inner_podman when its cgroup is podman's (libpod-<id>): podman is asked only
# then, since its first run as root makes its store (/var/lib/containers) and inspection
# changes nothing. docker only asks its daemon. Each engine's answer sits between
# "@@engine NAME" and "@@engine-end".
CONTAINERS_SCRIPT = r"""
echo "@@containers"
if [ -n "$inner" ]; then
    for e in docker podman; do
        [ "$e" = podman ] && [ -z "$inner_podman" ] && continue
        command -v "$e" >/dev/null 2>&1 || continue
        ids=$("$e" ps -q --no-trunc 2>/dev/null) || continue
        [ -n "$ids" ] || continue
        echo "@@engine $e"
        "$e" inspect $ids 2>/dev/null
        echo
        echo "@@engine-end"
        if [ "$e" = docker ]; then
            docker compose version >/dev/null 2>&1 && echo "@@compose docker docker compose"
            command -v docker-compose >/dev/null 2>&1 && echo "@@compose docker docker-compose"
        else
            command -v podman-compose >/dev/null 2>&1 && echo "@@compose podman podman-compose"
        fi
    done
fi
# Stopped containers, only by name: a server asked for by a stopped container's name is
# named as stopped (docker only asks its daemon; podman only once its store exists).
for e in docker podman; do
    command -v "$e" >/dev/null 2>&1 || continue
    [ "$e" = docker ] && [ -z "$DOCKER_HOST" ] && [ ! -S /var/run/docker.sock ] && continue
    [ "$e" = podman ] && [ ! -d /var/lib/containers/storage ] && continue
    "$e" ps -a --filter status=exited --filter status=created \
        --format "@@stopped $e {{.Names}} {{.Status}}" 2>/dev/null
done
"""


def _first_label(labels: dict[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        if labels.get(name):
            return labels[name]
    return ""


def _ports(data: dict[str, Any]) -> tuple[str, ...]:
    ports = (data.get("NetworkSettings") or {}).get("Ports") or {}
    found: list[str] = []
    for inside, bindings in sorted(ports.items()):
        for bind in bindings or []:
            host_ip = bind.get("HostIp") or "0.0.0.0"  # noqa: S104 - how the engine words "all"
            found.append(f"{inside} -> {host_ip}:{bind.get('HostPort', '')}")
    return tuple(found)


def _mounts(data: dict[str, Any]) -> tuple[Mount, ...]:
    return tuple(
        Mount(
            kind=str(m.get("Type") or ""),
            source=str(m.get("Source") or ""),
            destination=str(m.get("Destination") or ""),
            read_write=bool(m.get("RW", True)),
            name=str(m.get("Name") or "") if m.get("Type") == "volume" else "",
        )
        for m in data.get("Mounts") or []
    )


def container_from(engine: str, data: dict[str, Any]) -> Container:
    """One container from its engine's ``inspect`` object (pure)."""
    config = data.get("Config") or {}
    labels = config.get("Labels") or {}
    env = [str(e).split("=", 1)[0] for e in config.get("Env") or []]
    command = [str(data.get("Path") or ""), *(str(a) for a in data.get("Args") or [])]
    host_config = data.get("HostConfig") or {}
    network = str(host_config.get("NetworkMode") or "")
    restart = str((host_config.get("RestartPolicy") or {}).get("Name") or "")
    return Container(
        engine=engine,
        id=str(data.get("Id") or ""),
        name=str(data.get("Name") or "").lstrip("/"),
        image=str(data.get("ImageName") or config.get("Image") or data.get("Image") or ""),
        compose_project=_first_label(labels, COMPOSE_PROJECT),
        compose_service=_first_label(labels, COMPOSE_SERVICE),
        ports=_ports(data),
        mounts=_mounts(data),
        env_names=tuple(sorted(n for n in env if n.startswith(ENV_PREFIXES))),
        command=tuple(c for c in command if c),
        entrypoint=_strings(config.get("Entrypoint")),
        cmd=_strings(config.get("Cmd")),
        network="" if network in ("default", "bridge") else network,
        restart_policy="" if restart in ("no", "") else restart,
        compose_labels=tuple(
            sorted((k, str(v)) for k, v in labels.items() if k.startswith(COMPOSE_LABELS))
        ),
        memory_limit_bytes=_memory_limit(data),
    )


def _strings(value: object) -> tuple[str, ...]:
    """An inspect list of strings (a string alone: one word; null: none)."""
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _memory_limit(data: dict[str, Any]) -> int | None:
    """The container's memory limit in bytes (0 or absent: none)."""
    value = (data.get("HostConfig") or {}).get("Memory")
    return int(value) if isinstance(value, int) and value > 0 else None


def parse_containers(text: str) -> list[Container]:
    """The containers in the find script's ``@@engine`` sections (pure)."""
    found: list[Container] = []
    engine: str | None = None
    lines: list[str] = []
    compose: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("@@compose ") and engine is None:
            _, which, program = line.split(" ", 2)
            compose.setdefault(which, []).append(program.strip())
        elif line.startswith("@@engine "):
            engine, lines = line.split(" ", 1)[1].strip(), []
        elif line == "@@engine-end" and engine is not None:
            try:
                items = json.loads("\n".join(lines) or "[]")
            except ValueError:
                items = []
            if engine in ENGINES and isinstance(items, list):
                found += [container_from(engine, d) for d in items if isinstance(d, dict)]
            engine = None
        elif engine is not None:
            lines.append(line)
    return [replace(c, compose_commands=tuple(compose.get(c.engine, ()))) for c in found]


def parse_stopped(text: str) -> list[StoppedContainer]:
    """The stopped containers in the find script's ``@@stopped`` lines (pure)."""
    found = []
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[0] == "@@stopped" and parts[1] in ENGINES:
            found.append(StoppedContainer(parts[1], parts[2], parts[3] if len(parts) > 3 else ""))
    return found


def owner(cgroups: list[str], containers: list[Container]) -> Container | None:
    """The container whose id names one of a process's cgroups."""
    for container in containers:
        if len(container.id) >= 12 and any(container.id in cg for cg in cgroups):
            return container
    return None
