"""A steady write workload of the host's own: a rate-limited client running on the host.

It stands for an application: one ``mysql`` client on the host reads INSERT statements that
a small Python loop (the host's python3) writes at a fixed rate, each its own commit, or
``per_tx`` inserts in one transaction; or, given ``update_rows``, single-row UPDATEs at random
among that many rows of about 250 bytes (a table bigger than a small buffer pool). It runs
until stopped; nothing of it stays but its table, which :meth:`SteadyWrites.stop` drops.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from types import TracebackType
from typing import Protocol

# The loop paces itself against the clock, so a slow commit does not lower the rate for long.
_LOOP = """
import sys, time
import random
rate, per_tx, rows = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
start = time.monotonic()
n = 0
while True:
    due = start + n / rate
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    if rows:
        row = random.randint(1, rows)
        sys.stdout.write("UPDATE steady.t SET v = v + 1 WHERE id = %d;\\n" % row)
    elif per_tx > 1:
        values = ",".join("(%d)" % (n * per_tx + i) for i in range(per_tx))
        sys.stdout.write("BEGIN; INSERT INTO steady.t (v) VALUES %s; COMMIT;\\n" % values)
    else:
        sys.stdout.write("INSERT INTO steady.t (v) VALUES (%d);\\n" % n)
    sys.stdout.flush()
    n += 1
"""


class Host(Protocol):
    """What the workload needs of a booted test host."""

    def sql(self, query: str) -> str: ...

    def command(self, *argv: str) -> list[str]: ...


class SteadyWrites:
    """``rate`` commits a second into ``steady.t`` on ``host``, until stopped."""

    def __init__(self, host: Host, rate: float, per_tx: int = 1, update_rows: int = 0) -> None:
        """``update_rows``: a power of two (the table is filled by doubling), or 0 (inserts)."""
        if update_rows & (update_rows - 1):
            raise ValueError("update_rows is a power of two")
        self.host = host
        self.rate = rate
        self.per_tx = per_tx
        self.update_rows = update_rows
        self._proc: subprocess.Popen[bytes] | None = None
        self.errors = ""  # the client's stderr, once stopped

    def start(self) -> SteadyWrites:
        """Create the table and start the client."""
        pad = ", pad CHAR(230) NOT NULL" if self.update_rows else ""
        self.host.sql(
            "CREATE DATABASE IF NOT EXISTS steady; CREATE TABLE IF NOT EXISTS steady.t "
            f"(id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT{pad}) ENGINE=InnoDB"
        )
        if self.update_rows:
            # Ids 1..update_rows, each doubling numbered on from the last (no gaps).
            self.host.sql("INSERT INTO steady.t (id, v, pad) VALUES (1, 0, REPEAT('x', 230))")
            have = 1
            while have < self.update_rows:
                self.host.sql(
                    f"INSERT INTO steady.t (id, v, pad) SELECT id + {have}, v, pad FROM steady.t"  # noqa: S608
                )
                have *= 2
        pipeline = (
            f"python3 -u -c '{_LOOP}' {self.rate} {self.per_tx} {self.update_rows}"
            " | mysql --force -NB"
        )
        self._proc = subprocess.Popen(
            self.host.command("sh", "-c", pipeline),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            self._wait_steady()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_steady(self, timeout: float = 60.0) -> None:
        """Return once a second of the client's statements reaches half its rate.

        The client connects and its first commits come a moment after it starts; on a machine
        whose disk other work keeps busy a commit may wait a second and more. A test that reads
        the server's activity from a short sample must start on a running workload.
        """
        counter = "Com_update" if self.update_rows else "Com_insert"

        def count() -> int:
            row = self.host.sql(f"SHOW GLOBAL STATUS LIKE '{counter}'")
            return int(row.split()[-1])

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                self.stop()
                raise RuntimeError("the steady client stopped: " + self.errors)
            first, since = count(), time.monotonic()
            time.sleep(1.0)
            rate = (count() - first) / (time.monotonic() - since)
            if rate >= self.rate / 2:
                return
        raise TimeoutError(f"the steady client did not reach {self.rate / 2:.0f} {counter}/s")

    def running(self) -> bool:
        """The client still runs."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """Stop the client and drop its table."""
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                _, err = self._proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                _, err = self._proc.communicate(timeout=10)
            self.errors = err.decode(errors="replace")
            self._proc = None
        self.host.sql("DROP DATABASE IF EXISTS steady")

    def __enter__(self) -> SteadyWrites:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
