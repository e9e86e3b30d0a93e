"""The benchmark's clients take the route the doctor found: one fresh session per client."""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import TypeVar

from app.access.database import Credentials, open_session
from app.access.doctor import DoctorResult, Secrets
from app.bench.cpu import CpuProbe, live_server_pid
from app.bench.loadgen import LoadgenRoute, find_loadgen
from app.bench.program import TargetLogin
from app.bench.runner import SessionFactory
from app.bench.slap import SlapRoute, find_slap
from app.bench.sysbench import SysbenchRoute, find_sysbench
from app.domain.bench import ENGINES
from app.domain.errors import InnoTuneError
from app.domain.target import Target
from app.mysql.session import Session
from app.remote.container import ContainerTransport
from app.remote.local import LocalTransport
from app.remote.transport import Transport

R = TypeVar("R")


def session_factory(result: DoctorResult, target: Target, secrets: Secrets) -> SessionFactory:
    """Open sessions the way the doctor's login step did (same route, same account)."""
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        raise InnoTuneError("Not connected.", "Connect to the server first.")
    creds = Credentials(target.options.mysql_user, secrets.mysql_password)
    # As in the doctor: the practice server's login is our own OS account, never the relay.
    db_sudo = result.can_sudo and target.kind != "practice"

    def opener() -> Session:
        return open_session(transport, instance, creds, use_sudo=db_sudo)

    return opener


def target_login(
    result: DoctorResult, target: Target, secrets: Secrets, session: Session
) -> TargetLogin | None:
    """How clients on the target log in, or None when they cannot.

    With a database password, they log in with it (it travels on their standard input,
    never on a command line); otherwise by socket identity: as root under sudo (the relay's
    account), or as ourselves on this computer.
    """
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        return None
    user = target.options.mysql_user
    password = secrets.mysql_password
    if instance.container is not None:
        # Inside the container, next to the server: its socket, as our sessions log in.
        socket = (session.query("SELECT @@socket")[0][0] or "").strip() or None
        if password is not None and user:
            return TargetLogin(socket, None if socket else 3306, user, password)
        return TargetLogin(socket, None, "root") if socket else None
    if password is not None and user:
        # By socket where the server has one (the port only without it).
        port = None if instance.socket else instance.port
        return TargetLogin(instance.socket, port, user, password)
    if instance.socket is None:
        return None
    current = session.query("SELECT CURRENT_USER()")[0][0] or ""
    account = current.split("@", 1)[0]
    local = isinstance(transport, LocalTransport)
    if local and account == getpass.getuser():
        return TargetLogin(instance.socket, None, account)
    if account == "root" and result.can_sudo:
        return TargetLogin(instance.socket, None, "root", sudo=not transport.is_root)
    return None


def _on_target(
    find: Callable[..., R | None],
    result: DoctorResult,
    target: Target,
    secrets: Secrets,
    session: Session,
) -> R | None:
    """``find`` (sysbench or the load generator) on the target, logging in as our sessions do."""
    login = target_login(result, target, secrets, session)
    if login is None or result.transport is None or result.instance is None:
        return None
    return find(where_clients_run(result), login, server_pid(result, session))


def where_clients_run(result: DoctorResult) -> Transport:
    """The target's transport; for a server in a container, the container (through exec)."""
    assert result.transport is not None and result.instance is not None
    container = result.instance.container
    if container is None:
        return result.transport
    return ContainerTransport(result.transport, container, sudo=result.can_sudo)


def sysbench_route(
    result: DoctorResult, target: Target, secrets: Secrets, session: Session
) -> SysbenchRoute | None:
    """How to run sysbench on the target, logging in as our sessions do; None without it."""
    return _on_target(find_sysbench, result, target, secrets, session)


def loadgen_route(
    result: DoctorResult, target: Target, secrets: Secrets, session: Session
) -> LoadgenRoute | None:
    """How to run InnoTune's load generator on the target; None without python3 there."""
    return _on_target(find_loadgen, result, target, secrets, session)


def slap_route(
    result: DoctorResult, target: Target, secrets: Secrets, session: Session
) -> SlapRoute | None:
    """How to run mariadb-slap / mysqlslap on the target; None without either."""
    return _on_target(find_slap, result, target, secrets, session)


def client_route(
    result: DoctorResult,
    target: Target,
    secrets: Secrets,
    session: Session,
    engine: str = "auto",
    *,
    allow_sysbench: bool = True,
) -> SysbenchRoute | LoadgenRoute | SlapRoute | None:
    """Where the benchmark's clients run (None: InnoTune's own client, in this process).

    In this order: sysbench on the target when it has it, else InnoTune's load generator on
    the target's python3, else mariadb-slap / mysqlslap from the target's client package, else
    InnoTune's own client here (over the link: it measures the link as much as the server).

    ``engine`` picks one of :data:`ENGINES` or ``auto``; ``allow_sysbench=False`` leaves
    sysbench out of ``auto`` (the Verify page's choice).

    Raises:
        InnoTuneError: the engine asked for cannot run on this target.
    """
    if engine not in ("auto", *ENGINES):
        raise ValueError(f"unknown benchmark engine {engine!r}")
    if engine == "innotune":
        return None
    finders = {"sysbench": sysbench_route, "loadgen": loadgen_route, "slap": slap_route}
    if not allow_sysbench and engine == "auto":
        del finders["sysbench"]
    for name in finders if engine == "auto" else (engine,):
        route = finders[name](result, target, secrets, session)
        if route is not None:
            return route
    if engine == "auto":
        return None
    raise InnoTuneError(MISSING[engine][0], MISSING[engine][1])


#: What to say when the engine asked for is not on the target.
MISSING = {
    "sysbench": (
        "sysbench was asked for, but the target has no sysbench 1.x InnoTune can log in with.",
        "Install it (apt-get install sysbench), or use the load generator (--engine loadgen) "
        "or InnoTune's own client (--engine innotune).",
    ),
    "loadgen": (
        "The load generator was asked for, but the target has no python3 (3.6 or newer) "
        "InnoTune can log in with.",
        "Use --engine slap (the server's mysqlslap) or --engine innotune to run the clients "
        "on this computer.",
    ),
    "slap": (
        "mysqlslap was asked for, but the target has neither mariadb-slap nor mysqlslap "
        "InnoTune can log in with.",
        "Install the server's client package, or use --engine innotune.",
    ),
}


def server_pid(result: DoctorResult, session: Session | None = None) -> int | None:
    """The server's process id now, for its CPU figures.

    The instance's pid was found at login; a restart since (an apply that restarted the
    server) leaves it naming a process that is gone, so look again, the server's pid file
    first.
    """
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        return None
    session = session or result.session
    transport = where_clients_run(result)  # a container's pid file names its own pids
    pid_file = None
    if session is not None:
        try:
            pid_file = session.query("SELECT @@pid_file")[0][0]
        except (InnoTuneError, IndexError):
            pid_file = None
    return live_server_pid(transport, instance.pid, pid_file)


def cpu_probe(result: DoctorResult, session: Session | None = None) -> CpuProbe | None:
    """Reads the target's CPU around runs of InnoTune's own client (on this computer)."""
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        return None
    where = "this computer" if isinstance(transport, LocalTransport) else "link"
    return CpuProbe(where_clients_run(result), server_pid(result, session), where)
