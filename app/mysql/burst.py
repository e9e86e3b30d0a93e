"""Write bursts for the teaching exercises: one row per autocommit transaction, every ack recorded.

A row counts as *acknowledged* once the server has answered its INSERT (autocommit on, so
the answer is the commit's OK). The ids are chosen by the client (1, 2, 3, …), so after a
crash the surviving rows can be compared with the acknowledged ones id by id.
"""

from __future__ import annotations

import os
import pwd
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.domain.errors import InnoTuneError
from app.mysql.session import PyMySQLSession

SCHEMA = "innotune_exercises"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")


def qualified(table: str) -> str:
    """``schema.table`` for one of the exercises' own tables (a fixed, checked name)."""
    if not _NAME.fullmatch(table):
        raise ValueError(f"not an exercise table name: {table!r}")
    return f"{SCHEMA}.{table}"


def socket_user() -> str:
    """The database account the private servers give this OS account (socket login)."""
    return pwd.getpwuid(os.geteuid()).pw_name


def connect(socket_path: str, timeout: float = 10.0) -> PyMySQLSession:
    """Log in to a private server over its socket as this OS account.

    Raises:
        DatabaseError: the socket refused the connection, or the login failed.
    """
    return PyMySQLSession.direct(user=socket_user(), socket_path=socket_path, timeout=timeout)


def create_table(session: PyMySQLSession, table: str) -> None:
    """A fresh burst table in the exercises' own schema (dropped and created again)."""
    session.query(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    session.query(f"DROP TABLE IF EXISTS {qualified(table)}")
    session.query(
        f"CREATE TABLE {qualified(table)} (id BIGINT PRIMARY KEY, payload VARCHAR(100) NOT NULL)"
        " ENGINE=InnoDB"
    )


def surviving_ids(session: PyMySQLSession, table: str) -> set[int]:
    """The ids present in the table now."""
    return {int(r[0] or 0) for r in session.query(f"SELECT id FROM {qualified(table)}")}  # noqa: S608 - a checked name of our own


@dataclass
class BurstLog:
    """What a burst did: each acknowledged id with the moment (monotonic) its OK arrived."""

    acked: list[tuple[int, float]] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    error: str | None = None

    @property
    def ids(self) -> set[int]:
        """Every acknowledged id."""
        return {i for i, _ in self.acked}

    def acked_since(self, moment: float) -> int:
        """How many commits were acknowledged at or after ``moment``."""
        return sum(1 for _, at in self.acked if at >= moment)


class WriteBurst:
    """Inserts rows, one autocommit transaction each, until stopped or the server goes away."""

    def __init__(self, socket_path: str, table: str) -> None:
        self._socket = socket_path
        self._table = table
        self.log = BurstLog()
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self, seconds: float | None = None) -> BurstLog:
        """Insert until ``seconds`` pass, :attr:`stop` is set, or a statement fails."""
        session = connect(self._socket)
        sql = f"INSERT INTO {qualified(self._table)} (id, payload) VALUES (%s, %s)"  # noqa: S608 - a checked name of our own
        self.log.started = time.monotonic()
        deadline = None if seconds is None else self.log.started + seconds
        next_id = 1
        try:
            while not self.stop.is_set() and (deadline is None or time.monotonic() < deadline):
                session.query(sql, (next_id, f"row {next_id} " + "x" * 60))
                self.log.acked.append((next_id, time.monotonic()))
                next_id += 1
        except InnoTuneError as exc:
            # The expected end when the server is killed under us: the statement in flight
            # was never acknowledged, so it is not in the log.
            self.log.error = str(exc)
        finally:
            self.log.ended = time.monotonic()
            session.close()
        return self.log

    def start(self) -> None:
        """Run in a background thread (for a kill from the caller's thread)."""
        self._thread = threading.Thread(target=self.run, name="write-burst", daemon=True)
        self._thread.start()

    def join(self, timeout: float = 60.0) -> BurstLog:
        """Wait for the background run to end."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.log


def load_rows(session: PyMySQLSession, table: str, rows: int, row_bytes: int = 1000) -> None:
    """A table of ``rows`` rows of about ``row_bytes`` bytes, loaded in batches."""
    session.query(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    session.query(f"DROP TABLE IF EXISTS {qualified(table)}")
    session.query(
        f"CREATE TABLE {qualified(table)} (id INT PRIMARY KEY, n INT NOT NULL, "
        "payload VARCHAR(2000) NOT NULL) ENGINE=InnoDB"
    )
    batch = 500
    for first in range(1, rows + 1, batch):
        last = min(rows, first + batch - 1)
        values = ",".join(
            f"({i}, 0, REPEAT('{chr(65 + i % 26)}', {int(row_bytes)}))"
            for i in range(first, last + 1)
        )
        session.query(f"INSERT INTO {qualified(table)} (id, n, payload) VALUES {values}")  # noqa: S608 - a checked name of our own


def random_updates(
    socket_path: str,
    table: str,
    rows: int,
    seconds: float,
    on_tick: Callable[[int], None] | None = None,
) -> int:
    """Update random rows (one autocommit transaction each) for ``seconds``; return the count."""
    session = connect(socket_path)
    rng = random.Random(11)  # noqa: S311 - which rows, not a secret
    done = 0
    try:
        deadline = time.monotonic() + seconds
        next_tick = time.monotonic() + 1.0
        sql = f"UPDATE {qualified(table)} SET n = n + 1 WHERE id = %s"  # noqa: S608 - a checked name of our own
        while time.monotonic() < deadline:
            session.query(sql, (rng.randint(1, rows),))
            done += 1
            if on_tick and time.monotonic() >= next_tick:
                on_tick(done)
                next_tick += 1.0
    finally:
        session.close()
    return done


def try_login(socket_path: str, timeout: float = 1.0) -> bool:
    """One fresh login and ``SELECT 1``: does the server serve a client right now?"""
    try:
        session = connect(socket_path, timeout=timeout)
    except InnoTuneError:
        return False
    try:
        session.query("SELECT 1")
        return True
    except InnoTuneError:
        return False
    finally:
        session.close()
