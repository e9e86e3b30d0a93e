"""A steady write workload of the host's own: a rate-limited client running on the host.

It stands for an application: one ``mysql`` client on the host reads INSERT statements that
a small Python loop (the host's python3) writes at a fixed rate, each its own commit, or
``per_tx`` inserts in one transaction. It runs until stopped; nothing of it stays but its
table, which :meth:`SteadyWrites.stop` drops.
"""

from __future__ import annotations

import subprocess
from types import TracebackType
from typing import Protocol

# The loop paces itself against the clock, so a slow commit does not lower the rate for long.
_LOOP = """
import sys, time
rate, per_tx = float(sys.argv[1]), int(sys.argv[2])
start = time.monotonic()
n = 0
while True:
    due = start + n / rate
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    rows = ",".join("(%d)" % (n * per_tx + i) for i in range(per_tx))
    if per_tx > 1:
        sys.stdout.write("BEGIN; INSERT INTO steady.t (v) VALUES %s; COMMIT;\\n" % rows)
    else:
        sys.stdout.write("INSERT INTO steady.t (v) VALUES %s;\\n" % rows)
    sys.stdout.flush()
    n += 1
"""


class Host(Protocol):
    """What the workload needs of a booted test host."""

    def sql(self, query: str) -> str: ...

    def command(self, *argv: str) -> list[str]: ...


class SteadyWrites:
    """``rate`` commits a second into ``steady.t`` on ``host``, until stopped."""

    def __init__(self, host: Host, rate: float, per_tx: int = 1) -> None:
        self.host = host
        self.rate = rate
        self.per_tx = per_tx
        self._proc: subprocess.Popen[bytes] | None = None
        self.errors = ""  # the client's stderr, once stopped

    def start(self) -> SteadyWrites:
        """Create the table and start the client."""
        self.host.sql(
            "CREATE DATABASE IF NOT EXISTS steady; CREATE TABLE IF NOT EXISTS steady.t "
            "(id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT) ENGINE=InnoDB"
        )
        pipeline = f"python3 -u -c '{_LOOP}' {self.rate} {self.per_tx} | mysql --force -NB"
        self._proc = subprocess.Popen(
            self.host.command("sh", "-c", pipeline),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        return self

    def running(self) -> bool:
        """The client still runs."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """Stop the client and drop its table."""
        if self._proc is not None:
            import os
            import signal

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
