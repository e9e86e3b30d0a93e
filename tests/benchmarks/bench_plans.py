"""How good are InnoTune's plans? Measured on a private MariaDB on a direct-I/O loop device.

Run as root from the project directory (`make bench` does this):

    .venv/bin/python -m tests.benchmarks.bench_plans [--seconds 20] [--reps 3] [--threads 4]

For each position of "What may a crash cost?" (none, os, any) it measures, on the same
server and disk:

- the server's defaults adjusted to that risk level (only innodb_flush_log_at_trx_commit
  set: 1, 2, 0);
- InnoTune's plan for that position (the server inspected with app.inspect, planned with
  app.planner at the default positions and that crash_loss; its option-file and dynamic
  changes written as a drop-in, the server restarted; OS and disk changes are listed, not
  applied);
- every configuration of plan_grid.toml, at the same risk level.

Each is measured --reps times, the configurations taking turns, for --seconds (InnoTune's
benchmark: single-row autocommit inserts, small transactions, bulk load at --threads
clients, the time shared between them). The clients are InnoTune's load generator (the
one `innotune bench` runs on a target, one process per client over the socket), so the
client's own speed does not cap the figures; `--engine innotune` uses the in-process
client instead. Runs whose clients were the limit are counted in the table. The machine's
load average is recorded with each run: other work on the host shows up as spread.
Its score is the geometric mean of rows/s over the three workloads; the table shows the
median and the spread ((max - min) / median) of the repetitions.

A position passes when the plan's median >= the best median - max(5 %, spread) and the
plan is not below the risk-adjusted defaults by more than the same margin (the spread
being the larger of the two compared). The table is printed; bench-out/plans.json holds
every figure and bench-out/plans.png the chart.

The loop device is attached with direct I/O (losetup --direct-io=on) so the host's page
cache does not absorb the server's writes and flushes.
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import json
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from app.bench.figures import geometric_mean, median, spread
from app.bench.loadgen import LoadgenRoute, find_loadgen
from app.bench.program import TargetLogin
from app.bench.runner import Benchmark, BenchOptions
from app.domain.bench import WORKLOADS
from app.domain.facts import to_jsonable
from app.domain.plan import CRASH_LOSS, Plan
from app.mysql.session import PyMySQLSession, Session
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.loopdev import LoopFs

GRID = Path(__file__).with_name("plan_grid.toml")
TRX_COMMIT = {"none": "1", "os": "2", "any": "0"}
DROP_IN = "90-innotune-bench.cnf"
# The server's starting point: as SERVER_CNF of the practice server (a fresh install).
MAX_GRID = 8


@dataclasses.dataclass
class Measured:
    """One configuration at one position, measured --reps times."""

    position: str
    kind: str  # defaults, plan, grid
    name: str
    settings: dict[str, str]
    scores: list[float] = dataclasses.field(default_factory=list)
    per_workload: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    reports: list[Any] = dataclasses.field(default_factory=list)
    restart_seconds: float = 0.0
    error: str = ""
    loadavg: list[float] = dataclasses.field(default_factory=list)  # 1-min, after each rep

    @property
    def median(self) -> float:
        return median(self.scores)

    @property
    def spread(self) -> float:
        return spread(self.scores)


def say(text: str) -> None:
    print(f"… {text}", file=sys.stderr, flush=True)


def load_grid(path: Path) -> list[dict[str, Any]]:
    """The grid's configurations; at most 8, none touching the crash-cost setting."""
    grid = tomllib.loads(path.read_text())["config"]
    if len(grid) > MAX_GRID:
        raise SystemExit(f"{path}: at most {MAX_GRID} configurations, found {len(grid)}")
    for config in grid:
        forbidden = {"innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_doublewrite"}
        if forbidden & set(config["settings"]):
            raise SystemExit(f"{path}: {config['name']} changes what a crash may cost")
    return list(grid)


def drop_in_text(settings: dict[str, str], why: str) -> str:
    lines = [f"# bench_plans: {why}", "[mysqld]"]
    lines += [f"{key} = {value}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def plan_settings(plan: Plan) -> tuple[dict[str, str], list[str]]:
    """The plan's server settings (option file and dynamic), and the changes not applied."""
    settings: dict[str, str] = {}
    skipped: list[str] = []
    for change in plan.changes:
        if change.target in ("option_file", "dynamic"):
            settings[change.key] = change.proposed
        else:
            skipped.append(f"{change.target} {change.id} = {change.proposed}")
    return settings, skipped


class Rig:
    """The private server on the loop device, and how to configure and measure it."""

    def __init__(
        self, server: PrivateServer, seconds: float, reps: int, threads: int, engine: str
    ) -> None:
        self.server = server
        self.seconds = seconds
        self.reps = reps
        self.threads = threads
        self.route: LoadgenRoute | None = None
        if engine == "loadgen":
            # No server pid: it changes with every restart; the clients ask the socket.
            login = TargetLogin(str(server.socket_path), None, getpass.getuser())
            self.route = find_loadgen(LocalTransport(), login)
            if self.route is None:
                raise SystemExit("the load generator needs python3 >= 3.6")

    def session(self) -> Session:
        return PyMySQLSession.direct(
            user=getpass.getuser(), socket_path=str(self.server.socket_path)
        )

    def configure(self, settings: dict[str, str], why: str) -> float:
        """Write the drop-in and restart; return how long the restart took."""
        path = self.server.include_dir / DROP_IN
        path.write_text(drop_in_text(settings, why))
        started = time.monotonic()
        self.server.restart(timeout=600)
        return time.monotonic() - started

    def check_applied(self, settings: dict[str, str]) -> list[str]:
        """Settings the running server does not show as written (sizes compared in bytes)."""
        session = self.session()
        try:
            wrong = []
            for key, want in settings.items():
                rows = session.query("SELECT @@GLOBAL." + key.replace("-", "_"))
                got = (rows[0][0] or "") if rows else ""
                if _norm(got) != _norm(want):
                    wrong.append(f"{key}: wrote {want}, server has {got}")
            return wrong
        finally:
            session.close()

    def measure(self, items: list[Measured]) -> None:
        """Every configuration once per repetition, in turn.

        Interleaved rather than one configuration's repetitions in a row, so that a slow
        spell of the machine (other work, the disk's own housekeeping) spreads over every
        configuration instead of sinking one.
        """
        for rep in range(self.reps):
            for item in items:
                self.measure_once(item, rep)
        for item in items:
            say(
                f"{item.position:<4} {item.kind:<8} {item.name:<22} median "
                f"{item.median:>9,.0f} rows/s (geo-mean), spread {item.spread * 100:.1f} %"
            )

    def measure_once(self, item: Measured, rep: int) -> None:
        item.restart_seconds = self.configure(item.settings, f"{item.position} {item.name}")
        if rep == 0:
            for problem in self.check_applied(item.settings):
                say(f"note: {item.name}: {problem}")
                item.error += problem + "; "
        options = BenchOptions(
            seconds=self.seconds, threads=(self.threads,), label=f"{item.name} #{rep + 1}"
        )
        report = Benchmark(self.session, options, route=self.route, target="bench_plans").run()
        rows = {r.workload: r.rows_per_s for r in report.results}
        score = geometric_mean([rows.get(w, 0.0) for w in WORKLOADS])
        item.scores.append(score)
        item.loadavg.append(os.getloadavg()[0])
        for w in WORKLOADS:
            item.per_workload.setdefault(w, []).append(rows.get(w, 0.0))
        item.reports.append(report)
        say(f"{item.position:<4} {item.name:<22} #{rep + 1}: {score:>9,.0f} rows/s")


_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3}


def _norm(value: str) -> str:
    text = value.strip()
    if text[-1:].upper() in _UNITS and text[:-1].isdigit():
        return str(int(text[:-1]) * _UNITS[text[-1].upper()])
    return text.upper()


def plan_for(rig: Rig, position: str) -> tuple[Plan, list[str]]:
    """Inspect the server (at the risk-adjusted defaults) and plan for ``position``."""
    from app.inspect.inspection import inspect
    from app.inspect.instances import choose_instance, find_instances
    from app.knobs import default_catalogue
    from app.planner import default_positions, make_plan

    transport = LocalTransport()
    instances = find_instances(transport, sudo=False)
    instance = choose_instance(instances, str(rig.server.socket_path))
    session = rig.session()
    try:
        facts = inspect(transport, instances, instance, session, sample_seconds=2, disk_probe=True)
    finally:
        session.close()
    positions = dataclasses.replace(default_positions(facts), crash_loss=position)
    plan = make_plan(facts, positions, default_catalogue())
    return plan, [f"{c.key}: {c.reason}" for c in plan.changes]


def verdict(items: list[Measured]) -> dict[str, Any]:
    """Pass or fail for one position, with the figures behind it."""
    plan = next(i for i in items if i.kind == "plan")
    defaults = next(i for i in items if i.kind == "defaults")
    best = max(items, key=lambda i: i.median)
    margin_best = max(0.05, plan.spread, best.spread)
    margin_def = max(0.05, plan.spread, defaults.spread)
    near_best = plan.median >= best.median * (1 - margin_best)
    not_below = plan.median >= defaults.median * (1 - margin_def)
    return {
        "plan_median": plan.median,
        "best": best.name,
        "best_median": best.median,
        "defaults_median": defaults.median,
        "margin_best": margin_best,
        "margin_defaults": margin_def,
        "plan_vs_best": plan.median / best.median - 1 if best.median else 0.0,
        "plan_vs_defaults": plan.median / defaults.median - 1 if defaults.median else 0.0,
        "near_best": near_best,
        "not_below_defaults": not_below,
        "passed": near_best and not_below,
    }


def table(results: dict[str, list[Measured]], verdicts: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'crash':<5} {'configuration':<24} {'median rows/s':>13} {'spread':>7} "
        + " ".join(f"{w + ' r/s':>14}" for w in WORKLOADS)
        + f" {'vs defaults':>11}"
    )
    lines = [head, "-" * len(head)]
    for position, items in results.items():
        defaults = next(i for i in items if i.kind == "defaults").median
        for item in items:
            mark = {"plan": "* ", "defaults": "= "}.get(item.kind, "  ")
            change = (item.median / defaults - 1) * 100 if defaults else 0.0
            lines.append(
                f"{position:<5} {mark + item.name:<24} {item.median:>13,.0f} "
                f"{item.spread * 100:>6.1f}% "
                + " ".join(f"{median(item.per_workload.get(w, [])):>14,.0f}" for w in WORKLOADS)
                + f" {change:>+10.1f}%"
            )
        v = verdicts[position]
        lines.append(
            f"{position:<5} -> plan {v['plan_vs_best'] * 100:+.1f}% vs best ({v['best']}), "
            f"{v['plan_vs_defaults'] * 100:+.1f}% vs defaults; margin "
            f"{v['margin_best'] * 100:.1f}% — {'PASS' if v['passed'] else 'FAIL'}"
        )
        lines.append("")
    lines.append("* InnoTune's plan   = the server's defaults at that risk level")
    runs = [
        r for items in results.values() for i in items for rep in i.reports for r in rep.results
    ]
    bound = [r for r in runs if r.cpu is not None and r.cpu.client_bound]
    lines.append(
        "client-bound runs (the clients, not the server, set the pace): "
        f"{len(bound)} of {len(runs)}"
    )
    return "\n".join(lines)


def chart(results: dict[str, list[Measured]], path: Path) -> None:
    """A bar chart (QtCharts, rendered offscreen): defaults, plan, grid configs per position."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCharts import (
        QBarCategoryAxis,
        QBarSeries,
        QBarSet,
        QChart,
        QChartView,
        QValueAxis,
    )
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    positions = list(results)
    names: list[str] = []
    for items in results.values():
        for item in items:
            if item.name not in names:
                names.append(item.name)
    series = QBarSeries()
    top = 0.0
    for name in names:
        bar = QBarSet(name)
        for position in positions:
            found = next((i for i in results[position] if i.name == name), None)
            value = found.median if found else 0.0
            top = max(top, value)
            bar.append(value)
        series.append(bar)
    view_chart = QChart()
    view_chart.addSeries(series)
    view_chart.setTitle(
        "Write throughput (geometric mean of rows/s over the workloads), median of the reps"
    )
    x = QBarCategoryAxis()
    x.append([f"crash may cost: {p}" for p in positions])
    view_chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(x)
    y = QValueAxis()
    y.setRange(0, top * 1.1 or 1)
    y.setTitleText("rows/s")
    view_chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
    series.attachAxis(y)
    view_chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
    view = QChartView(view_chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.resize(1400, 700)
    view.grab().save(str(path))
    del app


def run(args: argparse.Namespace) -> int:
    grid = load_grid(Path(args.grid))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="innotune-bench-plans-", dir="/var/tmp"))
    fs = LoopFs(
        image=work / "disk.img", mountpoint=work / "mnt", size_mb=args.size_mb, direct_io=True
    )
    server: PrivateServer | None = None
    started = time.monotonic()
    results: dict[str, list[Measured]] = {}
    notes: dict[str, Any] = {}
    try:
        fs.attach()
        dio = (Path("/sys/block") / fs.name / "loop" / "dio").read_text().strip()
        say(f"{fs.device} on {fs.image}: direct I/O {'on' if dio == '1' else 'OFF'}")
        notes["loop"] = {"device": fs.device, "direct_io": dio == "1", "size_mb": args.size_mb}
        server = PrivateServer(fs.mountpoint / "srv")
        server.start(timeout=600)
        rig = Rig(server, args.seconds, args.reps, args.threads, args.engine)
        for position in args.positions:
            say(f"position {position}: inspecting and planning")
            rig.configure({}, "base for inspection")
            plan, reasons = plan_for(rig, position)
            settings, skipped = plan_settings(plan)
            notes[position] = {"plan_changes": reasons, "not_applied": skipped}
            items = [
                Measured(
                    position,
                    "defaults",
                    "defaults",
                    {"innodb_flush_log_at_trx_commit": TRX_COMMIT[position]},
                ),
                Measured(position, "plan", "InnoTune plan", settings),
            ]
            for config in grid:
                allowed = config.get("positions", list(CRASH_LOSS))
                if position in allowed:
                    merged = {"innodb_flush_log_at_trx_commit": TRX_COMMIT[position]}
                    merged.update({k: str(v) for k, v in config["settings"].items()})
                    items.append(Measured(position, "grid", config["name"], merged))
            rig.measure(items)
            results[position] = items
    finally:
        if server is not None:
            server.stop(timeout=600)
        fs.detach()
        for leftover in sorted(work.rglob("*"), reverse=True):
            if leftover.is_dir():
                leftover.rmdir()
        work.rmdir()
    verdicts = {p: verdict(items) for p, items in results.items()}
    text = table(results, verdicts)
    took = time.monotonic() - started
    print(text)
    print(
        f"\n{args.seconds:g} s per run, {args.reps} repetitions, {args.threads} clients "
        f"({args.engine}); "
        f"took {took / 60:.1f} minutes"
    )
    figures = {
        "seconds": args.seconds,
        "reps": args.reps,
        "threads": args.threads,
        "engine": args.engine,
        "took_seconds": took,
        "notes": notes,
        "verdicts": verdicts,
        "results": {
            p: [
                {
                    "kind": i.kind,
                    "name": i.name,
                    "settings": i.settings,
                    "scores": i.scores,
                    "median": i.median,
                    "spread": i.spread,
                    "per_workload": i.per_workload,
                    "restart_seconds": i.restart_seconds,
                    "loadavg_1min": i.loadavg,
                    "not_applied_as_written": i.error,
                    "reports": [to_jsonable(r) for r in i.reports],
                }
                for i in items
            ]
            for p, items in results.items()
        },
    }
    (out / "plans.json").write_text(json.dumps(figures, indent=2) + "\n")
    (out / "plans.txt").write_text(text + "\n")
    chart(results, out / "plans.png")
    print(f"wrote {out / 'plans.json'}, {out / 'plans.txt'} and {out / 'plans.png'}")
    return 0 if all(v["passed"] for v in verdicts.values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=20.0, help="per run (default 20)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument("--threads", type=int, default=4, help="client sessions (default 4)")
    parser.add_argument(
        "--positions",
        type=lambda s: [p for p in s.split(",") if p],
        default=list(CRASH_LOSS),
        help="crash-cost positions, comma-separated (default none,os,any)",
    )
    parser.add_argument("--grid", default=str(GRID), help="the grid of configurations (TOML)")
    parser.add_argument("--out", default="bench-out", help="where the table, JSON, PNG go")
    parser.add_argument("--size-mb", type=int, default=4096, help="loop device size")
    parser.add_argument(
        "--engine",
        choices=("loadgen", "innotune"),
        default="loadgen",
        help="the clients: InnoTune's load generator (default) or its in-process client",
    )
    args = parser.parse_args(argv)
    if any(p not in CRASH_LOSS for p in args.positions):
        parser.error(f"positions are {', '.join(CRASH_LOSS)}")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
