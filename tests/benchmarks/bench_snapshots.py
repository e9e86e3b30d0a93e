"""What the snapshots' record costs: listing with states, and the retention, as they grow.

Run from the project directory (root for the last figure, which reads this host):

    .venv/bin/python -m tests.benchmarks.bench_snapshots [--instances 10] [--per 40]

In a temp directory, ``--instances`` x ``--per`` snapshots (each with a 4 KiB option file,
an apply job and every third one a restore job) are made the way the job makes them; then:

* ``read_records``: the job's own listing (what ``innotune snapshots`` and a rollback
  without an id read on the target), median of 5;
* ``prune``: the retention down to 20 per instance (what every apply's job does at its
  end, for its own instance; here for all), once;
* ``list_records`` on this host through the real transport (the tool's checksum check and
  one python3 run), median of 5: the time each apply and rollback adds on this side.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app.jobs import history
from app.targetjob import records


def make(root: Path, instances: int, per: int) -> None:
    snaps, jobs = root / "snapshots", root / "jobs"
    content = base64.b64encode(b"[mysqld]\n" + b"# x\n" * 1000).decode()
    for i in range(instances):
        key = history.identity_key(f"/srv/{i}/data", f"/srv/{i}/my.cnf")
        for n in range(per):
            ident = (
                f"2026010{i % 9 + 1}T{n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}Z-{i:03x}{n:03x}"
            )
            (snaps / ident).mkdir(parents=True)
            manifest = {
                "id": ident,
                "taken": float(n),
                "instance": {"key": key},
                "files": [
                    {"path": f"/srv/{i}/conf.d/99.cnf", "existed": True, "content_b64": content}
                ],
                "values": [],
            }
            (snaps / ident / "manifest.json").write_text(json.dumps(manifest))
            state = "rolled-back" if n % 3 == 0 else "applied"
            records.write_snapshot_state(str(snaps / ident), state, by=ident)
            (jobs / ident).mkdir(parents=True)
            (jobs / ident / "bundle.json").write_text(json.dumps({"snapshot_id": ident}))
            if n % 3 == 0:
                (jobs / f"{ident}-restore").mkdir()
                (jobs / f"{ident}-restore" / "bundle.json").write_text(
                    json.dumps({"mode": "restore", "snapshot_id": ident})
                )


def timed(fn: object, reps: int) -> float:
    runs = []
    for _ in range(reps):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - began)
    return statistics.median(runs) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=10)
    parser.add_argument("--per", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="innotune-bench-snapshots-") as tmp:
        root = Path(tmp)
        make(root, args.instances, args.per)
        total = args.instances * args.per
        snaps, jobs = str(root / "snapshots"), str(root / "jobs")
        listing = timed(lambda: records.read_records(snaps, jobs), 5)
        print(f"read_records, {total} snapshots:            {listing:8.1f} ms")
        records.LOCK_DIR = str(root / "locks")  # each instance's lock, taken as the job does
        began = time.perf_counter()
        done = records.prune(20, None, snaps, jobs)
        pruning = (time.perf_counter() - began) * 1000
        left = len(os.listdir(snaps))
        print(
            f"prune to 20 per instance:                 {pruning:8.1f} ms "
            f"({len(done['removed'])} removed, {left} left)"
        )
        listing = timed(lambda: records.read_records(snaps, jobs), 5)
        print(f"read_records, {left} snapshots:            {listing:8.1f} ms")
    if os.geteuid() == 0:
        from app.remote.local import LocalTransport

        transport = LocalTransport()
        found = len(history.list_records(transport))
        here = timed(lambda: history.list_records(transport), 5)
        print(f"list_records on this host ({found} snapshots): {here:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
