"""The benchmark's clients take the route the doctor found: one fresh session per client."""

from __future__ import annotations

import getpass

from app.access.database import Credentials, open_session
from app.access.doctor import DoctorResult, Secrets
from app.bench.runner import SessionFactory
from app.bench.sysbench import SysbenchRoute, find_sysbench
from app.domain.errors import InnoTuneError
from app.domain.target import Target
from app.mysql.session import Session
from app.remote.local import LocalTransport


def _sudo_ok(result: DoctorResult) -> bool:
    return result.sudo_mode in ("root", "nopasswd", "password-ok")


def session_factory(result: DoctorResult, target: Target, secrets: Secrets) -> SessionFactory:
    """Open sessions the way the doctor's login step did (same route, same account)."""
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        raise InnoTuneError("Not connected.", "Connect to the server first.")
    creds = Credentials(target.options.mysql_user, secrets.mysql_password)
    # As in the doctor: the practice server's login is our own OS account, never the relay.
    db_sudo = _sudo_ok(result) and target.kind != "practice"

    def opener() -> Session:
        return open_session(transport, instance, creds, use_sudo=db_sudo)

    return opener


def sysbench_route(
    result: DoctorResult, target: Target, secrets: Secrets, session: Session
) -> SysbenchRoute | None:
    """How to run sysbench on the target, logging in as our sessions do; None without it.

    With a database password, sysbench logs in with it; otherwise by socket identity: as
    root under sudo (the relay's account), or as ourselves on this computer.
    """
    transport, instance = result.transport, result.instance
    if transport is None or instance is None:
        return None
    user = target.options.mysql_user
    password = secrets.mysql_password
    if password is not None and user:
        return find_sysbench(
            transport, socket=instance.socket, port=instance.port, user=user, password=password
        )
    if instance.socket is None:
        return None
    current = session.query("SELECT CURRENT_USER()")[0][0] or ""
    account = current.split("@", 1)[0]
    local = isinstance(transport, LocalTransport)
    if local and account == getpass.getuser():
        return find_sysbench(transport, socket=instance.socket, port=None, user=account)
    if account == "root" and _sudo_ok(result):
        return find_sysbench(
            transport,
            socket=instance.socket,
            port=None,
            user="root",
            sudo=not transport.is_root,
        )
    return None
