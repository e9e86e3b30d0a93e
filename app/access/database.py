"""Choosing the route to a server's database and logging in.

Routes, in order of preference:

- with a database user and password: TCP to the server's port (through the SSH
  connection for a remote host), or its socket;
- without a password (the usual Debian/Ubuntu case, where root logs in by socket
  identity): the socket directly when we are root on this computer, otherwise a
  relay on the target started under sudo — socat if present, else python3, else
  the server's own client in batch mode. The relay logs in as the database's root
  account: it gives sudo-level database access, so it needs sudo.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.domain.container import Container
from app.domain.errors import DatabaseError
from app.domain.instance import ServerInstance
from app.mysql.relay import RELAYS, relay_argv
from app.mysql.session import ClientBatchSession, PyMySQLSession, Session
from app.remote.local import LocalTransport
from app.remote.transport import CommandResult, Transport

CLIENTS = ("mariadb", "mysql")


@dataclass(frozen=True)
class Credentials:
    """A database login; no password means "log in by socket identity"."""

    user: str | None = None
    password: str | None = None


_HAVE_SCRIPT = 'for c in "$@"; do command -v "$c" >/dev/null 2>&1 && echo "$c"; done; true'
#: The command that prints which relays and clients the target has, one per line.
PROGRAMS_ARGV = ("sh", "-c", _HAVE_SCRIPT, "sh", *RELAYS, *CLIENTS)


def programs_in(result: CommandResult) -> list[str]:
    """The program names a run of :data:`PROGRAMS_ARGV` printed."""
    return [line.strip() for line in result.out.splitlines() if line.strip()]


def available_programs(transport: Transport, names: Sequence[str]) -> list[str]:
    """Which of ``names`` the target has on its PATH (one command)."""
    result = transport.run(["sh", "-c", _HAVE_SCRIPT, "sh", *names], timeout=20)
    return programs_in(result)


def _socket_or_fail(instance: ServerInstance) -> str:
    if instance.socket is None:
        raise DatabaseError(
            f"No Unix socket was found for the server ({instance.label}).",
            "Give a database user and password so InnoTune can use the TCP port, or run "
            "with sudo so it can see the server's sockets.",
        )
    return instance.socket


def open_session(
    transport: Transport,
    instance: ServerInstance,
    credentials: Credentials = Credentials(),
    *,
    use_sudo: bool = True,
    relays: Sequence[str] = RELAYS,
    say: Callable[[str], None] = lambda _text: None,
    have: Sequence[str] | None = None,
) -> Session:
    """Log in to ``instance`` on ``transport`` by the best route; ``session.via`` names it.

    ``have``: which of the relays and clients the target has, when already asked
    (see :data:`PROGRAMS_ARGV`); otherwise one command asks.
    """
    if instance.container is not None:
        return container_session(transport, instance, credentials, use_sudo=use_sudo, say=say)
    local = isinstance(transport, LocalTransport)
    if credentials.password is not None and credentials.user:
        return _password_login(transport, instance, credentials, local, have)
    socket_path = _socket_or_fail(instance)
    if local and (transport.is_root or not use_sudo):
        user = credentials.user or getpass.getuser()
        say(f"Logging in as {user} through the socket {socket_path}")
        return PyMySQLSession.direct(user=user, socket_path=socket_path)
    if not use_sudo:
        raise DatabaseError(
            "Without sudo or a database password InnoTune cannot log in to this server.",
            "Allow sudo (the root socket login) or give --mysql-user and --ask-mysql-password.",
            "Allow sudo (the root socket login), or type a Database user and its Database "
            "password on the Connect page.",
        )
    if have is None:
        have = available_programs(transport, [*relays, *CLIENTS])
    # Logged in as root, the relay runs as it is: "under sudo" would not be true.
    how = "as root" if transport.is_root else "under sudo"
    for relay in relays:
        if relay in have:
            say(f"Logging in as root through a {relay} relay {how} to {socket_path}")
            opener = getattr(transport, "open_stream")  # noqa: B009 - both transports have it
            stream = opener(relay_argv(relay, socket_path), sudo=True)
            return PyMySQLSession.over_stream(
                stream, f"{relay} relay {how} to {socket_path}", user="root"
            )
    for client in CLIENTS:
        if client in have:
            say(f"Neither socat nor python3 found; using the {client} client in batch mode")

            def runner(argv: Sequence[str], stdin: bytes | None) -> tuple[int, str, str]:
                result = transport.run(argv, sudo=True, input=stdin, timeout=120)
                return result.exit_status, result.out, result.err

            return ClientBatchSession(runner, client, socket_path, user="root")
    raise DatabaseError(
        "The host has none of socat, python3 or the mariadb/mysql client, so InnoTune "
        "cannot reach the server's socket.",
        "Install socat (apt-get install socat), or give a database user and password for TCP.",
    )


def container_client(transport: Transport, instance: ServerInstance, *, sudo: bool) -> str:
    """The client program inside ``instance``'s container (its image's own).

    Raises:
        DatabaseError: the image has neither mariadb nor mysql.
    """
    container = instance.container
    assert container is not None
    script = "command -v mariadb || command -v mysql"
    found = transport.run([*container.exec_argv, "sh", "-c", script], sudo=sudo, timeout=30)
    names = found.out.split()
    if not names:
        raise DatabaseError(
            f"The container {container.name} has neither the mariadb nor the mysql client "
            f"({found.err.strip()[-200:] or 'exit ' + str(found.exit_status)}).",
            "InnoTune reads a server in a container through its image's own client.",
        )
    return names[0].rsplit("/", 1)[-1]


def _wants_password(err: str) -> bool:
    """True when the client's error is a login refused for lack of a password."""
    return "Access denied" in err and "using password: NO" in err


def root_password_needed(container: Container) -> DatabaseError:
    """The socket login without a password was refused: what that means and what to do."""
    named = [n for n in container.env_names if n.endswith("ROOT_PASSWORD")]
    started = f" (this one was started with {', '.join(named)})" if named else ""
    return DatabaseError(
        f"The server in {container.engine} container {container.name} wants a password for "
        "root: its login without one was refused. Images like the official mariadb and mysql "
        "ones set root's password from MARIADB_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD when the "
        f"container first starts{started}.",
        "Give that password: --mysql-user root --ask-mysql-password. It reaches the image's "
        "client on its standard input, never on a command line.",
        "Type root as the Database user and that password as the Database password, then "
        "connect again. It reaches the image's client on its standard input, never on a "
        "command line.",
    )


def container_session(
    transport: Transport,
    instance: ServerInstance,
    credentials: Credentials = Credentials(),
    *,
    use_sudo: bool = True,
    say: Callable[[str], None] = lambda _text: None,
) -> Session:
    """Log in to a server in a container through its engine's exec and the image's client.

    No port is needed: the client runs inside, next to the server, as the container's root
    (the socket login); a password, when given, travels on standard input.
    """
    container = instance.container
    assert container is not None
    sudo = use_sudo and not transport.is_root
    client = container_client(transport, instance, sudo=sudo)
    say(f"Logging in through {container.engine} exec with the {client} client in {container.name}")

    def runner(argv: Sequence[str], stdin: bytes | None) -> tuple[int, str, str]:
        result = transport.run([*container.exec_argv, *argv], sudo=sudo, input=stdin, timeout=120)
        if not result.ok and credentials.password is None and _wants_password(result.err):
            raise root_password_needed(container)
        return result.exit_status, result.out, result.err

    return ClientBatchSession(
        runner,
        client,
        "",
        user=credentials.user or "root",
        password=credentials.password if credentials.user else None,
        via=f"the {client} client inside {container.engine} container {container.name}",
    )


def _password_login(
    transport: Transport,
    instance: ServerInstance,
    cred: Credentials,
    local: bool,
    known: Sequence[str] | None,
) -> Session:
    assert cred.user is not None
    if local:
        if instance.socket and os.access(instance.socket, os.W_OK):
            return PyMySQLSession.direct(
                user=cred.user, password=cred.password, socket_path=instance.socket
            )
        if instance.port:
            return PyMySQLSession.direct(user=cred.user, password=cred.password, port=instance.port)
    elif instance.port:
        channel = transport.open_tcp("127.0.0.1", instance.port)  # type: ignore[attr-defined]
        return PyMySQLSession.over_stream(
            channel,
            f"TCP port {instance.port} through the SSH connection",
            user=cred.user,
            password=cred.password,
        )
    elif instance.socket:
        if known is None:
            have = available_programs(transport, list(RELAYS))
        else:
            have = [r for r in RELAYS if r in known]
        if have:
            stream = transport.open_stream(  # type: ignore[attr-defined]
                relay_argv(have[0], instance.socket), sudo=False
            )
            return PyMySQLSession.over_stream(
                stream,
                f"{have[0]} relay to {instance.socket}",
                user=cred.user,
                password=cred.password,
            )
    raise DatabaseError(
        f"The server ({instance.label}) has neither a TCP port nor a socket InnoTune can use.",
        "Check skip_networking and bind_address, or let InnoTune use sudo.",
    )
