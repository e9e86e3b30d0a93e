"""Exercise 4: what a restart costs, as a client sees it (logins polled during the restart)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.mysql import burst

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
    figures = {
        "rows": len(log.acked),
        "shutdown": stopped - asked,
        "startup": started - stopped,
        "downtime": downtime,
        "failed": failed,
    }
    lab.say(f"Clients could not log in for {downtime:.2f} s.")
    return ExerciseResult(
        exercise="restart",
        headers=["phase", "seconds"],
        rows=[
            ["shutdown (flushing dirty pages, closing)", f"{figures['shutdown']:.2f}"],
            ["start-up (recovery, opening, accepting logins)", f"{figures['startup']:.2f}"],
            ["client-visible downtime (no login answered)", f"{downtime:.2f}"],
            ["failed login attempts", str(failed)],
        ],
        chart=Chart(
            title="A restart of the practice server",
            categories=["shutdown", "start-up", "clients locked out"],
            series={"seconds": [figures["shutdown"], figures["startup"], downtime]},
            y_label="seconds",
        ),
        explanation=text_for("restart").explain(figures),
        figures=figures,
    )
