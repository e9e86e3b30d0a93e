"""Time `innotune inspect` over SSH, whole process, on loopback and over a 50 ms link.

Run as root from the project directory (`make bench-inspect` does this):

    .venv/bin/python -m tests.benchmarks.bench_inspect [--runs 7] [--rtt 0.05] [--big 0]

On one private server (``--small`` tables) it times, as medians of ``--runs`` runs after a
warm-up run, the whole ``innotune inspect TARGET --sample 0`` process (start-up, login,
every doctor step, the inspection, the report) reached

- over SSH on loopback, and
- over SSH through a delaying relay (tests/hosts/slowlink.py) whose round trip is ``--rtt``;

and next to them mysqltuner and pt-mysql-summary (Debian packages) on the same server. It
counts the SSH command round trips after login of each run twice over: the transport's own
count (logged when it closes) and the session channels sshd started (its log). With
``--big N`` it also times a server with N tables (the 20-table / N-table ratio, goal ≤ 1.5).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from app.practice.server import PrivateServer
from tests.hosts.slowlink import SlowLink
from tests.hosts.sshd import SshServer, SshUsers

ROOT = Path(__file__).resolve().parents[2]
SERVER_CNF = "[mysqld]\ninnodb_buffer_pool_size = 256M\nperformance_schema = OFF\n"
TRIPS = re.compile(r": (\d+) command round trips after login")
GOALS = {"loopback": 0.7, "50 ms": 1.5}


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
    print(f"  created {tables} tables in {time.monotonic() - started:.1f} s", flush=True)
    return server


def innotune_argv() -> list[str]:
    """How a person starts InnoTune from this checkout: the console script."""
    script = Path(sys.executable).parent / "innotune"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app"]


@dataclass
class Timing:
    """Medians of whole-process inspections over one link."""

    seconds: float
    trips: int
    sessions: int


def time_cli(
    sshd: SshServer, port: int, server: PrivateServer, runs: int, user: str, home: Path
) -> Timing:
    """Median wall time of the whole inspect process; round trips and sessions per run."""
    known = home / f"known_hosts_{port}"
    known.write_text(sshd.known_hosts_line().replace(f"]:{sshd.port} ", f"]:{port} "))
    argv = [
        *innotune_argv(),
        "inspect",
        f"{user}@127.0.0.1:{port}",
        "--identity",
        str(sshd.client_key),
        "--known-hosts",
        str(known),
        "--instance",
        str(server.socket_path),
        "--sample",
        "0",
        "--json",
    ]
    env = dict(os.environ, XDG_DATA_HOME=str(home / "data"), HOME=str(home))
    env.pop("SSH_AUTH_SOCK", None)
    # As an installed program runs: from compiled bytecode (the warm-up run writes it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    log = home / "data" / "InnoTune" / "logs" / "innotune.log"
    seconds, trips, sessions = [], [], []
    for n in range(runs + 1):  # the first run warms caches and is not counted
        sshd_before = sshd.log.read_text(errors="replace").count("Starting session:")
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        elapsed = time.perf_counter() - t0
        assert done.returncode == 0, done.stderr
        assert '"server"' in done.stdout
        time.sleep(0.2)  # sshd writes its log lines as the sessions close
        found = TRIPS.findall(log.read_text())
        assert found, "the transport logged no round-trip count"
        if n:
            seconds.append(elapsed)
            trips.append(int(found[-1]))
            sessions.append(
                sshd.log.read_text(errors="replace").count("Starting session:") - sshd_before
            )
    return Timing(statistics.median(seconds), max(trips), max(sessions))


def time_tool(argv: list[str], runs: int, proof: str) -> float | None:
    """Median wall time of a third-party tool, or None when it is not installed.

    A run counts only when its report holds ``proof`` (a tool that could not log in
    ends in a fraction of a second, which is no time to compare with).
    """
    if shutil.which(argv[0]) is None or runs < 1:
        return None
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
        )
        times.append(time.perf_counter() - t0)
        assert proof in done.stdout, f"{argv[0]} gave no report:\n{done.stdout}{done.stderr}"
    return statistics.median(times)


def tools(server: PrivateServer, runs: int) -> tuple[float | None, float | None]:
    """mysqltuner's and pt-mysql-summary's median times on ``server`` (root by socket)."""
    sock = str(server.socket_path)
    tuner = time_tool(
        ["mysqltuner", "--socket", sock, "--nocolor", "--forcemem", "1024", "--forceswap", "0"],
        runs,
        "Storage Engine Statistics",
    )
    summary = time_tool(
        ["pt-mysql-summary", "--", f"--socket={sock}", "--user=root"],
        runs,
        "Percona Toolkit MySQL Summary Report",
    )
    return tuner, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tool-runs", type=int, default=3)
    parser.add_argument("--rtt", type=float, default=0.05, help="the slow link's round trip (s)")
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--big", type=int, default=0, help="also a server with this many tables")
    parser.add_argument(
        "--user",
        default="innotune-np",
        help="SSH login: a stock account with NOPASSWD sudo (default), or root. On this "
        "machine root's ~/.bashrc runs `pyenv init` (~150 ms per login shell).",
    )
    args = parser.parse_args()
    users = SshUsers()
    # A running test session may own these accounts (and their passwords): reuse them.
    made_users = subprocess.run(["id", users.np_user], capture_output=True).returncode != 0
    if made_users:
        users.create()
    fmt = lambda v: "n/a" if v is None else f"{v:.3f} s"  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="innotune-bench-") as tmp:
        sshd = SshServer(Path(tmp) / "sshd")
        sshd.start()
        link = SlowLink(sshd.host, sshd.port, rtt=args.rtt).start()
        servers: list[PrivateServer] = []
        rows = []
        try:
            for tables in [args.small] + ([args.big] if args.big else []):
                print(f"server with {tables} tables:", flush=True)
                server = make_server(Path(tmp) / f"s{tables}", tables)
                servers.append(server)
                home = Path(tmp) / f"home{tables}"
                home.mkdir()
                loop = time_cli(sshd, sshd.port, server, args.runs, args.user, home)
                slow = time_cli(sshd, link.port, server, args.runs, args.user, home)
                tuner, summary = tools(server, args.tool_runs)
                rows.append((tables, loop, slow, tuner, summary))
                server.stop()
        finally:
            for server in servers:
                server.stop()
            link.stop()
            sshd.stop()
            if made_users:
                users.remove()
    rtt_ms = f"{args.rtt * 1000:g} ms"
    print(
        f"\nSSH login {args.user}; whole `innotune inspect --sample 0` process, medians of "
        f"{args.runs} runs (tools: {args.tool_runs}); round trips: command round trips after "
        "login (transport's count / session channels in sshd's log)"
    )
    print(
        f"{'tables':>7} {'loopback':>9} {rtt_ms + ' link':>11} {'round trips':>12} "
        f"{'mysqltuner':>11} {'pt-mysql-summary':>17}"
    )
    for tables, loop, slow, tuner, summary in rows:
        print(
            f"{tables:>7} {loop.seconds:>7.3f} s {slow.seconds:>9.3f} s "
            f"{f'{slow.trips} / {slow.sessions}':>12} {fmt(tuner):>11} {fmt(summary):>17}"
        )
    tables, loop, slow, tuner, summary = rows[0]
    print()
    for name, seconds in (("loopback", loop.seconds), (rtt_ms, slow.seconds)):
        goal = GOALS.get(name if name == "loopback" else "50 ms")
        note = f" (goal ≤ {goal} s)" if goal and (name == "loopback" or args.rtt == 0.05) else ""
        print(f"inspect over {name}: {seconds:.3f} s{note}")
    print(f"command round trips after login: {max(loop.trips, slow.trips)} (goal ≤ 3)")
    if tuner:
        print(f"mysqltuner takes {tuner / loop.seconds:.1f}× our loopback inspect (goal ≥ 10×)")
    if summary:
        print(f"pt-mysql-summary takes {summary / loop.seconds:.1f}× our loopback inspect")
    if len(rows) > 1:
        big = rows[1][1].seconds
        print(f"{rows[1][0]}-table / {tables}-table inspect time: {big / loop.seconds:.2f}")


if __name__ == "__main__":
    main()
