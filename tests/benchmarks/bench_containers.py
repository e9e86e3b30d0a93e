"""The lifecycle table of servers in containers: each step's result and time, per container.

Run as root from the project directory (Debian's docker.io and podman installed):

    .venv/bin/python -m tests.benchmarks.bench_containers [--bench-seconds 15]
        [--runs docker:trixie,docker:sid,podman:trixie,podman:sid]

Starts this run's own dockerd (no iptables rules, no bridge) and podman store under a
temporary directory, loads the cached images (built once from the test hosts' root
filesystems: MariaDB 11.8 from trixie, Oracle MySQL 9.7 from sid), and runs
tests/containers/lifecycle.py on each: doctor, inspect, plan, preview, apply into the
mounted configuration directory with `docker restart`/`podman restart`, rollback, the
refusal without a mounted directory, the compose export, the benchmark inside. Prints the
table; leaves the machine as found (the engines are stopped and their directories removed).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from app.jobs import runner
from app.jobs import snapshot as snap
from tests.containers.engines import IMAGES, Docker, Engine, Podman
from tests.containers.lifecycle import Lifecycle, run_lifecycle, table


def main() -> int:
    """Run the lifecycles asked for and print their table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="docker:trixie,docker:sid,podman:trixie,podman:sid")
    parser.add_argument("--bench-seconds", type=float, default=15)
    args = parser.parse_args()
    runs = [tuple(item.split(":", 1)) for item in args.runs.split(",")]
    base = Path(tempfile.mkdtemp(prefix="innotune-containers-"))
    engines: dict[str, Engine] = {}
    results: list[Lifecycle] = []
    try:
        for engine_name, host in runs:
            if engine_name not in engines:
                made = (
                    Docker(base / "docker") if engine_name == "docker" else Podman(base / "podman")
                )
                began = time.monotonic()
                made.start()
                engines[engine_name] = made
                print(f"{engine_name} started in {time.monotonic() - began:.1f} s", flush=True)
            engine = engines[engine_name]
            began = time.monotonic()
            engine.load(IMAGES[host])
            print(f"{engine_name}: image {host} loaded in {time.monotonic() - began:.1f} s",
                  flush=True)  # fmt: skip
            work = base / f"{engine_name}-{host}"
            work.mkdir()
            result = run_lifecycle(engine, IMAGES[host], work, bench_seconds=args.bench_seconds)
            results.append(result)
            for found in result.job_ids:
                for path in (runner.job_dir(found), snap.target_dir(found)):
                    shutil.rmtree(path, ignore_errors=True)
    finally:
        for engine in engines.values():
            engine.stop()
        shutil.rmtree(base, ignore_errors=True)
    print()
    print(table(results))
    failed = [f"{r.engine} {r.server} {s.name}: {s.detail}" for r in results for s in r.steps
              if not s.ok]  # fmt: skip
    for line in failed:
        print(f"\nFAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
