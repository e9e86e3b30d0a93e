"""Does a before/after comparison call no change no change, and a real change a change? MySQL 9.7.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_noise [--trials 10] [--seconds 30]

It boots the sid test host (Oracle MySQL 9.7 under systemd, tests/hosts/debian_hosts.py) and
runs `innotune bench` against it as a user would, over SSH, each side ``--seconds`` long in
the default rounds (3 per run, taken in turn):

* ``--trials`` pairs with identical settings: a "before" saved with ``--out``, then at once an
  "after" with ``--compare BEFORE.json --json``. No run should be called *faster* or
  *slower* (*no change* or *undecided* are both true answers); a trial passes when none is.
* one pair with a real change: innodb_flush_log_at_trx_commit 1 → 2 (SET GLOBAL) between
  the two sides, put back after. The single-row runs should be *faster*.

Prints each trial's verdicts with their intervals, the host's load average, and the totals.
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


#: The verdicts that claim a change: on identical settings, each is a false one.
CLAIMS = ("faster", "slower")


def interval(run: dict[str, Any]) -> str:
    """A run's interval of the change: "+31% to +66%", or "not bounded"."""
    low, high = run["low_percent"], run["high_percent"]
    return "not bounded" if low is None or high is None else f"{low:+.0f}% to {high:+.0f}%"


def line(data: dict[str, Any]) -> str:
    cells = []
    for run in data["runs"]:
        verdict = run["verdict"]
        if verdict == "unmeasured":
            shown = f"unmeasured (too short: {', '.join(run['too_short']) or 'too few rounds'})"
        else:
            change = run["change_percent"]
            shown = f"{verdict.replace('_', ' ')} {change:+.0f}% ({interval(run)})"
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
        claimed_runs = total_runs = 0
        for n in range(1, args.trials + 1):
            data, took = pair(cli, work)
            verdicts = [r["verdict"] for r in data["runs"]]
            claimed = sum(v in CLAIMS for v in verdicts)
            quiet += not claimed
            claimed_runs += claimed
            total_runs += len(verdicts)
            load = os.getloadavg()[0]
            said = "A CHANGE CLAIMED" if claimed else "no change claimed"
            print(
                f"same settings, trial {n}: {said} "
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
            f"\nidentical settings: {quiet} of {args.trials} trials with no run called faster or "
            f"slower ({claimed_runs} of {total_runs} runs were); {TRX} 1 -> 2: single-row runs "
            + ", ".join(f"×{r['threads']} {r['verdict']}" for r in single)
        )
        return 0
    finally:
        host.poweroff()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
