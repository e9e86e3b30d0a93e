"""Plan quality on real data: InnoTune's starting plan on the booted Debian hosts.

Run as root from the project directory (`make bench-plan-quality` does this):

    .venv/bin/python -m tests.benchmarks.bench_plan_quality [--host sid|trixie] [--quick]

On the sid host (Oracle MySQL 9.7) and the trixie host (MariaDB 11.8), booted as the tests
boot them (tests/hosts/debian_hosts.py), it measures a write workload on a data set at least
four times the servers' default buffer pool (128 MiB): sysbench's oltp_write_only (update by
primary key, update of an indexed column, delete and insert of a row, in one transaction)
over --tables tables of --rows rows (default 8 × 400,000: 800 MiB of tablespace on sid,
768 MiB on trixie), rows chosen uniformly at random, 4 clients on this machine over the
host's socket. sysbench rather than app/bench: InnoTune's own benchmark inserts into a
scratch schema, while this needs a large data set updated at random, which is what
oltp_write_only does (and the issue's figures were measured with it). The data set is built
once per host image and row count, then kept as a tarball of the datadir under
/var/cache/innotune-tests/plan-data/; later runs unpack it instead.

At each crash-loss position ("none" = innodb_flush_log_at_trx_commit 1 / sync_binlog 1,
"os" = 2 / 0, "any" = 0 / 0) it compares:

- ``defaults``: the server's defaults at that risk (only those two settings written);
- ``InnoTune plan``: the plan `innotune plan` gives with no slider option but
  ``--crash-loss``, applied as a user applies it (`innotune apply --yes --restart` over
  SSH: snapshot, the job on the target, health check), measured, then rolled back with
  `innotune rollback`;
- a small grid of buffer pool × redo log sizes at that risk (GRID; ``--quick`` fewer).

Each configuration is applied (a restart), every table read once through both its
indexes (the data set in the buffer pool where it fits, as on a server in service), the
workload run --warmup seconds unmeasured, then measured --rounds times for --seconds each;
the table shows the median transactions/s and the spread ((max - min) / median) of the
rounds, with the machine's 1-minute load average at each round (other work on the shared
machine shows up there). bench-out/plan-quality-<host>.json holds every figure.

Targets (issue 26): the plan at least as good as "pool 8 GiB + redo 2 GiB" at every
position, at least +10 % over the defaults at "none" and +30 % at "os", and within the
spread of the grid's best. Each is printed as met or not; the exit code is 0 either way
once every figure was measured (a benchmark reports, it does not gate).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.hosts.debian_hosts import SPECS, DebianHost

REPO = Path(__file__).resolve().parents[2]
DATA_CACHE = Path(os.environ.get("INNOTUNE_PLAN_DATA_CACHE", "/var/cache/innotune-tests/plan-data"))
HOSTS = ("sid", "trixie")
POSITIONS = ("none", "os", "any")
#: The server's defaults at each risk: innodb_flush_log_at_trx_commit, sync_binlog.
AT_RISK = {"none": ("1", "1"), "os": ("2", "0"), "any": ("0", "0")}
GIB = 1024**3
MIB = 1024**2
#: (name, buffer pool bytes, redo log bytes): pool 1/8 GiB × redo 256 MiB / 2 GiB, each
#: alone and together, so the pool's and the log's shares can be told apart; bounded so a
#: host takes about half an hour.
GRID = (
    ("pool 1 GiB + redo 256 MiB", 1 * GIB, 256 * MIB),
    ("pool 1 GiB + redo 2 GiB", 1 * GIB, 2 * GIB),
    ("pool 8 GiB + redo 256 MiB", 8 * GIB, 256 * MIB),
    ("pool 8 GiB + redo 2 GiB", 8 * GIB, 2 * GIB),
)
QUICK_GRID = ("pool 1 GiB + redo 256 MiB", "pool 8 GiB + redo 2 GiB")
REFERENCE = "pool 8 GiB + redo 2 GiB"
#: The issue's targets over the defaults at each position (none: with the binary log kept).
TARGET_GAIN = {"none": 0.10, "os": 0.30}
BENCH_DROP_IN = "95-bench-plan-quality.cnf"
RETRIES = 5


def say(text: str) -> None:
    print(f"… {text}", file=sys.stderr, flush=True)


@dataclasses.dataclass
class Measured:
    """One configuration at one position: its rounds, with the load average at each."""

    position: str
    kind: str  # defaults, plan, grid
    name: str
    settings: dict[str, str]
    tps: list[float] = dataclasses.field(default_factory=list)
    loadavg: list[float] = dataclasses.field(default_factory=list)
    latency_p95_ms: list[float] = dataclasses.field(default_factory=list)
    in_force: dict[str, str] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    reconnects: int = 0  # sysbench runs started again after a failed login
    error: str = ""  # why it was not measured

    @property
    def median(self) -> float:
        return statistics.median(self.tps) if self.tps else 0.0

    @property
    def spread(self) -> float:
        if not self.tps or self.median <= 0:
            return 0.0
        return (max(self.tps) - min(self.tps)) / self.median


class Rig:
    """One booted host, its data set, and how to configure and load it."""

    def __init__(self, host: DebianHost, args: argparse.Namespace, work: Path) -> None:
        self.host = host
        self.args = args
        self.work = work
        # The host's /run is its own tmpfs: its socket is reached through systemd's root.
        self.socket = f"/proc/{host.init_pid}/root/run/mysqld/mysqld.sock"
        self.drop_in = host.root / Path(host.spec.etc_drop_in).parent.relative_to("/")
        self.drop_in = self.drop_in / BENCH_DROP_IN
        known = work / "known_hosts"
        known.write_text(host.known_hosts_line())
        self.target = [
            host.target, "--identity", str(host.client_key), "--known-hosts", str(known),
        ]  # fmt: skip
        self.env = dict(os.environ, XDG_DATA_HOME=str(work / "data"))
        self.app = Path(args.app).resolve()
        self.reconnects = 0
        # sysbench here links MariaDB's client library, whose login to MySQL's auth_socket
        # (root's plugin on Debian's MySQL) fails now and then under concurrent logins with
        # "Got packets out of order": 5 of 40 runs of 8 clients on sid, against 0 of 40 as a
        # caching_sha2_password user. So on MySQL the clients log in as their own user, over
        # the socket only, with rights on the benchmark's schema alone.
        self.user = "sbtest" if host.flavour == "mysql" else "root"

    # -- the data set -------------------------------------------------------------------

    @property
    def cache_file(self) -> Path:
        spec = self.host.spec
        name = f"{spec.suite}-{spec.key}-{self.args.tables}x{self.args.rows}.tar.zst"
        return DATA_CACHE / name

    def sysbench(self, *argv: str, seconds: float = 0, threads: int = 0) -> str:
        """sysbench oltp_write_only on this machine over the host's socket, as root."""
        cmd = [
            "sysbench", "oltp_write_only", "--db-driver=mysql",
            f"--mysql-socket={self.socket}", f"--mysql-user={self.user}", "--mysql-db=sbtest",
            f"--tables={self.args.tables}", f"--table-size={self.args.rows}",
            "--rand-type=uniform", f"--threads={threads or self.args.threads}",
            # Two clients may delete and re-insert the same row (a duplicate key), or wait on
            # each other: such a transaction is rolled back and counted, not fatal.
            "--mysql-ignore-errors=1062,1213,1205,1020",
            *([f"--time={seconds:g}", "--events=0", "--percentile=95"] if seconds else []),
            *argv,
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        for _ in range(RETRIES):
            if done.returncode == 0 or "connection creation failed" not in done.stdout:
                break
            # A client's login that still fails (see __init__ for the one cause found):
            # wait until the server answers, then start the run again (counted in the
            # table).
            say(f"{self.host.name}: a sysbench client could not log in; starting it again")
            self.reconnects += 1
            self.host.wait_for_server(timeout=300)
            time.sleep(3)
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(
                f"sysbench {' '.join(argv)} failed: {(done.stdout + done.stderr)[-2000:]}"
            )
        return done.stdout

    def add_user(self) -> None:
        """The benchmark's login on MySQL (see __init__); root's on MariaDB."""
        if self.user != "root":
            self.host.sql(
                f"CREATE USER IF NOT EXISTS '{self.user}'@'localhost' IDENTIFIED WITH "
                f"caching_sha2_password BY ''; GRANT ALL ON sbtest.* TO '{self.user}'@'localhost'"
            )

    def data_set(self) -> str:
        """The data set in the datadir: unpacked from the cache, or built and cached."""
        host = self.host
        self.add_user()
        service = host.spec.service
        datadir = host.datadir
        if self.cache_file.exists():
            started = time.monotonic()
            host.run("systemctl", "stop", service, timeout=300)
            for entry in datadir.iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            subprocess.run(
                ["tar", "-I", "zstd", "-xpf", str(self.cache_file), "--numeric-owner", "-C",
                 str(datadir)],
                check=True,
            )  # fmt: skip
            host.run("systemctl", "start", service, timeout=600)
            host.wait_for_server(timeout=300)
            self.add_user()  # a data set cached before the user existed
            return f"unpacked {self.cache_file} in {time.monotonic() - started:.0f} s"
        started = time.monotonic()
        say(f"{host.name}: building {self.args.tables} × {self.args.rows:,} rows with sysbench")
        tables = ""
        for _ in range(RETRIES):
            host.sql("DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest")
            # A prepare thread whose login fails leaves its tables unmade while sysbench
            # exits 0: one thread, and the tables counted, with the whole build again when
            # short.
            self.sysbench("prepare", threads=1)
            tables = host.sql(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'"
            )
            if tables == str(self.args.tables):
                break
            say(f"{host.name}: sysbench prepare made {tables} tables; building them again")
            self.reconnects += 1
        built = time.monotonic() - started
        if tables != str(self.args.tables):
            raise RuntimeError(f"sysbench prepare made {tables} tables, not {self.args.tables}")
        host.run("systemctl", "stop", service, timeout=600)
        DATA_CACHE.mkdir(parents=True, exist_ok=True)
        partial = self.cache_file.with_suffix(".partial")
        subprocess.run(
            ["tar", "-I", "zstd -T0", "-cpf", str(partial), "--numeric-owner", "-C",
             str(datadir), "."],
            check=True,
        )  # fmt: skip
        partial.rename(self.cache_file)
        host.run("systemctl", "start", service, timeout=600)
        host.wait_for_server(timeout=300)
        return f"built in {built:.0f} s, cached as {self.cache_file}"

    def data_bytes(self) -> int:
        """The data set's tablespace files on disk, in bytes."""
        return sum(f.stat().st_size for f in (self.host.datadir / "sbtest").glob("*.ibd"))

    # -- configurations -------------------------------------------------------------------

    def redo_key(self) -> str:
        return (
            "innodb_redo_log_capacity" if self.host.flavour == "mysql" else "innodb_log_file_size"
        )

    def write_drop_in(self, settings: dict[str, str]) -> None:
        lines = ["# bench_plan_quality: the configuration being measured", "[mysqld]"]
        lines += [f"{key} = {value}" for key, value in settings.items()]
        self.drop_in.write_text("\n".join(lines) + "\n")
        self.restart()

    def remove_drop_in(self) -> None:
        if self.drop_in.exists():
            self.drop_in.unlink()
            self.restart()

    def restart(self) -> None:
        self.host.run("systemctl", "restart", self.host.spec.service, timeout=900)
        self.host.wait_for_server(timeout=600)

    def in_force(self) -> dict[str, str]:
        names = [
            "innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin",
            "innodb_buffer_pool_size", self.redo_key(), "innodb_io_capacity",
            "innodb_io_capacity_max", "innodb_flush_method", "innodb_log_buffer_size",
        ]  # fmt: skip
        values = self.host.sql("SELECT " + ", ".join(f"@@GLOBAL.{n}" for n in names)).split("\t")
        return dict(zip(names, values, strict=True))

    def innotune(self, *argv: str) -> str:
        """`innotune` as a user runs it, in its own data directory; stdout and stderr."""
        command, rest = argv[0], argv[1:]
        done = subprocess.run(
            [sys.executable, "-m", "app", command, *self.target[:1], *rest, *self.target[1:]],
            capture_output=True,
            text=True,
            timeout=1800,
            env=dict(self.env, PYTHONPATH=str(self.app)),
            cwd=self.app,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"innotune {command} failed ({done.returncode}): "
                + (done.stdout + done.stderr)[-3000:]
            )
        return done.stdout + done.stderr

    # -- measuring ------------------------------------------------------------------------

    def measure(self, item: Measured) -> None:
        """Warm up, then --rounds rounds of --seconds each."""
        item.in_force = self.in_force()
        before = self.reconnects
        self.read_through()
        if self.args.warmup > 0:
            self.sysbench("run", seconds=self.args.warmup)
        for n in range(self.args.rounds):
            out = self.sysbench("run", seconds=self.args.seconds)
            tps = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
            p95 = re.search(r"95th percentile:\s+([\d.]+)", out)
            if tps is None:
                raise RuntimeError(f"no transaction rate in sysbench's output:\n{out}")
            item.tps.append(float(tps.group(1)))
            item.latency_p95_ms.append(float(p95.group(1)) if p95 else 0.0)
            item.loadavg.append(os.getloadavg()[0])
            say(
                f"{self.host.name} {item.position:<4} {item.name:<26} round {n + 1}: "
                f"{item.tps[-1]:>8,.0f} trx/s (load {item.loadavg[-1]:.1f})"
            )
        item.reconnects += self.reconnects - before

    def read_through(self) -> None:
        """Read every table through both its indexes once, as a server in service has.

        After a restart the buffer pool is empty: without this, a pool that can hold the
        data set spends the first minutes reading it back page by page at random, and the
        rounds measure that warm-up (it rose 664 → 844 → 1,088 trx/s over three 10 s
        rounds of the 8 GiB pool on sid), not the configuration.
        """
        for n in range(1, self.args.tables + 1):
            table = f"sbtest.sbtest{n}"
            self.host.sql(
                f"SELECT COUNT(*) FROM {table} FORCE INDEX (PRIMARY) WHERE LENGTH(c) > 0; "  # noqa: S608
                f"SELECT COUNT(*) FROM {table} FORCE INDEX (k_{n})"
            )

    def measure_settings(self, item: Measured) -> None:
        # The next configuration's drop-in replaces this one (one restart); the plan removes it.
        self.write_drop_in(item.settings)
        self.measure(item)

    def measure_plan(self, item: Measured) -> None:
        """`innotune apply --crash-loss POSITION --yes --restart`, measure, roll back."""
        self.remove_drop_in()  # the plan starts from the server as installed
        waits = self.args.apply_waits
        short = () if waits is None else ("--sample", f"{waits:g}", "--watch", f"{waits:g}")
        out = self.innotune("apply", "--crash-loss", item.position, "--yes", "--restart", *short)
        found = re.search(r"^\s*snapshot\s+(\S+)$", out, re.MULTILINE)
        if found is None:
            raise RuntimeError(f"innotune apply printed no snapshot:\n{out[-3000:]}")
        item.notes.append(out)
        try:
            self.measure(item)
        finally:
            self.innotune("rollback", found.group(1), "--yes")


def pass_orders(items: list[Measured], passes: int, reverse: bool) -> list[list[Measured]]:
    """The order of each pass over a position's configurations.

    Passes alternate direction (forward, backward, forward, ...; ``reverse`` starts
    backward), so a drift of the machine over the run (a cache filling, another job
    starting) lands on every configuration alike instead of on the ones measured last.
    """
    forward = list(items)
    orders = []
    for n in range(passes):
        backward = (n % 2 == 1) != reverse
        orders.append(list(reversed(forward)) if backward else forward)
    return orders


def configurations(position: str, rig: Rig, quick: bool) -> list[Measured]:
    """The defaults at ``position``'s risk, InnoTune's plan, and the grid."""
    trx, sync = AT_RISK[position]
    risk = {"innodb_flush_log_at_trx_commit": trx, "sync_binlog": sync}
    items = [
        Measured(position, "defaults", "defaults", dict(risk)),
        Measured(position, "plan", "InnoTune plan", {}),
    ]
    for name, pool, redo in GRID:
        if quick and name not in QUICK_GRID:
            continue
        settings = dict(risk, innodb_buffer_pool_size=str(pool))
        settings[rig.redo_key()] = str(redo)
        items.append(Measured(position, "grid", name, settings))
    return items


def verdict(items: list[Measured]) -> dict[str, Any]:
    """The issue's targets for one position, met or not, with the figures behind them."""
    position = items[0].position
    plan = next(i for i in items if i.kind == "plan")
    defaults = next(i for i in items if i.kind == "defaults")
    reference = next((i for i in items if i.name == REFERENCE), None)
    best = max(items, key=lambda i: i.median)
    margin = max(plan.spread, best.spread)
    gain = plan.median / defaults.median - 1 if defaults.median else 0.0
    checks: dict[str, bool] = {
        "within the spread of the best": plan.median >= best.median * (1 - margin),
    }
    if reference is not None:
        ref_margin = max(plan.spread, reference.spread)
        checks[f"as good as {REFERENCE} within the spread"] = bool(
            reference.tps
        ) and plan.median >= (reference.median * (1 - ref_margin))
    if position in TARGET_GAIN:
        checks[f"≥ +{TARGET_GAIN[position] * 100:.0f} % over the defaults"] = (
            gain >= TARGET_GAIN[position]
        )
    return {
        "plan_median": plan.median,
        "defaults_median": defaults.median,
        "best": best.name,
        "best_median": best.median,
        "margin": margin,
        "plan_vs_defaults": gain,
        "plan_vs_best": plan.median / best.median - 1 if best.median else 0.0,
        "checks": checks,
        "met": all(checks.values()),
    }


def table(host: str, results: dict[str, list[Measured]], verdicts: dict[str, Any]) -> str:
    head = (
        f"{'host':<6} {'crash':<5} {'configuration':<28} {'median trx/s':>12} {'spread':>7} "
        f"{'vs defaults':>11} {'p95 ms':>7} {'load avg':>13} {'again':>5}"
    )
    lines = [head, "-" * len(head)]
    for position, items in results.items():
        defaults = next(i for i in items if i.kind == "defaults").median
        for item in items:
            mark = {"plan": "* ", "defaults": "= "}.get(item.kind, "  ")
            change = (item.median / defaults - 1) * 100 if defaults else 0.0
            p95 = statistics.median(item.latency_p95_ms) if item.latency_p95_ms else 0.0
            load = f"{min(item.loadavg):.1f}-{max(item.loadavg):.1f}" if item.loadavg else "-"
            if not item.tps:
                lines.append(f"{host:<6} {position:<5} {mark + item.name:<28} not measured")
                continue
            lines.append(
                f"{host:<6} {position:<5} {mark + item.name:<28} {item.median:>12,.0f} "
                f"{item.spread * 100:>6.1f}% {change:>+10.1f}% {p95:>7.1f} {load:>13} "
                f"{item.reconnects:>5}"
            )
        v = verdicts[position]
        checks = "; ".join(f"{k}: {'yes' if ok else 'NO'}" for k, ok in v["checks"].items())
        lines.append(
            f"{host:<6} {position:<5} -> plan {v['plan_vs_defaults'] * 100:+.1f}% vs defaults, "
            f"{v['plan_vs_best'] * 100:+.1f}% vs best ({v['best']}); {checks}"
        )
    lines.append(
        "* InnoTune's starting plan   = the server's defaults at that risk   load avg: the "
        "machine's 1-minute load average over the rounds   again: sysbench runs started "
        "again after a client's login failed"
    )
    return "\n".join(lines)


def plan_lines(out: str) -> list[str]:
    """The changes lines of an apply's preview (for the record)."""
    return [line.rstrip() for line in out.splitlines() if re.match(r"^\s*[+~-]\w", line)]


def save(path: Path, meta: dict[str, Any], results: dict[str, list[Measured]], took: float) -> None:
    """Every figure so far, as JSON."""
    figures = dict(meta, took_seconds=took)
    figures["verdicts"] = {p: verdict(items) for p, items in results.items()}
    figures["results"] = {
        p: [
            {
                "kind": i.kind,
                "name": i.name,
                "settings": i.settings,
                "in_force": i.in_force,
                "tps": i.tps,
                "median": i.median,
                "spread": i.spread,
                "latency_p95_ms": i.latency_p95_ms,
                "loadavg_1min": i.loadavg,
                "sysbench_reconnects": i.reconnects,
                "error": i.error,
                "plan": [line for n in i.notes for line in plan_lines(n)],
                "apply_output": i.notes,
            }
            for i in items
        ]
        for p, items in results.items()
    }
    path.write_text(json.dumps(figures, indent=2) + "\n")


def run_host(name: str, args: argparse.Namespace, out: Path) -> str:
    """Boot ``name``, build or unpack the data, measure every position; the table."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-plan-quality-{name}-", dir="/var/tmp"))
    host = DebianHost(SPECS[name], work / "host")
    started = time.monotonic()
    try:
        host.boot()
        version = host.sql("SELECT @@version")
        rig = Rig(host, args, work)
        how = rig.data_set()
        size = rig.data_bytes()
        say(
            f"{name}: {version}, booted in {host.boot_seconds:.0f} s; "
            f"data {size / MIB:,.0f} MiB ({how})"
        )
        results: dict[str, list[Measured]] = {}
        meta = {
            "host": name,
            "version": version,
            "data_bytes": size,
            "data_set": how,
            "tables": args.tables,
            "rows": args.rows,
            "threads": args.threads,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "passes": args.passes,
        }
        for position in args.positions:
            items = configurations(position, rig, args.quick)
            for order in pass_orders(items, args.passes, args.reverse):
                for item in order:
                    if item.error:
                        continue  # lost in an earlier pass: not measured at all
                    try:
                        if item.kind == "plan":
                            rig.measure_plan(item)
                        else:
                            rig.measure_settings(item)
                    except RuntimeError as exc:  # one configuration lost, the others count
                        item.error = str(exc)[-1500:]
                        say(f"{name} {position} {item.name}: not measured: {item.error[-300:]}")
            results[position] = items
            # Written after every position, so a run stopped later keeps what it measured.
            save(out / f"plan-quality-{name}.json", meta, results, time.monotonic() - started)
        verdicts = {p: verdict(items) for p, items in results.items()}
        text = table(name, results, verdicts)
        took = time.monotonic() - started
        summary = (
            f"{name}: {version}; data set {size / MIB:,.0f} MiB ({args.tables} × {args.rows:,} "
            f"rows); sysbench oltp_write_only, {args.threads} clients, uniform; warm-up "
            f"{args.warmup:g} s, {rounds_text(args)}; "
            f"took {took / 60:.1f} min"
        )
        save(out / f"plan-quality-{name}.json", meta, results, took)
        return f"{summary}\n{text}"
    finally:
        with contextlib.suppress(Exception):
            host.poweroff()
        shutil.rmtree(work, ignore_errors=True)


def rounds_text(args: argparse.Namespace) -> str:
    """How each configuration was measured, e.g. "2 passes × 2 rounds × 15 s"."""
    rounds = f"{args.rounds} rounds × {args.seconds:g} s"
    if args.passes == 1:
        return rounds
    return f"{args.passes} passes (order alternating) × {rounds}"


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", choices=(*HOSTS, "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="two grid points, shorter rounds")
    parser.add_argument(
        "--seconds", type=float, default=None, help="per round (default 20; quick 10)"
    )
    parser.add_argument(
        "--rounds",
        "--reps",  # make bench passes bench_plans' options to every benchmark
        type=int,
        default=3,
        help="rounds per configuration (default 3)",
    )
    parser.add_argument("--warmup", type=float, default=None, help="seconds (default 10; quick 5)")
    parser.add_argument("--threads", type=int, default=4, help="clients (default 4)")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rows", type=int, default=400_000, help="rows per table")
    parser.add_argument(
        "--positions",
        type=lambda s: [p for p in s.split(",") if p],
        default=list(POSITIONS),
        help="crash-loss positions, comma-separated (default none,os,any)",
    )
    parser.add_argument(
        "--reverse",
        action="store_true",
        help="measure each position's configurations in reverse order (the plan next to "
        "last): a difference that follows the order is the machine's, not the settings'",
    )
    parser.add_argument(
        "--passes",
        type=int,
        default=1,
        help="measure each position's configurations this many times, alternating the "
        "order (each pass applies every configuration again and takes --rounds rounds)",
    )
    parser.add_argument(
        "--apply-waits",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the plan's `innotune apply` samples the server and watches it after the restart "
        "this long (default innotune's own: 10 s and 15 s); the suite's test of this benchmark "
        "gives 1",
    )
    parser.add_argument("--out", default="bench-out")
    parser.add_argument(
        "--app",
        default=str(REPO),
        help="the checkout whose innotune plans and applies (default this one; another "
        "checkout measures an older planner on the same data)",
    )
    args = parser.parse_args(argv)
    if args.seconds is None:
        args.seconds = 10.0 if args.quick else 20.0
    if args.warmup is None:
        args.warmup = 5.0 if args.quick else 10.0
    if args.passes < 1:
        parser.error("--passes is at least 1")
    if any(p not in POSITIONS for p in args.positions):
        parser.error(f"positions are {', '.join(POSITIONS)}")
    if os.geteuid() != 0:
        parser.error("run as root: it boots the Debian test hosts")
    if shutil.which("sysbench") is None:
        parser.error("sysbench is not installed (make sysdeps-test installs it)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # A stop (kill PID) still rolls the plan back and powers the host off.
    signal.signal(signal.SIGTERM, _stop)
    names = HOSTS if args.host == "both" else (args.host,)
    texts = [run_host(name, args, out) for name in names]
    text = "\n\n".join(texts)
    print(text)
    (out / "plan-quality.txt").write_text(text + "\n")
    print(f"wrote {out}/plan-quality.txt and plan-quality-<host>.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
