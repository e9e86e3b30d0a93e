"""Exercise 4: what a restart costs, as a client sees it (logins polled during the restart)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.mysql import burst
from app.mysql.session import PyMySQLSession

POLL = 0.02  # seconds between login attempts


@dataclass
class Poller:
    """Tries a fresh login every POLL seconds; records (moment, answered) per attempt."""

    socket_path: str
    attempts: list[tuple[float, bool]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        """Poll until stopped."""
        while not self.stop.is_set():
            self.attempts.append((time.monotonic(), burst.try_login(self.socket_path, 1.0)))
            time.sleep(POLL)

    def downtime(self, since: float) -> tuple[float, int]:
        """Longest stretch without an answered login after ``since``, and failed attempts."""
        last_ok = since
        longest = 0.0
        failed = 0
        for at, ok in self.attempts:
            if at < since:
                if ok:
                    last_ok = at
                continue
            if ok:
                longest = max(longest, at - last_ok)
                last_ok = at
            else:
                failed += 1
        return longest, failed


def redo_resize(session: PyMySQLSession) -> str:
    """Whether this server resizes its redo log live, asked of the server itself, in words.

    MariaDB resizes innodb_log_file_size live from 10.9; MySQL resizes
    innodb_redo_log_capacity live from 8.0.30. Older servers need a restart.
    """
    version = str(session.query("SELECT VERSION()")[0][0] or "")
    if "mariadb" in version.lower():
        rows = session.query(
            "SELECT READ_ONLY FROM information_schema.SYSTEM_VARIABLES "
            "WHERE VARIABLE_NAME = 'INNODB_LOG_FILE_SIZE'"
        )
        live = bool(rows) and rows[0][0] == "NO"
        name, server = "innodb_log_file_size", f"MariaDB {version.split('-')[0]}"
    else:
        live = bool(session.query("SHOW GLOBAL VARIABLES LIKE 'innodb_redo_log_capacity'"))
        name = "innodb_redo_log_capacity" if live else "innodb_log_file_size"
        server = f"MySQL {version.split('-')[0]}"
    if live:
        return (
            f"On this server ({server}) the redo log size ({name}) changes live, without a "
            "restart; the flush method and the page size still need one."
        )
    return (
        f"On this server ({server}) the redo log size ({name}) takes effect only after a "
        "restart, like the flush method."
    )


def run(lab: Lab, *, dirty_seconds: float = 3.0) -> ExerciseResult:
    """Dirty some pages, then restart while a client keeps trying to log in."""
    server = lab.server
    server.start()
    sock = str(server.socket_path)
    table = "restart_rows"
    session = burst.connect(sock)
    try:
        burst.create_table(session, table)
        session.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        redo = redo_resize(session)
    finally:
        session.close()
    lab.say(f"Writing for {dirty_seconds:.0f} s so the shutdown has dirty pages to flush …")
    writer = burst.WriteBurst(sock, table)
    log = writer.run(dirty_seconds)
    poller = Poller(sock)
    thread = threading.Thread(target=poller.run, name="login-poller", daemon=True)
    thread.start()
    try:
        time.sleep(0.3)  # a few answered logins before the restart
        lab.say("Restarting; a client tries to log in every 20 ms …")
        asked = time.monotonic()
        server.stop()
        stopped = time.monotonic()
        server.start()
        started = time.monotonic()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
            ok for at, ok in poller.attempts if at > started
        ):
            time.sleep(POLL)
    finally:
        poller.stop.set()
        thread.join(10)
    session = burst.connect(sock)
    try:
        session.query(f"DROP TABLE IF EXISTS {burst.qualified(table)}")
    finally:
        session.close()
    downtime, failed = poller.downtime(asked)
    shutdown, startup = stopped - asked, started - stopped
    figures: dict[str, object] = {
        "rows": len(log.acked),
        "shutdown": shutdown,
        "startup": startup,
        "downtime": downtime,
        "both": shutdown + startup,
        "failed": failed,
        "redo": redo,
    }
    lab.say(f"Clients could not log in for {downtime:.2f} s.")
    return ExerciseResult(
        exercise="restart",
        headers=["phase", "seconds"],
        rows=[
            ["shutdown (asked to stop until the process is gone)", f"{shutdown:.2f}"],
            ["start-up (started until it greets a login)", f"{startup:.2f}"],
            ["client-visible downtime (no login answered)", f"{downtime:.2f}"],
            ["failed login attempts", str(failed)],
        ],
        chart=Chart(
            title="A restart of the practice server",
            categories=["shutdown", "start-up", "clients locked out"],
            # Hundredths, as the table shows them (a bar labelled 0.100633 says nothing more).
            series={
                "seconds": [
                    round(shutdown, 2),
                    round(startup, 2),
                    round(downtime, 2),
                ]
            },
            y_label="seconds",
        ),
        explanation=text_for("restart").explain(figures),
        figures=figures,
    )
