"""Time a whole inspection over SSH on loopback, with 20 and with 20,000 tables.

Run as root from the project directory (`make bench-inspect` does this):

    .venv/bin/python -m tests.benchmarks.bench_inspect [--runs 7] [--big 20000]

For each server it prints the median time of connecting (the doctor's steps) and of the
inspection itself (no sampling), the remote command runs the inspection used, and the
ratio 20,000-table time / 20-table time (the goal: at most 1.5). On the same server it
times mysqltuner and pt-mysql-summary (Debian packages) and prints our time next to theirs.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.domain.target import ConnectOptions, parse_target
from app.inspect.inspection import inspect
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.remote.transport import CommandResult
from tests.hosts.sshd import SshServer, SshUsers

SERVER_CNF = "[mysqld]\ninnodb_buffer_pool_size = 256M\nperformance_schema = OFF\n"


class Counting:
    """A transport wrapper that counts command runs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.runs = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, argv: Sequence[str], **kw: Any) -> CommandResult:
        self.runs += 1
        return self.inner.run(argv, **kw)  # type: ignore[no-any-return]


def make_server(base: Path, tables: int) -> PrivateServer:
    """A private server holding ``tables`` small InnoDB tables in schema bench_t."""
    server = PrivateServer(base, server_cnf=SERVER_CNF)
    server.start()
    sql = ["CREATE DATABASE IF NOT EXISTS bench_t;", "USE bench_t;"]
    sql += [
        f"CREATE TABLE t{i:05d} (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" for i in range(tables)
    ]
    started = time.monotonic()
    subprocess.run(
        [*server.client_argv()],
        input="\n".join(sql),
        text=True,
        check=True,
        capture_output=True,
        timeout=3600,
    )
    print(f"  created {tables} tables in {time.monotonic() - started:.1f} s")
    return server


def time_inspection(
    sshd: SshServer, server: PrivateServer, runs: int, user: str
) -> tuple[float, float, int]:
    """Median connect time, median inspection time (s), remote command runs per inspection."""
    known = sshd.workdir / "bench_known_hosts"
    known.write_text(sshd.known_hosts_line())
    target = parse_target(
        f"{user}@{sshd.host}:{sshd.port}",
        ConnectOptions(
            identity=str(sshd.client_key), known_hosts=str(known), instance=str(server.socket_path)
        ),
    )
    connects, inspections, command_runs = [], [], 0
    for _ in range(runs + 1):  # the first run warms caches and is not counted
        t0 = time.perf_counter()
        result = DoctorResult()
        steps = list(
            run_doctor(target, Secrets(), result, opener=open_transport, own_known_hosts=str(known))
        )
        t1 = time.perf_counter()
        assert result.ok, [s.line() for s in steps]
        assert result.transport and result.instance and result.session
        counting = Counting(result.transport)
        facts = inspect(
            counting,
            result.instances,
            result.instance,
            result.session,  # type: ignore[arg-type]
            sample_seconds=0,
        )
        t2 = time.perf_counter()
        result.close()
        assert facts.server is not None
        connects.append(t1 - t0)
        inspections.append(t2 - t1)
        command_runs = counting.runs
    return statistics.median(connects[1:]), statistics.median(inspections[1:]), command_runs


def time_tool(argv: list[str], runs: int) -> float | None:
    """Median wall time of a third-party tool, or None when it is not installed."""
    if shutil.which(argv[0]) is None:
        return None
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            argv, capture_output=True, timeout=600, check=False, stdin=subprocess.DEVNULL
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--big", type=int, default=20000)
    parser.add_argument(
        "--user",
        default="innotune-np",
        help="SSH login: a stock account with NOPASSWD sudo (default), or root. On this "
        "machine root's ~/.bashrc runs `pyenv init`, which adds ~150 ms to every command.",
    )
    args = parser.parse_args()
    users = SshUsers()
    # A running test session may own these accounts (and their passwords): reuse them.
    made_users = subprocess.run(["id", users.np_user], capture_output=True).returncode != 0
    if made_users:
        users.create()
    with tempfile.TemporaryDirectory(prefix="innotune-bench-") as tmp:
        sshd = SshServer(Path(tmp) / "sshd")
        sshd.start()
        servers: list[PrivateServer] = []
        try:
            rows = []
            for tables in (args.small, args.big):
                print(f"server with {tables} tables:")
                server = make_server(Path(tmp) / f"s{tables}", tables)
                servers.append(server)
                connect, inspection, command_runs = time_inspection(
                    sshd, server, args.runs, args.user
                )
                sock = str(server.socket_path)
                tuner = time_tool(
                    [
                        "mysqltuner",
                        "--socket",
                        sock,
                        "--user",
                        "root",
                        "--pass",
                        "",
                        "--nocolor",
                        "--forcemem",
                        "1024",
                        "--forceswap",
                        "0",
                    ],
                    3,
                )
                summary = time_tool(
                    ["pt-mysql-summary", "--", f"--socket={sock}", "--user=root"], 3
                )
                rows.append((tables, connect, inspection, command_runs, tuner, summary))
                server.stop()
        finally:
            for server in servers:
                server.stop()
            sshd.stop()
            if made_users:
                users.remove()
    print(f"SSH login: {args.user}")
    print(
        f"{'tables':>7} {'connect':>9} {'inspect':>9} {'runs':>5} {'mysqltuner':>11} "
        f"{'pt-mysql-summary':>17}  (medians of {args.runs}; tools: 3)"
    )
    for tables, connect, inspection, runs, tuner, summary in rows:
        fmt = lambda v: "n/a" if v is None else f"{v:.3f} s"  # noqa: E731
        print(
            f"{tables:>7} {connect:>7.3f} s {inspection:>7.3f} s {runs:>5} {fmt(tuner):>11} "
            f"{fmt(summary):>17}"
        )
    small, big = rows[0][2], rows[1][2]
    print(
        f"\n{args.big}-table / {args.small}-table inspection time: {big / small:.2f} (goal ≤ 1.5)"
    )
    for tables, _c, inspection, _r, tuner, summary in rows:
        if tuner:
            print(f"{tables} tables: mysqltuner takes {tuner / inspection:.1f}× our inspection")
        if summary:
            print(f"{tables} tables: pt-mysql-summary takes {summary / inspection:.1f}× ours")


if __name__ == "__main__":
    main()
