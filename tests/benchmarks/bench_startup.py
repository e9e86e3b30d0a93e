"""Start-up time of InnoTune, frozen (``make dist``) next to running from source.

    python -m tests.benchmarks.bench_startup [--runs 5] [--frozen dist/innotune/innotune]
                                             [--no-window]

For each way of starting: the median wall time of ``--version``; of the start-up of
``innotune inspect`` (the whole process against a port where nothing listens: imports,
arguments, logging, known hosts, the doctor's first step, the error; everything but the remote
work); of ``--self-test`` (which builds the wizard and renders every page offscreen); and the
median time from process start to the wizard window shown, as the self-test reports it
(``--no-window`` leaves the last two out). One unmeasured run first warms the page cache and
writes the bytecode, so the figures are warm starts as an installed program has them. Also
prints the bundle's size on disk when there is a frozen build.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
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


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _inspect_start(argv: list[str], env: dict[str, str], port: int) -> float:
    """Wall time of `inspect` up to a refused connection (it exits 1, saying so)."""
    cmd = [*argv, "inspect", f"root@127.0.0.1:{port}", "--sample", "0"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.perf_counter() - start
    assert out.returncode == 1 and "refused the connection" in out.stderr, out.stderr
    return elapsed


def measure(argv: list[str], runs: int, env: dict[str, str], window: bool) -> dict[str, float]:
    """Median seconds of --version, inspect's start-up, --self-test and time-to-window."""
    port = _closed_port()
    _inspect_start(argv, env, port)  # warm-up, not counted: it also writes the bytecode
    version = [_timed([*argv, "--version"], env)[0] for _ in range(runs)]
    inspect = [_inspect_start(argv, env, port) for _ in range(runs)]
    figures = {"version": statistics.median(version), "inspect": statistics.median(inspect)}
    if not window:
        return figures | {"self_test": float("nan"), "window": float("nan")}
    _timed([*argv, "--self-test"], env)  # warm-up, not counted
    selftest, shown = [], []
    for _ in range(runs):
        seconds, stdout = _timed([*argv, "--self-test"], env)
        selftest.append(seconds)
        match = SHOWN.search(stdout)
        assert match, stdout
        shown.append(float(match.group(1)))
    return figures | {
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
    parser.add_argument("--no-window", action="store_true", help="skip --self-test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=home, XDG_DATA_HOME=home)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed program has its bytecode
        env.pop("SSH_AUTH_SOCK", None)
        ways = {
            "from source (.venv/bin/innotune)": [str(Path(sys.executable).parent / "innotune")],
            "from source (python -m app)": [sys.executable, "-m", "app"],
        }
        if args.frozen.exists():
            ways["frozen (dist/innotune/innotune)"] = [str(args.frozen)]
        else:
            print(f"no frozen build at {args.frozen} (make dist): left out")
        print(f"median of {args.runs} warm runs, seconds")
        print(
            f"{'':36} {'--version':>10} {'inspect start':>14} {'--self-test':>12} {'to window':>10}"
        )
        for name, argv in ways.items():
            m = measure(argv, args.runs, env, not args.no_window)
            print(
                f"{name:36} {m['version']:10.3f} {m['inspect']:14.3f} {m['self_test']:12.3f} "
                f"{m['window']:10.3f}"
            )
    bundle = args.frozen.parent
    if bundle.exists():
        print(f"bundle {bundle}: {_size(bundle) / 1e6:.1f} MB on disk")
    for tarball in sorted((ROOT / "dist").glob("innotune-*.tar.gz")):
        print(f"tarball {tarball.name}: {tarball.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
