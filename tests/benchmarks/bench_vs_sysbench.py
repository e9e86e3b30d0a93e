"""Does `innotune bench` over SSH measure the server as sysbench does?

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_vs_sysbench [--seconds 10] [--threads 4] [--rounds 3]

On one private MariaDB (this machine), at innodb_flush_log_at_trx_commit 1 and then 0 (set
live), each workload at 1 and N clients is measured by:

- **sysbench** on this machine, over the server's socket, running the benchmark's own
  statements (``app/bench/sysbench.py``'s Lua script) — the reference;
- **`innotune bench` over SSH** (the tests' real sshd on 127.0.0.1, the NOPASSWD sudo user,
  the database reached through the relay under sudo, as on a Debian host): the clients are
  InnoTune's load generator, sent to the target and run by its python3 (``--engine loadgen``);
- **`innotune bench --engine slap`** over SSH: the target's mariadb-slap / mysqlslap running
  the same statements (the fallback for a host with only the server and its client);
- with ``--old``, also `innotune bench --engine innotune` over the same SSH link: InnoTune's
  own client on this side of the link (the benchmark before the load generator).

For each workload the engines run back to back, in alternating order, ``--rounds`` times; the
table shows median rates and, for each row, the median of the rounds' ratios InnoTune /
sysbench (paired, so a slow spell of the shared disk falls on both); for each engine the gain
from trx_commit 1 to 0. It passes when every commit-rate ratio of the engines of
``--engines`` lies within 15 % of 1; the ratio of the two gains (which carries the error of
two ratios) is printed with it.
The machine's other work shows up as spread: run it on a quiet machine. bench-out/
vs_sysbench.json holds every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from app.bench.figures import median
from app.bench.program import TargetLogin
from app.bench.runner import Benchmark, BenchOptions
from app.bench.sysbench import find_sysbench
from app.cli import run_cli
from app.domain.bench import BenchReport
from app.mysql.session import PyMySQLSession, Session
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.sshd import SshServer, SshUsers

TOLERANCE = 0.15
SETTINGS = ("1", "0")


def _opener(server: PrivateServer) -> Session:
    return PyMySQLSession.direct(user=getpass.getuser(), socket_path=str(server.socket_path))


def _set_trx(server: PrivateServer, value: str) -> None:
    session = _opener(server)
    try:
        session.query(f"SET GLOBAL innodb_flush_log_at_trx_commit = {int(value)}")
    finally:
        session.close()


def run_sysbench(
    server: PrivateServer, workloads: tuple[str, ...], seconds: float, threads: int
) -> BenchReport:
    """The reference: sysbench on this machine over the socket, the benchmark's statements."""
    login = TargetLogin(str(server.socket_path), None, getpass.getuser())
    route = find_sysbench(LocalTransport(), login, server.running_pid())
    if route is None:
        raise SystemExit("sysbench 1.x is not installed (make sysdeps-test)")
    options = BenchOptions(
        seconds=seconds * 2 * len(workloads), threads=(1, threads), workloads=workloads
    )
    return Benchmark(lambda: _opener(server), options, route=route, target="sysbench").run()


def run_innotune(
    target: list[str], engine: str, workloads: tuple[str, ...], seconds: float, threads: int
) -> BenchReport:
    """`innotune bench` over SSH, as a user types it (its JSON output read back)."""
    argv = ["bench", *target, "--engine", engine, "--workloads", ",".join(workloads)]
    argv += ["--seconds", str(seconds * 2 * len(workloads)), "--threads", str(threads)]
    argv += ["--sample", "0.2", "--yes", "--json"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_cli(argv)
    if status != 0:
        raise SystemExit(f"innotune bench failed ({status}):\n{err.getvalue()}")
    return BenchReport.from_json(out.getvalue())


def main() -> int:
    """Measure, print the table, save the figures; 0 when every ratio is within 15 %."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per run (10)")
    parser.add_argument("--threads", type=int, default=4, help="N, the larger client count (4)")
    parser.add_argument("--rounds", type=int, default=3, help="turns of each engine (3)")
    parser.add_argument(
        "--workloads", default="autocommit,small_tx", help="workloads (autocommit,small_tx)"
    )
    parser.add_argument(
        "--engines",
        default="loadgen,slap",
        help="`innotune bench --engine` values measured against sysbench, each held to the "
        "15 %% bound (default loadgen,slap)",
    )
    parser.add_argument(
        "--old",
        action="store_true",
        help="also InnoTune's own client over SSH (shown, not held to the bound)",
    )
    parser.add_argument("--out", default="bench-out/vs_sysbench.json")
    parser.add_argument(
        "--table-from",
        metavar="JSON",
        help="print the table of an earlier run's JSON, measure nothing",
    )
    args = parser.parse_args()
    if args.table_from:
        saved = json.loads(Path(args.table_from).read_text())
        for key, value in saved["args"].items():
            if key not in ("table_from", "out"):
                setattr(args, key, value)
        args.out = args.table_from + ".again"
        return _table(
            saved["commits_per_s"],
            {k: [(c, s, bool(b)) for c, s, b in v] for k, v in saved["cpu"].items()},
            ["sysbench", *_engines(args)],
            tuple(w for w in args.workloads.split(",") if w),
            args,
        )
    if os.geteuid() != 0:
        print("run as root: it starts an sshd and logs in as a sudo test user", file=sys.stderr)
        return 2
    if shutil.which("sysbench") is None:
        print("sysbench is not installed (make sysdeps-test)", file=sys.stderr)
        return 2
    workloads = tuple(w for w in args.workloads.split(",") if w)
    engines = ["sysbench", *_engines(args)]
    work = Path(tempfile.mkdtemp(prefix="innotune-vs-sysbench-"))
    server = PrivateServer(work / "srv")
    users = SshUsers()
    sshd = SshServer(work / "sshd")
    figures: dict[str, dict[str, list[float]]] = {}
    cpu: dict[str, list[tuple[float | None, float | None, bool]]] = {}
    try:
        server.start()
        users.create()
        sshd.start()
        known = work / "known_hosts"
        known.write_text(sshd.known_hosts_line())
        target = [
            f"{users.np_user}@{sshd.host}:{sshd.port}",
            "--identity",
            str(sshd.client_key),
            "--known-hosts",
            str(known),
            "--instance",
            str(server.socket_path),
        ]
        # Each workload's engines back to back, their order alternating: the machine's slow
        # spells (the disk's flushes, other work) fall on both, and each round's pair of
        # runs gives one ratio.
        turn = 0
        for round_no in range(args.rounds):
            for trx in SETTINGS:
                _set_trx(server, trx)
                for workload in workloads:
                    turn += 1
                    order = engines if turn % 2 else engines[::-1]
                    for engine in order:
                        if engine == "sysbench":
                            report = run_sysbench(server, (workload,), args.seconds, args.threads)
                        else:
                            report = run_innotune(
                                target, engine, (workload,), args.seconds, args.threads
                            )
                        assert report.settings["innodb_flush_log_at_trx_commit"] == trx
                        for r in report.results:
                            key = f"{trx}|{r.workload}|{r.threads}"
                            figures.setdefault(key, {}).setdefault(engine, []).append(
                                r.commits_per_s
                            )
                            c = r.cpu
                            cpu.setdefault(f"{key}|{engine}", []).append(
                                (
                                    c.client_cores if c else None,
                                    c.server_cores if c else None,
                                    bool(c and c.client_bound),
                                )
                            )
                        print(
                            f"… round {round_no + 1}/{args.rounds}, trx_commit={trx}, "
                            f"{engine}: "
                            + ", ".join(
                                f"{r.workload}×{r.threads} {r.commits_per_s:,.0f}/s"
                                for r in report.results
                            ),
                            file=sys.stderr,
                            flush=True,
                        )
    finally:
        _stop(sshd, users, server)
        shutil.rmtree(work, ignore_errors=True)
    return _table(figures, cpu, engines, workloads, args)


def _stop(sshd: SshServer, users: SshUsers, server: PrivateServer) -> None:
    for stop in (sshd.stop, users.remove, server.stop):
        try:
            stop()
        except Exception as exc:  # noqa: BLE001 - the rest still need stopping
            print(f"cleanup: {exc}", file=sys.stderr)


def _med_cpu(rows: list[tuple[float | None, float | None, bool]]) -> str:
    client = [c for c, _, _ in rows if c is not None]
    server = [s for _, s, _ in rows if s is not None]
    bound = sum(1 for _, _, b in rows if b)
    text = f"{median(client):.2f} / {median(server):.2f}" if client and server else "—"
    return text + (f" (client-bound {bound}/{len(rows)})" if bound else "")


def paired(per_engine: dict[str, list[float]], engine: str) -> float:
    """The median of each round's ratio engine / sysbench (runs of one round ran back to back)."""
    pairs = zip(per_engine.get(engine, []), per_engine.get("sysbench", []), strict=False)
    return median([x / ref for x, ref in pairs if ref > 0])


def _engines(args: argparse.Namespace) -> list[str]:
    listed = [e for e in getattr(args, "engines", "loadgen").split(",") if e]
    return listed + (["innotune"] if args.old and "innotune" not in listed else [])


TITLES = {
    "loadgen": "loadgen (python3 on the target)",
    "slap": "slap (mysqlslap on the target)",
    "innotune": "innotune (client here, over SSH)",
}


def _table(
    figures: dict[str, dict[str, list[float]]],
    cpu: dict[str, list[tuple[float | None, float | None, bool]]],
    engines: list[str],
    workloads: tuple[str, ...],
    args: argparse.Namespace,
) -> int:
    med = {k: {e: median(v) for e, v in per.items()} for k, per in figures.items()}
    measured = [e for e in engines if e != "sysbench"]
    judged = [e for e in measured if e != "innotune" or "innotune" in args.engines.split(",")]
    ok = True
    print()
    print(
        f"sysbench vs `innotune bench` over SSH: one private MariaDB, {args.seconds:.0f} s "
        f"per run, medians of {args.rounds} rounds, commits/s; ratio: the median of each "
        "round's InnoTune / sysbench (the two ran back to back); CPU: client / server cores"
    )
    print()
    head = "| trx_commit | workload | clients | sysbench |"
    for e in measured:
        head += f" {TITLES.get(e, e)} | ratio | CPU |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    threads = sorted({int(k.split("|")[2]) for k in med})
    for trx in SETTINGS:
        for w in workloads:
            for t in threads:
                key = f"{trx}|{w}|{t}"
                m = med.get(key, {})
                line = f"| {trx} | {w} | {t} | {m.get('sysbench', 0.0):,.0f} |"
                for e in measured:
                    ratio = paired(figures.get(key, {}), e)
                    if e in judged:
                        ok = ok and abs(ratio - 1) <= TOLERANCE
                    line += (
                        f" {m.get(e, 0.0):,.0f} | {ratio:.2f} | "
                        f"{_med_cpu(cpu.get(f'{key}|{e}', []))} |"
                    )
                print(line)
    print()
    gains: list[float] = []
    print("Gain from innodb_flush_log_at_trx_commit 1 to 0 (commits/s at 0 ÷ at 1); the")
    print("engine's gain ÷ sysbench's from the paired ratios (slow spells cancel in each pair):")
    print()
    gain_head = "| workload | clients | sysbench |"
    for e in measured:
        gain_head += f" {e} | {e} gain ÷ sysbench's |"
    print(gain_head)
    print("|" + "---|" * (gain_head.count("|") - 1))
    for w in workloads:
        for t in threads:
            one, zero = med.get(f"1|{w}|{t}", {}), med.get(f"0|{w}|{t}", {})

            def gain(
                engine: str, one: dict[str, float] = one, zero: dict[str, float] = zero
            ) -> float:
                return zero.get(engine, 0.0) / one[engine] if one.get(engine) else 0.0

            line = f"| {w} | {t} | {gain('sysbench'):.2f}× |"
            for e in measured:
                at_one = paired(figures.get(f"1|{w}|{t}", {}), e)
                at_zero = paired(figures.get(f"0|{w}|{t}", {}), e)
                of_gains = at_zero / at_one if at_one else 0.0
                if e in judged:
                    gains.append(of_gains)
                line += f" {gain(e):.2f}× | {of_gains:.2f} |"
            print(line)
    print()
    print(
        f"{'PASS' if ok else 'FAIL'}: every commit-rate ratio of {', '.join(judged)} to "
        f"sysbench {'is' if ok else 'is not'} within {TOLERANCE:.0%} of 1; their gains are "
        f"{min(gains, default=0):.2f}-{max(gains, default=0):.2f} × sysbench's"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"args": vars(args), "commits_per_s": figures, "cpu": cpu, "medians": med},
            indent=1,
            default=str,
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
