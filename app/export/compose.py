"""The durable way for a server in a container with no mounted configuration directory.

A file written inside a container is lost when the container is recreated (``docker-compose
up --force-recreate``, a new image, ``docker rm``). What lasts is in the container's
definition: a compose override that mounts InnoTune's drop-in from the host into the
directory the server reads last, or (for a container started with plain ``docker run``) the
same ``docker run`` with that mount added. InnoTune writes these files for the person to
apply; it changes neither the compose project nor the container.

The drop-in carries this host's real values (its buffer pool from its own RAM): the export is
made for the container it was planned on. Only the Ansible playbook leaves a value for each
host to fill in.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from dataclasses import dataclass
from pathlib import Path

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export.model import DROPIN_NAME, ExportError, comment, digest, dropin_text

#: Where the drop-in goes when the facts do not show the include directories the server reads.
CONF_DIR = "/etc/mysql/conf.d"
OVERRIDE_NAME = "compose.override.yml"
RUN_NAME = "docker-run.sh"

# The labels compose puts on what it started: where the project is, and its files.
WORKING_DIR = ("com.docker.compose.project.working_dir", "io.podman.compose.project.working_dir")
CONFIG_FILES = ("com.docker.compose.project.config_files",)


@dataclass(frozen=True)
class Durable:
    """The files of the durable way, and what the person runs to use them."""

    files: dict[str, str]  # file name → text, written into the export's directory
    how: str  # one line: the way (compose override, or docker run)
    commands: tuple[str, ...]  # what to run, in order
    notes: tuple[str, ...] = ()


def conf_dir(facts: HostFacts | None) -> str:
    """The include directory the server reads last, from the option files it read.

    A drop-in mounted there is read after every other file, so its values win. Debian's
    layout reads /etc/mysql/conf.d, then mariadb.conf.d (or mysql.conf.d).
    """
    server = facts.server if facts is not None else None
    dirs = [
        posixpath.dirname(line.file)
        for line in (server.option_lines if server is not None else ())
        if posixpath.dirname(line.file).endswith(".d")
    ]
    return dirs[-1] if dirs else CONF_DIR


def command_options(plan: Plan, facts: HostFacts | None = None) -> list[str]:
    """The plan's server settings as command-line options (``--name=value``), real values."""
    return [f"--{s.key.replace('_', '-')}={s.value}" for s in digest(plan, facts).settings]


def _check_data_kept(container: Container, facts: HostFacts | None) -> str:
    """The datadir inside, when a mount keeps it; recreating would otherwise lose the data.

    Raises:
        ExportError: the data lives in the container's own layer.
    """
    datadir = (facts.server.datadir if facts and facts.server else None) or "/var/lib/mysql"
    if container.host_path(datadir.rstrip("/")) is None:
        raise ExportError(
            f"The container {container.name} keeps its data ({datadir}) in its own layer, not "
            "on a mounted host directory or volume: recreating it would lose the data.",
            "Move the data to a volume first (a dump and a restore into a container with "
            f"-v NAME:{datadir}), then export again.",
        )
    return datadir


def _command_note(container: Container, options: list[str]) -> list[str]:
    """The other durable way, the server's command, when the command reaches the server."""
    if not options:
        return []
    if container.server_in_command:
        return comment(
            "The other durable way is the server's command: instead of the volumes entry "
            "below, command: " + json.dumps([*container.cmd, *options])
        )
    started = shlex.join(container.cmd or container.command) or "its entrypoint"
    return comment(
        f"The server's command is not the other way here: the container starts {started}, "
        "which may not pass options on to the server, so only the mounted file is offered."
    )


def _compose_program(container: Container) -> str:
    if container.compose_commands:
        return container.compose_commands[0]
    return "docker-compose" if container.engine == "docker" else "podman-compose"


def compose_way(
    plan: Plan, container: Container, directory: Path, facts: HostFacts | None
) -> Durable:
    """A compose override mounting the drop-in from ``directory``, for a compose service."""
    _check_data_kept(container, facts)
    export = digest(plan, facts)
    where = conf_dir(facts)
    source = str(directory.resolve() / DROPIN_NAME)
    service = container.compose_service or container.name
    override = str(directory.resolve() / OVERRIDE_NAME)
    program = _compose_program(container)
    labels = container.labels
    workdir = next((labels[k] for k in WORKING_DIR if labels.get(k)), "")
    files = next((labels[k] for k in CONFIG_FILES if labels.get(k)), "")
    given = [f"-f {shlex.quote(f)}" for f in files.split(",") if f] or ["-f compose.yml"]
    up = " ".join(
        [program, "-p", shlex.quote(container.compose_project or service), *given]
        + ["-f", shlex.quote(override), "up", "-d", shlex.quote(service)]
    )
    commands = (f"cd {shlex.quote(workdir)}", up) if workdir else (up,)
    lines = [
        f"# Written by InnoTune for the {container.engine} container {container.name} "
        f"({container.image}), compose service {service}.",
        *comment(
            "A file written inside a container is lost when the container is recreated; this "
            f"override mounts InnoTune's drop-in from {source} on the host, so it lasts. Run: "
            + " && ".join(commands)
            + f" (the server restarts with {DROPIN_NAME} read from {where})."
        ),
        *_command_note(container, command_options(plan, facts)),
        "services:",
        f"  {service}:",
        "    volumes:",
        f"      - {json.dumps(f'{source}:{where}/{DROPIN_NAME}:ro')}",
        "",
    ]
    if not container.compose_commands:
        note = f"This host has no compose command; {program} is the usual one to install."
    else:
        note = ""
    return Durable(
        files={DROPIN_NAME: dropin_text(export, per_host=False), OVERRIDE_NAME: "\n".join(lines)},
        how=f"a compose override for the service {service}",
        commands=commands,
        notes=(note,) if note else (),
    )


def run_argv(container: Container, source: str, where: str) -> list[str]:
    """``docker run`` recreating ``container`` as it runs now, with the drop-in mounted.

    Environment variables are passed by name only (``-e NAME``): the engine takes each value
    from the shell that runs it, and InnoTune never read them (they may be passwords).
    """
    argv = [container.engine, "run", "-d", "--name", container.name]
    if container.restart_policy:
        argv += ["--restart", container.restart_policy]
    if container.network:
        argv += ["--network", container.network]
    if container.memory_limit_bytes:
        argv += ["--memory", str(container.memory_limit_bytes)]
    for port in container.ports:
        inside, _, outside = port.partition(" -> ")
        host_ip, _, host_port = outside.rpartition(":")
        bind = f"{host_ip}:" if host_ip and host_ip not in ("0.0.0.0", "::") else ""  # noqa: S104
        argv += ["-p", f"{bind}{host_port}:{inside}"]
    for mount in container.mounts:
        if mount.kind not in ("bind", "volume"):
            continue
        origin = mount.name if mount.kind == "volume" else mount.source
        argv += ["-v", f"{origin}:{mount.destination}" + ("" if mount.read_write else ":ro")]
    argv += ["-v", f"{source}:{where}/{DROPIN_NAME}:ro"]
    for name in container.env_names:
        argv += ["-e", name]
    if container.entrypoint:
        argv += ["--entrypoint", container.entrypoint[0]]
    argv.append(container.image)
    argv += list(container.entrypoint[1:]) + list(container.cmd)
    return argv


def run_way(plan: Plan, container: Container, directory: Path, facts: HostFacts | None) -> Durable:
    """A script that recreates a plain ``docker run`` container with the drop-in mounted."""
    datadir = _check_data_kept(container, facts)
    export = digest(plan, facts)
    where = conf_dir(facts)
    source = str(directory.resolve() / DROPIN_NAME)
    engine, name = container.engine, container.name
    old = f"{name}-before-innotune"
    run = shlex.join(run_argv(container, source, where))
    script = [
        "#!/bin/sh",
        f"# Written by InnoTune for the {engine} container {name} ({container.image}), "
        "started without compose.",
        *comment(
            "A file written inside a container is lost when the container is recreated. This "
            f"script recreates {name} as it runs now (its ports, mounts, restart policy and "
            f"memory limit), with InnoTune's drop-in mounted from {source}, read from {where}. "
            f"The data ({datadir}) stays on its mount. The old container is kept, stopped, "
            f"as {old}."
        ),
        *comment(
            "Environment variables are passed by name: export "
            + (", ".join(container.env_names) or "none")
            + " in this shell first if the server needs them at start (InnoTune did not read "
            "their values)."
        ),
        *comment(
            f"To go back: {engine} rm -f {name} && {engine} rename {old} {name} && "
            f"{engine} start {name}"
        ),
        "set -e",
        shlex.join([engine, "stop", name]),
        shlex.join([engine, "rename", name, old]),
        run,
        "",
    ]
    return Durable(
        files={DROPIN_NAME: dropin_text(export, per_host=False), RUN_NAME: "\n".join(script)},
        how=f"a {engine} run line that recreates {name} with the drop-in mounted",
        commands=(f"sh {shlex.quote(str(directory.resolve() / RUN_NAME))}",),
    )


def durable_way(
    plan: Plan, container: Container, directory: Path, facts: HostFacts | None = None
) -> Durable:
    """The durable way for ``container``: compose when compose started it, else docker run.

    Raises:
        ExportError: the container keeps its data in its own layer, or a name or value
            InnoTune does not export (see :func:`app.export.model.digest`).
    """
    if container.compose_project:
        return compose_way(plan, container, directory, facts)
    return run_way(plan, container, directory, facts)
