"""A database session: PyMySQL over any socket-like stream, or the client in batch mode."""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

import pymysql
import pymysql.converters
from pymysql.charset import charset_by_name
from pymysql.constants import CLIENT

from app.domain.errors import DatabaseError, InnoTuneError
from app.domain.threads import assert_not_gui_thread

Row = tuple[str | None, ...]
Outcome = list[Row] | InnoTuneError
"""What one statement of a batch gave: its rows, or the error it raised."""

# Errors that mean the connection itself is gone: a batch stops there.
_LINK_ERRORS = {2006, 2013, 2055}


class Session(Protocol):
    """What every database session offers: text rows, and a description of the route."""

    via: str

    def query(self, sql: str, args: Sequence[Any] | None = None) -> list[Row]:
        """Run one statement; return its rows as text (NULL as None)."""
        ...

    def close(self) -> None:
        """End the session."""
        ...


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def server_words(message: str, server_version: str) -> str:
    """PyMySQL's message with the server named by its product line.

    PyMySQL says "MySQL server" for every server ("MySQL server has gone away"); on MariaDB
    that is MariaDB's, and before the handshake (no version yet) it is only "the server".

    >>> server_words("MySQL server has gone away", "11.8.2-MariaDB-log")
    'MariaDB server has gone away'
    >>> server_words("Can't connect to MySQL server on 'db' (111)", "")
    "Can't connect to the server on 'db' (111)"
    >>> server_words("Lost connection to MySQL server during query", "9.7.0")
    'Lost connection to MySQL server during query'
    """
    if "mariadb" in server_version.lower():
        return message.replace("MySQL server", "MariaDB server")
    if not server_version:
        message = message.replace("to MySQL server", "to the server")
        return message.replace("MySQL server", "The server")
    return message


def explain_login_error(
    exc: pymysql.err.MySQLError, who: str, server_version: str = ""
) -> DatabaseError:
    """Turn a PyMySQL error into one naming the cause and the fix.

    Args:
        exc: PyMySQL's error.
        who: the login (or "the query") that failed.
        server_version: what the server announced, if it got that far (names the server).
    """
    code = exc.args[0] if exc.args else 0
    message = server_words(str(exc.args[1] if len(exc.args) > 1 else exc), server_version)
    if code == 1045:
        return DatabaseError(
            f"The server refused the login of {who}: {message}",
            "Check the database user and password, or log in with sudo so InnoTune can use "
            "the socket login of root.",
        )
    if code == 1698:
        return DatabaseError(
            f"{who} may only log in through the server's socket as the matching system user "
            f"({message}).",
            "Let InnoTune use sudo (it then logs in as root through the socket), or give a "
            "database user with a password.",
        )
    if code in (2002, 2003, 2013):
        return DatabaseError(
            f"Could not reach the server: {message}",
            "Check that the server runs and that the socket or port is right (--instance).",
            "Check that the server runs and that the socket or port is right (the Server "
            "instance box on the Connect page).",
        )
    return DatabaseError(f"Database error {code}: {message}")


def _names_known(
    conn: pymysql.connections.Connection[Any], charset: str, collation: str | None = None
) -> None:
    """What PyMySQL's ``set_character_set`` records, without asking the server again."""
    conn.charset = charset
    conn.encoding = charset_by_name(charset).encoding
    conn.collation = collation


class PyMySQLSession:
    """A PyMySQL connection over a Unix socket, TCP, an SSH channel or a relay."""

    def __init__(self, conn: pymysql.connections.Connection[Any], via: str) -> None:
        self._conn = conn
        self.via = via

    @classmethod
    def over_stream(
        cls,
        sock: Any,
        via: str,
        *,
        user: str,
        password: str | None = None,
        timeout: float = 30.0,
    ) -> PyMySQLSession:
        """Log in over an already connected socket-like object (a relay or SSH channel)."""
        assert_not_gui_thread("a database login")
        conn = pymysql.connect(
            user=user,
            password=password or "",
            defer_connect=True,
            ssl_disabled=True,  # the stream is a pipe or SSH channel; TLS cannot wrap it
            connect_timeout=timeout,
            read_timeout=timeout,
            write_timeout=timeout,
            charset="utf8mb4",
            autocommit=True,
            # Several statements in one round trip (query_many); only our own SQL is sent.
            client_flag=CLIENT.MULTI_STATEMENTS,
        )
        # The login itself already chose utf8mb4 (its character set id), so the SET NAMES
        # PyMySQL sends after it would only cost a round trip: it is left out.
        setattr(conn, "set_character_set", partial(_names_known, conn))  # noqa: B010
        try:
            conn.connect(sock=sock)
        except pymysql.err.MySQLError as exc:
            sock.close()
            raise explain_login_error(
                exc, user, str(getattr(conn, "server_version", "") or "")
            ) from None
        finally:
            delattr(conn, "set_character_set")  # the method again
        return cls(conn, via)

    @classmethod
    def direct(
        cls,
        *,
        user: str,
        password: str | None = None,
        socket_path: str | None = None,
        host: str = "127.0.0.1",
        port: int = 3306,
        timeout: float = 30.0,
    ) -> PyMySQLSession:
        """Log in over a local Unix socket or TCP."""
        assert_not_gui_thread("a database login")
        if socket_path:
            # Our own socket: PyMySQL leaks the one it makes when connecting to it fails.
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(socket_path)
            except OSError as exc:
                sock.close()
                refused = pymysql.err.OperationalError(
                    2002, f"Can't connect to the server through socket {socket_path!r} ({exc})"
                )
                raise explain_login_error(refused, user) from None
            return cls.over_stream(
                sock, f"socket {socket_path}", user=user, password=password, timeout=timeout
            )
        try:
            conn = pymysql.connect(
                user=user,
                password=password or "",
                host=host,
                port=port,
                connect_timeout=timeout,
                read_timeout=timeout,
                write_timeout=timeout,
                charset="utf8mb4",
                autocommit=True,
                client_flag=CLIENT.MULTI_STATEMENTS,
            )
        except pymysql.err.MySQLError as exc:
            raise explain_login_error(exc, user) from None
        return cls(conn, f"TCP {host}:{port}")

    @property
    def server_version(self) -> str:
        """The version the server announced when we connected (MariaDB's says MariaDB)."""
        return str(getattr(self._conn, "server_version", "") or "")

    def query_many(self, statements: Sequence[str]) -> list[Outcome]:
        """Run ``statements`` in one round trip; each gives its rows or its error.

        The server stops a batch at a failing statement, so the ones after it are sent
        again as a batch of their own: an error costs one more round trip, never a result.

        Raises:
            DatabaseError: the connection itself failed.
        """
        assert_not_gui_thread("a database query")
        outcomes: list[Outcome] = []
        rest = list(statements)
        while rest:
            got: list[Outcome] = []
            try:
                with self._conn.cursor() as cur:
                    cur.execute(";\n".join(rest))
                    got.append([tuple(_text(v) for v in row) for row in cur.fetchall()])
                    while len(got) < len(rest) and cur.nextset():
                        got.append([tuple(_text(v) for v in row) for row in cur.fetchall()])
                outcomes += got
                outcomes += [DatabaseError(f"No result for: {sql}") for sql in rest[len(got) :]]
                rest = []
            except pymysql.err.MySQLError as exc:
                code = exc.args[0] if exc.args else 0
                if code in _LINK_ERRORS or isinstance(exc, pymysql.err.InterfaceError):
                    raise explain_login_error(exc, "the query", self.server_version) from None
                outcomes += got
                outcomes.append(explain_login_error(exc, "the query", self.server_version))
                rest = rest[len(got) + 1 :]
        return outcomes

    def query(self, sql: str, args: Sequence[Any] | None = None) -> list[Row]:
        """Run one statement; rows come back as text."""
        assert_not_gui_thread("a database query")
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, args)
                return [tuple(_text(v) for v in row) for row in cur.fetchall()]
        except pymysql.err.MySQLError as exc:
            raise explain_login_error(exc, "the query", self.server_version) from None

    def close(self) -> None:
        """Close the connection (never reconnects on its own: PyMySQL's reconnect is off)."""
        try:
            self._conn.close()
        except pymysql.err.Error:
            pass


def render_sql(sql: str, args: Sequence[Any] | None) -> str:
    """Interpolate ``args`` with the server's escaping (for the batch client only)."""
    if not args:
        return sql
    return sql % tuple(pymysql.converters.escape_item(a, "utf8mb4") for a in args)


def parse_batch(text: str) -> list[Row]:
    """Rows of `mariadb --batch --skip-column-names` output, unescaped; NULL becomes None."""
    rows: list[Row] = []
    for line in text.split("\n"):
        if not line:
            continue
        rows.append(tuple(_unescape(cell) for cell in line.split("\t")))
    return rows


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "0": "\0"}


def _unescape(cell: str) -> str | None:
    if cell == "NULL":
        return None
    if "\\" not in cell:
        return cell
    out, i = [], 0
    while i < len(cell):
        ch = cell[i]
        if ch == "\\" and i + 1 < len(cell):
            out.append(_ESCAPES.get(cell[i + 1], cell[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def query_many(session: Session, statements: Sequence[str]) -> list[Outcome]:
    """Run ``statements`` in one round trip where the session can; each gives rows or error."""
    many = getattr(session, "query_many", None)
    if callable(many):
        outcomes: list[Outcome] = many(statements)
        return outcomes
    results: list[Outcome] = []
    for sql in statements:
        try:
            results.append(session.query(sql))
        except InnoTuneError as exc:
            results.append(exc)
    return results


class BatchRunner(Protocol):
    """Runs the client program on the target: (argv, stdin) → (exit status, stdout, stderr)."""

    def __call__(self, argv: Sequence[str], stdin: bytes | None) -> tuple[int, str, str]:
        """Run it."""
        ...


class ClientBatchSession:
    """The last resort: the target's own `mariadb`/`mysql` client in batch mode, per query.

    Used when neither socat nor python3 exists on the target. A password, if any,
    goes in an option file read from standard input, never on the command line.
    """

    def __init__(
        self,
        runner: BatchRunner,
        client: str,
        socket_path: str,
        user: str = "root",
        password: str | None = None,
        via: str | None = None,
    ) -> None:
        self._runner = runner
        self._client = client
        self._socket = socket_path  # empty: the client's own default (a container's image)
        self._user = user
        self._password = password
        self.via = via or f"{client} client in batch mode"
        # Each statement is a new client process: a USE is remembered and given to the next.
        self._database: str | None = None

    def query(self, sql: str, args: Sequence[Any] | None = None) -> list[Row]:
        """Run one statement through the client; parse its tab-separated output."""
        use = re.fullmatch(r"\s*USE\s+`?([^`\s;]+)`?\s*;?\s*", sql, re.IGNORECASE)
        argv = [self._client]
        stdin = None
        if self._password is not None:
            # Must come first; the option file arrives on stdin, not in argv or a file.
            argv.append("--defaults-extra-file=/dev/stdin")
            stdin = f"[client]\npassword={self._password}\n".encode()
        if self._socket:
            argv.append(f"--socket={self._socket}")
        if self._database:
            argv.append(f"--database={self._database}")
        argv += [
            f"--user={self._user}",
            "--batch",
            "--skip-column-names",
            "--default-character-set=utf8mb4",
        ]
        text = render_sql(sql, args)
        if stdin is None:
            # On standard input: a long statement (the benchmark's prefill) outgrows argv.
            stdin = text.encode() + b"\n"
        else:
            argv += ["-e", text]
        status, out, err = self._runner(argv, stdin)
        if status != 0:
            raise DatabaseError(
                f"The {self._client} client failed: {err.strip() or 'exit ' + str(status)}",
                "Check that the server runs and that this account may log in.",
            )
        if use:
            self._database = use.group(1)
        return parse_batch(out)

    def close(self) -> None:
        """Nothing stays open between queries."""
