"""The whole suite as ``make test`` runs it: two pytest processes at once, mypy beside them.

Most of the integration tests wait (for a server to restart, a job to finish, a host to
answer), so one pytest leaves a 2-core machine half idle. The suite runs as two test
sessions side by side, as several sessions of developers and CI already may (the fixtures
share the test accounts, the Debian MariaDB and the snapshot store between sessions):

- the servers in containers, then the integration tests before ``test_io_capacity_live``;
- the rest of the integration tests, then ``tests/unit`` and ``tests/ui`` (the UI tests hold
  under load: ``make stress-ui``).

The order within each session matters: the tests on this machine's Debian MariaDB take turns
with the other session's (tests/hosts/debian_mariadb.py ``exclusive_use``), so each session
runs most of its share while the other one runs tests that leave that server alone (the
containers first in one; the unit tests, then the UI tests, whose few on that server come
last, in the other), and neither waits long.

Each session's output is printed whole when it ends, then one closing line with the totals.
With PYTEST_ARGS (``make test PYTEST_ARGS="tests/unit -x"``) it is one plain pytest run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# The integration tests from this file name on run in the second session, before the unit and
# UI tests, so that the two take about as long. Both took 25 min on the 2-core machine with
# the split at test_lifecycle; the shortened tests (estimated from each test's time before and
# after) took more from the second session's share, so the io_capacity and keyring tests
# (about a minute) moved over.
SPLIT = "test_io_capacity_live"  # the first file of the second session


def parts() -> tuple[tuple[str, list[str], dict[str, str]], ...]:
    """The two sessions: their names, test paths and environment."""
    integration = sorted((REPO / "tests" / "integration").glob("test_*.py"))
    first = [str(p.relative_to(REPO)) for p in integration if p.name < SPLIT]
    rest = [str(p.relative_to(REPO)) for p in integration if p.name >= SPLIT]
    # The servers in containers (their own dockerd and podman) first: the other session
    # starts with its tests on the Debian MariaDB (see the module's docstring).
    return (
        (
            "containers, and integration before io_capacity",
            ["tests/integration/containers", *first],
            {},
        ),
        ("integration from io_capacity, unit and ui", [*rest, "tests/unit", "tests/ui"], {}),
    )


COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")


def _start(name: str, argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    print(f"[suite] {name}: {shlex.join(argv)}", flush=True)
    with open(log, "wb") as out:
        return subprocess.Popen(
            argv, cwd=REPO, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )


def _totals(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    closing = [ln for ln in text.splitlines() if re.match(r"^=+ .*\d+ \w+.* in [\d.]+s", ln)]
    for number, word in COUNTS.findall(closing[-1] if closing else ""):
        key = "error" if word.startswith("error") else word
        found[key] = found.get(key, 0) + int(number)
    return found


def main() -> int:
    """Run mypy and the two sessions; print each as it ends and the totals."""
    extra = shlex.split(os.environ.get("PYTEST_ARGS", ""))
    pytest = [str(BIN / "pytest"), "--durations=25"]
    if extra:
        return subprocess.call([*pytest, *extra], cwd=REPO)
    logs = REPO / "bench-out" / "suite"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    running = {
        "mypy": (_start("mypy", [str(BIN / "mypy")], {}, logs / "mypy.log"), logs / "mypy.log")
    }
    for name, paths, env in parts():
        stem = re.sub(r"[^a-z-]+", "-", name)
        log = logs / f"{stem}.log"
        # Every test's time (setup, call and teardown), to see where a run's minutes went.
        timings = f"--junitxml={logs / stem}.xml"
        running[name] = (_start(name, [*pytest, timings, *paths], env, log), log)
    failed: list[str] = []
    totals: dict[str, int] = {}
    while running:
        for name, (proc, log) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[name]
            text = log.read_text(errors="replace")
            minutes = (time.monotonic() - started) / 60
            print(f"\n[suite] ===== {name}: exit {proc.returncode} after {minutes:.1f} min =====")
            print(text, flush=True)
            if proc.returncode != 0:
                failed.append(name)
            for key, value in _totals(text).items():
                totals[key] = totals.get(key, 0) + value
        time.sleep(1)
    minutes = (time.monotonic() - started) / 60
    print(f"[suite] {minutes:.1f} min; failed: {', '.join(failed) or 'nothing'}")
    # The plain closing line CI reads; an error (in a fixture) counts as a failure.
    not_passed = totals.get("failed", 0) + totals.get("error", 0)
    print(f"{totals.get('passed', 0)} passed, {not_passed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
