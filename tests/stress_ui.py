"""The UI tests, many rounds in a row, with every CPU kept busy: crashes that need bad timing.

``make stress-ui`` (or ``python -m tests.stress_ui --rounds 10``) starts one busy loop per CPU,
runs the UI tests (``tests/ui``; the whole-flow test, which boots a Debian host, only with
``--all``) once per round in a fresh pytest process, and prints one line per round and a
verdict. A round that ends by a signal (SIGSEGV, SIGABRT) or prints "Fatal Python error" is a
crash; one whose tests failed is a failure. Each round's output is kept in
bench-out/stress-ui/round-N.log. Exit status 0 only when no round crashed or failed.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench-out" / "stress-ui"


def _busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes spinning on a CPU each, at normal priority."""
    return [
        subprocess.Popen(
            ["sh", "-c", "while :; do :; done"],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(count)
    ]


def _round(number: int, everything: bool) -> tuple[str, float, str]:
    """One pytest run of the UI tests: its outcome (passed, failed, crashed), time, summary."""
    argv = [sys.executable, "-X", "faulthandler", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv.append("tests/ui")
    if not everything:
        argv += ["--deselect", "tests/ui/test_whole_flow.py"]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    (OUT / f"round-{number}.log").write_text(output)
    summary = next(
        (ln.strip("= ") for ln in reversed(output.splitlines()) if re.search(r"\d+ passed", ln)),
        "",
    )
    if proc.returncode < 0 or proc.returncode in (134, 139) or "Fatal Python error" in output:
        name = signal.Signals(-proc.returncode).name if proc.returncode < 0 else proc.returncode
        return f"CRASHED ({name})", seconds, summary
    return ("passed" if proc.returncode == 0 else "FAILED"), seconds, summary


def main(args: list[str] | None = None) -> int:
    """Run the rounds; print each and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy loops")
    parser.add_argument("--all", action="store_true", help="include the whole-flow test")
    opts = parser.parse_args(args)
    OUT.mkdir(parents=True, exist_ok=True)
    loops = _busy_loops(opts.busy)
    outcomes: list[str] = []
    try:
        print(f"UI tests x {opts.rounds}, with {opts.busy} busy loop(s) on {os.cpu_count()} CPUs")
        for number in range(1, opts.rounds + 1):
            outcome, seconds, summary = _round(number, opts.all)
            outcomes.append(outcome)
            load = os.getloadavg()[0]
            print(f"round {number:2}: {outcome:<18} {seconds:6.0f} s  load {load:4.1f}  {summary}")
            sys.stdout.flush()
    finally:
        for loop in loops:
            os.killpg(loop.pid, signal.SIGKILL)
            loop.wait()
    crashed = sum(o.startswith("CRASHED") for o in outcomes)
    failed = sum(o == "FAILED" for o in outcomes)
    print(f"{len(outcomes)} rounds: {crashed} crashed, {failed} failed (logs: {OUT})")
    return 0 if crashed == failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
