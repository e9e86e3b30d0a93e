"""`innotune watch` on a busy host: a real change reads *better*, no change reads neither.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_watch [--host trixie] [--trials 5]
        [--seconds 10] [--rate 100] [--cpu-loops 2]

It boots a test host (tests/hosts/debian_hosts.py), starts the host's own steady client
(tests/hosts/workload.py: ``--rate`` single-row commits a second) and, with ``--cpu-loops``
busy loops on this machine keeping its CPUs loaded, runs per trial two pairs as a user would:
``innotune watch --out A``, then ``innotune watch --compare A --json``:

(a) innodb_flush_log_at_trx_commit 1 → 2 set live between the two watches (put back after):
    fsyncs per commit must be reported *better*;
(b) nothing changed: no figure may be reported better or worse.

Prints per pair the traffic of both sides, each judged figure's verdict and change, the load
average and the time taken; exits 1 when (a) or (b) fails in any trial.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.hosts.debian_hosts import SPECS, DebianHost
from tests.hosts.workload import SteadyWrites

REPO = Path(__file__).resolve().parents[2]


def _spin(stop: Any) -> None:
    while not stop.is_set():
        pass


def load() -> str:
    """The machine's load average (1, 5, 15 min)."""
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def watch(host: DebianHost, work: Path, seconds: float, *extra: str) -> dict[str, Any]:
    """One `innotune watch` against ``host``; its JSON."""
    known = work / "known_hosts"
    known.write_text(host.known_hosts_line())
    argv = [sys.executable, "-m", "app", "watch", host.target, "--identity", str(host.client_key)]
    argv += ["--known-hosts", str(known), "--seconds", str(seconds), "--json", *extra]
    env = {**os.environ, "XDG_DATA_HOME": str(work / "data")}
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"innotune watch failed: {done.stderr}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def pair(host: DebianHost, work: Path, seconds: float, change: bool) -> dict[str, Any]:
    """Watch, (change), watch --compare: the comparison's JSON."""
    before = work / "before.json"
    host.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    try:
        watch(host, work, seconds, "--out", str(before))
        if change:
            host.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        return watch(host, work, seconds, "--compare", str(before))
    finally:
        host.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 1")


def lines(found: dict[str, Any]) -> list[str]:
    """The pair's traffic and each figure (before → after, its verdict), one line each."""
    t = found["traffic"]
    out = [
        f"    traffic {t['before']['commits_per_s']:.1f} → {t['after']['commits_per_s']:.1f} "
        f"commits/s{'' if found['traffic_alike'] else ' (not alike: ' + found['why_not'] + ')'}"
    ]
    for key, fig in found["figures"].items():
        if fig["verdict"] in ("not_measured",):
            continue
        change = "" if fig["change_percent"] is None else f" {fig['change_percent']:+.0f}%"
        values = " → ".join(
            "—" if v is None else f"{v:,.4g}" for v in (fig["before"], fig["after"])
        )
        out.append(f"    {key:26} {fig['verdict']:12}{change:7} {values}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", choices=sorted(SPECS), default="trixie")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--cpu-loops", type=int, default=2)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it boots a test host", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    host = DebianHost(SPECS[args.host], work / "host")
    stop = multiprocessing.Event()
    loops = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(args.cpu_loops)]
    failures = 0
    counts = {"better": 0, "neither": 0}
    try:
        host.boot()
        print(f"{args.host}: {host.sql('SELECT VERSION()')}, booted in {host.boot_seconds:.1f} s")
        print(
            f"{args.trials} trials, watches of {args.seconds:g} s, the host's client at "
            f"{args.rate:g} commits/s, {args.cpu_loops} busy loops here"
        )
        for loop in loops:
            loop.start()
        with SteadyWrites(host, args.rate):
            time.sleep(1)
            for trial in range(1, args.trials + 1):
                for change in (True, False):
                    started = time.monotonic()
                    found = pair(host, work, args.seconds, change)
                    took = time.monotonic() - started
                    verdicts = {k: f["verdict"] for k, f in found["figures"].items()}
                    if change:
                        ok = verdicts["fsyncs_per_commit"] == "better"
                        counts["better"] += ok
                    else:
                        ok = not {"better", "worse"} & set(verdicts.values())
                        counts["neither"] += ok
                    failures += not ok
                    what = "trx_commit 1 → 2" if change else "no change"
                    print(
                        f"trial {trial} {what}: {'ok' if ok else 'FAILED'} "
                        f"({took:.0f} s, load {load()})"
                    )
                    print("\n".join(lines(found)))
    finally:
        stop.set()
        for loop in loops:
            if loop.pid is not None:
                loop.join(5)
        host.poweroff()
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\nfsyncs per commit better after trx_commit 1 → 2: {counts['better']} of "
        f"{args.trials}; no change read as neither better nor worse: {counts['neither']} of "
        f"{args.trials}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
