"""The database servers in the host's Docker and Podman containers, from their engines' CLI.

The host's /proc shows a containerised mysqld/mariadbd in a pid namespace of its own, with
the container's id in its cgroup path (``/docker/<id>``, ``libpod-<id>.scope``…). The find
script asks each engine present for its running containers (``ps`` then ``inspect``) only
when such a server exists; :func:`parse_containers` reads the JSON and :func:`owner` joins a
server process to its container by that id.
"""

from __future__ import annotations

import json
from typing import Any

from app.domain.container import (
    COMPOSE_PROJECT,
    COMPOSE_SERVICE,
    ENGINES,
    ENV_PREFIXES,
    Container,
    Mount,
)

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
    done
fi
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
        memory_limit_bytes=_memory_limit(data),
    )


def _memory_limit(data: dict[str, Any]) -> int | None:
    """The container's memory limit in bytes (0 or absent: none)."""
    value = (data.get("HostConfig") or {}).get("Memory")
    return int(value) if isinstance(value, int) and value > 0 else None


def parse_containers(text: str) -> list[Container]:
    """The containers in the find script's ``@@engine`` sections (pure)."""
    found: list[Container] = []
    engine: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("@@engine "):
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
    return found


def owner(cgroups: list[str], containers: list[Container]) -> Container | None:
    """The container whose id names one of a process's cgroups."""
    for container in containers:
        if len(container.id) >= 12 and any(container.id in cg for cg in cgroups):
            return container
    return None
