"""Resizes that change nothing, measured interleaved: no run may be called faster or slower.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_resize_null [--trials 10] [--busy 2]

The counterpart of bench_measured's (b) for the resizes a measured apply now switches once a
round (:data:`app.jobs.live.RESIZES`). It boots the trixie test host (MariaDB
11.8), starts ``--busy`` busy loops on this machine, and measures, as a measured apply of a
live resize does (:meth:`app.flows.measured.Measuring.interleaved`: each side a whole round
in turn, every resize waited for, one data set written first and read into the pool after
every switch), a change with nothing to show: the buffer pool 2 GiB → 2.125 GiB and the redo
log 1 GiB → 1.0625 GiB, both large enough for the 384 MiB data set and the benchmark's
writes either way. A trial counts when no run is called *faster* or *slower*; at least 9 of
10 must. Prints one line per trial; exits 1 when that does not hold.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from app.flows import measured as measured_flow
from app.flows.measure import MeasureOptions
from app.flows.measured import Measuring
from tests.benchmarks.bench_measured import (
    CLAIMS,
    busy_loops,
    clean_up,
    exit_on_sigterm,
    load,
    login,
    verdict_cells,
)
from tests.hosts.debian_hosts import SPECS, DebianHost

MIB = 2**20
GIB = 2**30
#: Old and new sizes: a resize the server must do, with nothing for the benchmark to see.
VALUES = (
    ("innodb_buffer_pool_size", str(2 * GIB), str(2 * GIB + 128 * MIB)),
    ("innodb_log_file_size", str(GIB), str(GIB + 64 * MIB)),
)
#: The data set (c) writes for the default plan's pool on this host.
DATA_BYTES = 384 * MIB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside it")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it boots the trixie test host", file=sys.stderr)
        return 2

    exit_on_sigterm()
    # Both pools hold the data set; it is written all the same, as for a pool that grows.
    setattr(measured_flow, "data_set_bytes", lambda *_a, **_k: DATA_BYTES)  # noqa: B010
    options = MeasureOptions()
    work = Path(tempfile.mkdtemp(prefix="bench-resize-null-"))
    os.environ["XDG_DATA_HOME"] = str(work / "data")
    host = DebianHost(SPECS["trixie"], work / "host")
    loops: list[subprocess.Popen[bytes]] = []
    conn = None
    try:
        host.boot()
        version = host.sql("SELECT @@version")
        for key, _old, new in VALUES:  # as the apply leaves it: the new values in force
            host.sql(f"SET GLOBAL {key} = {new}")
        conn, target, secrets = login(host, work)
        loops = busy_loops(args.busy)
        time.sleep(5)
        print(
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; trixie host: MariaDB {version}; "
            f"{os.cpu_count()} CPUs here, {args.busy} busy loops, load {load()}; Benchmark time "
            f"{options.seconds:g} s, budget {options.budget_seconds:g} s; "
            + "; ".join(f"{k} {o} → {n}" for k, o, n in VALUES),
            flush=True,
        )
        quiet = 0
        for n in range(1, args.trials + 1):
            measuring = Measuring(
                conn,
                target,
                secrets,
                options,
                cancel=threading.Event(),
                say=lambda _label, _text: None,
                progress=lambda _f: None,
            )
            before, after, found = measuring.interleaved(VALUES, "", "")
            if measuring.restore_new(VALUES, ""):
                raise SystemExit("the new values could not be set again: stopped")
            verdicts = [v.verdict for v in after.verdicts(before)]
            claims = sum(v in CLAIMS for v in verdicts)
            quiet += not claims
            rounds = f"{found.fewest_rounds}-{found.after_rounds}"
            used = f"{found.seconds_used:.0f}/{found.budget_seconds:.0f} s"
            print(
                f"r{n:<4} {found.method:<12} {rounds:>6} {used:>10} {found.stopped:<8} "
                f"{'; '.join(verdict_cells(before, after))}  (load {load()})",
                flush=True,
            )
            for label, report in (("before", before), ("after", after)):
                auto = report.result("autocommit", 1)
                if auto is not None:
                    figures = ", ".join(f"{x:,.0f}" for x in auto.rounds)
                    print(f"      autocommit ×1 {label}: {figures} commits/s", flush=True)
        needed = -(-9 * args.trials // 10)
        ok = quiet >= needed
        print(
            f"resizes with nothing to show: no run called faster or slower in {quiet} of "
            f"{args.trials} (needed {needed}) — {'holds' if ok else 'DOES NOT HOLD'}"
        )
        return 0 if ok else 1
    finally:
        clean_up(loops, conn, host, work)


if __name__ == "__main__":
    sys.exit(main())
