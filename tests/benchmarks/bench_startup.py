"""Start-up time of InnoTune, frozen (``make dist``) next to running from source.

    python -m tests.benchmarks.bench_startup [--runs 5] [--frozen dist/innotune/innotune]

For each way of starting: the median wall time of ``--version`` and of ``--self-test`` (which
builds the wizard and renders every page offscreen), and the median time from process start to
the wizard window shown, as the self-test reports it. One unmeasured run first warms the page
cache, so the figures are warm starts. Also prints the bundle's size on disk.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOWN = re.compile(r"window shown ([0-9.]+) s after start")


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=True)
    return time.perf_counter() - start, out.stdout


def measure(argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Median seconds of --version, --self-test and time-to-window over ``runs`` runs."""
    _timed([*argv, "--self-test"], env)  # warm-up, not counted
    version = [_timed([*argv, "--version"], env)[0] for _ in range(runs)]
    selftest, shown = [], []
    for _ in range(runs):
        seconds, stdout = _timed([*argv, "--self-test"], env)
        selftest.append(seconds)
        match = SHOWN.search(stdout)
        assert match, stdout
        shown.append(float(match.group(1)))
    return {
        "version": statistics.median(version),
        "self_test": statistics.median(selftest),
        "window": statistics.median(shown),
    }


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    """Measure and print a small table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frozen", type=Path, default=ROOT / "dist" / "innotune" / "innotune")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=home, XDG_DATA_HOME=home)
        ways = {
            "from source (.venv/bin/innotune)": [str(Path(sys.executable).parent / "innotune")],
            "from source (python -m app)": [sys.executable, "-m", "app"],
            "frozen (dist/innotune/innotune)": [str(args.frozen)],
        }
        print(f"median of {args.runs} warm runs, seconds")
        print(f"{'':36} {'--version':>10} {'--self-test':>12} {'to window':>10}")
        for name, argv in ways.items():
            m = measure(argv, args.runs, env)
            print(f"{name:36} {m['version']:10.3f} {m['self_test']:12.3f} {m['window']:10.3f}")
    bundle = args.frozen.parent
    print(f"bundle {bundle}: {_size(bundle) / 1e6:.1f} MB on disk")
    for tarball in sorted((ROOT / "dist").glob("innotune-*.tar.gz")):
        print(f"tarball {tarball.name}: {tarball.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
