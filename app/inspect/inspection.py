"""A whole inspection: the server's facts, the OS facts for its directories, a disk probe.

The OS gathering starts as soon as the server's variables name its directories and runs
on the host while the database is read (and during the status sampling window).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from app.domain.facts import DiskProbe, OsFacts, Unknown
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ServerFacts
from app.inspect.diskprobe import probe_disk
from app.inspect.host import host_argv, host_facts_from
from app.inspect.otherpools import finish_reading, start_reading
from app.inspect.server import gather_server_facts
from app.mysql.session import Session
from app.remote.container import ContainerTransport
from app.remote.transport import Pending, Transport, submit

# Variables naming directories the server writes to; each gets its own write path.
DIRECTORY_VARIABLES = (
    "datadir",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "log_bin_basename",
    "tmpdir",
)


def write_directories(session: Session) -> list[str]:
    """The distinct absolute directories the server writes to, datadir first."""
    names = ", ".join(f"'{n}'" for n in DIRECTORY_VARIABLES)
    rows = session.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})")  # noqa: S608
    return directories_from({k: v or "" for k, v in rows if k})


def directories_from(values: dict[str, str]) -> list[str]:
    """The distinct absolute directories named by the server's variables, datadir first."""
    datadir = values.get("datadir", "").rstrip("/") or "/"
    found: list[str] = []
    for name in DIRECTORY_VARIABLES:
        value = values.get(name, "").strip()
        if not value:
            continue
        if name == "log_bin_basename":
            value = value.rsplit("/", 1)[0] if "/" in value else datadir
        for part in value.split(":"):  # tmpdir may list several
            path = part if part.startswith("/") else f"{datadir}/{part.lstrip('./')}"
            path = path.rstrip("/") or "/"
            if path not in found and path.startswith("/"):
                found.append(path)
    return found


def inspect(
    transport: Transport,
    instances: list[ServerInstance],
    instance: ServerInstance,
    session: Session,
    *,
    sample_seconds: float = 10.0,
    disk_probe: bool = False,
    use_sudo: bool = True,
    say: Callable[[str], None] = lambda _t: None,
    wait: Callable[[float], None] = time.sleep,
) -> HostFacts:
    """Gather every fact about the host and the chosen server.

    ``wait`` spends what is left of the sampling window; the wizard passes one that
    returns (or raises) at once when the person cancels.
    """
    directories: list[str] = []
    host_run: list[Pending] = []
    unknown: list[Unknown] = []
    # A server in a container reads the container's files (through exec); its directories
    # are the host's where a mount carries them (the same kernel, the disks under them).
    container = instance.container
    inside: Transport = transport
    if container is not None:
        inside = ContainerTransport(transport, container, sudo=use_sudo)

    def os_facts(values: dict[str, str]) -> None:
        for path in directories_from(values):
            host = container.host_path(path) if container is not None else path
            if host is None:
                assert container is not None
                unknown.append(
                    Unknown(
                        f"the disk under {path} in the container {container.name}",
                        "no mount carries it: it lives in the container's own layer, on the "
                        "engine's storage",
                    )
                )
            elif host not in directories:
                directories.append(host)
        say("Reading the machine, the filesystems and the disks")
        host_run.append(submit(transport, host_argv(directories), sudo=use_sudo, timeout=60))

    # The other servers' pools from their option files, read while this one is.
    pools = start_reading(transport, instances, instance, use_sudo)
    server: ServerFacts = gather_server_facts(
        session,
        instance,
        inside,
        sample_seconds=sample_seconds,
        say=say,
        sleep=wait,
        on_variables=os_facts,
    )
    gathered: OsFacts = host_facts_from(host_run[0].result(), directories)
    probe: DiskProbe | None = None
    if disk_probe and directories:
        say(f"Measuring synced writes in {directories[0]} (a few seconds)")
        try:
            probe = probe_disk(transport, directories[0], sudo=use_sudo)
        except Exception as exc:  # noqa: BLE001 - a failed probe is an unknown, not a crash
            unknown.append(Unknown("the disk's sync rate", str(exc)))
    return HostFacts(
        target=transport.label,
        collected_at=datetime.now(UTC).isoformat(timespec="seconds"),
        os=gathered,
        instances=tuple(finish_reading(pools)),
        server=server,
        disk_probe=probe,
        unknown=tuple(unknown),
    )
