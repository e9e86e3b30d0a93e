"""Downtime of an apply that restarts the server vs one with only dynamic changes.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_apply [--reps 3] [--rows 200000]

A private MariaDB (256 MiB buffer pool, a table of ``--rows`` rows written just before
each apply, so the shutdown has dirty pages to flush) is changed through the real runner
and target job, twice per repetition:

* restart: ``innodb_log_buffer_size`` in the drop-in (needs a restart);
* dynamic: ``innodb_io_capacity`` by SET GLOBAL (plus the same value in the drop-in).

While each apply runs, a client opens a new connection and runs ``SELECT 1`` every 20 ms;
the longest stretch in which that failed is the downtime clients saw. The job's own
"restart until healthy" time is printed next to it. Each apply is rolled back (not timed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import pymysql

from app.access.database import open_session
from app.describe import dynamic, optionfile
from app.describe.actions import Host
from app.domain.plan import Change
from app.inspect.inspection import inspect
from app.inspect.instances import choose_instance, find_instances
from app.jobs import runner
from app.jobs import snapshot as snap
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport

REPO = Path(__file__).resolve().parents[2]
SERVER_CNF = (
    "[mysqld]\ninnodb_buffer_pool_size = 256M\nperformance_schema = OFF\n"
    "innodb_max_dirty_pages_pct = 90\n"
)


class Poller(threading.Thread):
    """Logs in every ``every`` seconds; records the longest time no login worked."""

    def __init__(self, socket: str, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.socket, self.every = socket, every
        self.stop = threading.Event()
        self.longest = 0.0
        self.failures = 0

    def run(self) -> None:
        down_since: float | None = None
        while not self.stop.is_set():
            try:
                conn = pymysql.connect(unix_socket=self.socket, user="root", connect_timeout=2)
                with conn.cursor() as cur:
                    cur.execute("SELECT 1")
                conn.close()
                if down_since is not None:
                    self.longest = max(self.longest, time.monotonic() - down_since)
                    down_since = None
            except pymysql.MySQLError:
                self.failures += 1
                down_since = down_since if down_since is not None else time.monotonic()
            time.sleep(self.every)
        if down_since is not None:
            self.longest = max(self.longest, time.monotonic() - down_since)


def _change(key: str, target: str, value: str) -> Change:
    return Change(
        key, "bench", target, key, None, value, "bench", "bench", target == "dynamic",
        target == "option_file", "", "checked",
    )  # fmt: skip


def _dirty(server: PrivateServer, rows: int) -> None:
    fill = f"INSERT INTO b.t (v) SELECT REPEAT('x', 200) FROM b.seq_1_to_{int(rows)}"  # noqa: S608
    server.query(
        "CREATE DATABASE IF NOT EXISTS b; CREATE TABLE IF NOT EXISTS b.t "
        "(id INT PRIMARY KEY AUTO_INCREMENT, v CHAR(200)) ENGINE=InnoDB; TRUNCATE b.t; " + fill,
        timeout=600,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="innotune-bench-apply-"))
    server = PrivateServer(base / "srv", server_cnf=SERVER_CNF)
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; "
        "from app.practice.server import PrivateServer; "
        f"PrivateServer(Path({str(server.base)!r})).restart()"
    )
    restart = [sys.executable, "-c", code]
    transport = LocalTransport()
    results: dict[str, list[tuple[float, float, float]]] = {"restart": [], "dynamic": []}
    made: list[Path] = []
    try:
        server.start()
        socket = str(server.socket_path)
        for _ in range(args.reps):
            for kind in ("restart", "dynamic"):
                _dirty(server, args.rows)
                instances = find_instances(transport)
                instance = choose_instance(instances, socket)
                session = open_session(transport, instance)
                facts = inspect(transport, instances, instance, session, sample_seconds=0)
                host = Host(facts, transport, session)
                if kind == "restart":
                    changes = [_change("innodb_log_buffer_size", "option_file", "33554432")]
                    actions = [optionfile.describe(changes, host)[0]]
                else:
                    changes = [_change("innodb_io_capacity", "dynamic", "400")]
                    actions = [
                        optionfile.describe(changes, host)[0],
                        dynamic.describe([changes[0]], host)[0],
                    ]
                session.close()
                assert facts.server is not None
                poller = Poller(socket)
                poller.start()
                began = time.monotonic()
                status = runner.apply(
                    transport,
                    actions,
                    facts.server,
                    target_label="bench",
                    local_dir=None,
                    restart_argv=restart,
                    watch_seconds=1.0,
                )
                wall = time.monotonic() - began
                poller.stop.set()
                poller.join()
                if status.state != "applied":
                    print(f"{kind}: {status.state} {status.errors}", file=sys.stderr)
                    return 1
                results[kind].append((poller.longest, status.downtime_seconds or 0.0, wall))
                back = runner.rollback(transport, status.snapshot_id or "")
                made += [
                    Path(runner.job_dir(status.job_id)),
                    Path(runner.job_dir(back.job_id)),
                    Path(snap.target_dir(status.snapshot_id or "")),
                ]
                if back.state != "rolled-back":
                    print(f"rollback: {back.state} {back.errors}", file=sys.stderr)
                    return 1
    finally:
        server.stop()
        transport.close()
        for job_or_snapshot in made:  # leave nothing in /var/lib/innotune
            shutil.rmtree(job_or_snapshot, ignore_errors=True)
    print(f"apply downtime, {args.reps} runs each, {args.rows} rows dirtied before each apply")
    print(f"{'plan':<10}{'client downtime (median/max)':>32}{'job restart':>14}{'apply wall':>13}")
    for kind, rows in results.items():
        down = [r[0] for r in rows]
        print(
            f"{kind:<10}{statistics.median(down):>20.3f} s / {max(down):.3f} s"
            f"{statistics.median(r[1] for r in rows):>12.2f} s"
            f"{statistics.median(r[2] for r in rows):>11.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
