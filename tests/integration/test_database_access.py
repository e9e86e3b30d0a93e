"""Finding instances and logging in, against the real servers on this machine."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest

from app.access.database import Credentials, open_session
from app.domain.errors import DatabaseError
from app.inspect.instances import choose_instance, find_instances
from app.mysql.relay import relay_argv
from app.mysql.session import ClientBatchSession, PyMySQLSession
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.debian_mariadb import DebianMariaDB


def test_two_instances_found_and_chosen(
    debian_mariadb: DebianMariaDB, private_server: PrivateServer
) -> None:
    transport = LocalTransport()
    instances = find_instances(transport)
    by_socket = {i.socket: i for i in instances}
    debian = by_socket[debian_mariadb.socket]
    private = by_socket[str(private_server.socket_path)]
    assert debian.started_by == "sysv" and debian.service == "mariadb"
    assert private.ports == (private_server.port,)
    chosen = choose_instance(instances, str(private_server.port))
    session = open_session(transport, chosen)
    try:
        datadir = session.query("SELECT @@datadir")[0][0]
    finally:
        session.close()
    assert datadir is not None and datadir.rstrip("/") == str(private_server.datadir)


@pytest.mark.parametrize("relay", ["socat", "python3"])
def test_relays_speak_the_protocol(debian_mariadb: DebianMariaDB, relay: str) -> None:
    transport = LocalTransport()
    stream = transport.open_stream(relay_argv(relay, debian_mariadb.socket))
    session = PyMySQLSession.over_stream(stream, relay, user="root")
    try:
        rows = session.query("SELECT CURRENT_USER(), %s", ["it's"])
    finally:
        session.close()
    assert rows == [("root@localhost", "it's")]


def test_batch_client_route(debian_mariadb: DebianMariaDB) -> None:
    transport = LocalTransport()

    def runner(argv, stdin):  # type: ignore[no-untyped-def]
        result = transport.run(argv, input=stdin)
        return result.exit_status, result.out, result.err

    session = ClientBatchSession(runner, "mariadb", debian_mariadb.socket)
    rows = session.query("SELECT @@version_comment, NULL, %s", ["tab\there"])
    assert rows[0][1] is None and rows[0][2] == "tab\there"


def test_password_login_over_tcp_and_wrong_password(private_server: PrivateServer) -> None:
    private_server.query(
        "CREATE USER 'tuner'@'127.0.0.1' IDENTIFIED BY 's3cret-Pw'; "
        "GRANT SELECT, PROCESS ON *.* TO 'tuner'@'127.0.0.1'"
    )
    transport = LocalTransport()
    inst = choose_instance(find_instances(transport), str(private_server.port))
    # TCP: force it by hiding the socket from the password route
    from dataclasses import replace

    tcp_only = replace(inst, sockets=())
    session = open_session(transport, tcp_only, Credentials("tuner", "s3cret-Pw"))
    try:
        assert session.query("SELECT CURRENT_USER()") == [("tuner@127.0.0.1",)]
        assert "TCP" in session.via
    finally:
        session.close()
    with pytest.raises(DatabaseError, match="refused the login"):
        open_session(transport, tcp_only, Credentials("tuner", "wrong"))


def test_socket_login_and_a_stopped_server_leaks_no_socket(tmp_path: Path) -> None:
    """A login through a server's socket works; once the server is stopped, the login fails
    clearly, and no socket is left for the garbage collector (the suite turns its
    ResourceWarning into an error: PyMySQL's own socket was leaked this way)."""
    server = PrivateServer(tmp_path / "srv")
    server.start()
    try:
        session = PyMySQLSession.direct(user="root", socket_path=str(server.socket_path))
        try:
            assert session.query("SELECT 1") == [("1",)]
            assert session.via == f"socket {server.socket_path}"
        finally:
            session.close()
    finally:
        server.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        with pytest.raises(DatabaseError, match="Could not reach the server") as caught:
            PyMySQLSession.direct(user="root", socket_path=str(server.socket_path))
        assert caught.value.fix and "--instance" in caught.value.fix
        del caught
        gc.collect()


def test_a_lost_session_names_mariadb_not_mysql(private_server: PrivateServer) -> None:
    """PyMySQL says "MySQL server has gone away" to every server; a MariaDB is named so."""
    session = PyMySQLSession.direct(user="root", socket_path=str(private_server.socket_path))
    killer = PyMySQLSession.direct(user="root", socket_path=str(private_server.socket_path))
    try:
        assert "MariaDB" in session.server_version
        (own,) = session.query("SELECT CONNECTION_ID()")
        killer.query(f"KILL CONNECTION {int(own[0] or 0)}")
        with pytest.raises(DatabaseError) as caught:
            session.query("SELECT 1")
        text = str(caught.value)
        assert "MySQL server" not in text, text
        assert "MariaDB server" in text, text
    finally:
        session.close()
        killer.close()
