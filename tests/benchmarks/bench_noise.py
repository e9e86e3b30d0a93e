"""Does a before/after comparison call noise noise, and a real change a change? On MySQL 9.7.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_noise [--trials 10] [--seconds 30]

It boots the sid test host (Oracle MySQL 9.7 under systemd, tests/hosts/debian_hosts.py) and
runs `innotune bench` against it as a user would, over SSH, each side ``--seconds`` long in
the default rounds (3 per run, taken in turn):

* ``--trials`` pairs with identical settings: a "before" saved with ``--out``, then at once an
  "after" with ``--compare BEFORE.json --json``. Every run's verdict should be *noise*; a
  trial passes when all its runs are.
* one pair with a real change: innodb_flush_log_at_trx_commit 1 → 2 (SET GLOBAL) between
  the two sides, put back after. The single-row runs should be *faster*.

Prints each trial's verdicts with their spreads, the host's load average, and the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.hosts.debian_hosts import SPECS, DebianHost

REPO = Path(__file__).resolve().parents[2]
TRX = "innodb_flush_log_at_trx_commit"


class Cli:
    """`innotune` in a subprocess with its own data directory, against one host."""

    def __init__(self, host: DebianHost, work: Path, seconds: float) -> None:
        known = work / "known_hosts"
        known.write_text(host.known_hosts_line())
        self.env = dict(os.environ, XDG_DATA_HOME=str(work / "data"))
        self.base = [
            "bench", host.target, "--identity", str(host.client_key), "--known-hosts",
            str(known), "--seconds", f"{seconds:g}", "--sample", "1", "--yes",
        ]  # fmt: skip

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "app", *self.base, *args],
            capture_output=True,
            text=True,
            timeout=900,
            env=self.env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise RuntimeError(f"innotune bench failed: {done.stderr[-2000:]}")
        return done.stdout


def pair(cli: Cli, work: Path, between: Any = None) -> tuple[dict[str, Any], float]:
    """One before/after pair; ``between()`` runs between the sides. Returns the comparison."""
    before = work / "before.json"
    started = time.monotonic()
    cli("--out", str(before))
    if between is not None:
        between()
    data = json.loads(cli("--compare", str(before), "--json"))
    return data, time.monotonic() - started


def line(data: dict[str, Any]) -> str:
    cells = []
    for run in data["runs"]:
        spread = run["spread_percent"]
        verdict = run["verdict"]
        if verdict == "noise":
            shown = f"noise ±{spread:.0f}%"
        elif verdict == "unmeasured":
            shown = f"unmeasured (too short: {', '.join(run['too_short'])})"
        else:
            shown = f"{verdict} {run['change_percent']:+.0f}% (±{spread:.0f}%)"
        cells.append(f"{run['workload']}×{run['threads']}: {shown}")
    return "; ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30.0, help="each side's budget")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it boots the sid test host", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-noise-"))
    host = DebianHost(SPECS["sid"], work / "host")
    try:
        host.boot()
        version = host.sql("SELECT @@version")
        print(f"sid host: MySQL {version} under systemd, booted in {host.boot_seconds:.1f} s")
        print(f"each side: {args.seconds:g} s in the default rounds; {os.cpu_count()} CPUs here")
        cli = Cli(host, work, args.seconds)

        quiet = 0
        noise_runs = total_runs = 0
        for n in range(1, args.trials + 1):
            data, took = pair(cli, work)
            verdicts = [r["verdict"] for r in data["runs"]]
            all_noise = all(v == "noise" for v in verdicts)
            quiet += all_noise
            noise_runs += verdicts.count("noise")
            total_runs += len(verdicts)
            load = os.getloadavg()[0]
            print(
                f"same settings, trial {n}: {'NOISE' if all_noise else 'NOT ALL NOISE'} "
                f"({took:.0f} s, load {load:.1f}; same_settings={data['same_settings']}) "
                f"{line(data)}"
            )

        def to_two() -> None:
            host.sql(f"SET GLOBAL {TRX} = 2")

        try:
            data, took = pair(cli, work, to_two)
        finally:
            host.sql(f"SET GLOBAL {TRX} = 1")
        single = [r for r in data["runs"] if r["workload"] == "autocommit"]
        print(f"{TRX} 1 -> 2 ({took:.0f} s, changed: {data['settings_changed']}): {line(data)}")
        print(
            f"\nidentical settings: {quiet} of {args.trials} trials all noise "
            f"({noise_runs} of {total_runs} runs); {TRX} 1 -> 2: single-row runs "
            + ", ".join(f"×{r['threads']} {r['verdict']}" for r in single)
        )
        return 0
    finally:
        host.poweroff()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
