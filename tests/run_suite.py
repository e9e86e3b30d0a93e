"""The whole suite as ``make test`` runs it: three pytest processes at once, mypy beside them.

Most of the integration tests wait (for a server to restart, a job to finish, a host to
answer): two sessions kept a 2-core machine busy 1.13 cores on average (user and system
time over the run's), so the suite runs as three test sessions side by side, as several
sessions of developers and CI already may (the fixtures share the test accounts, the Debian
MariaDB and the snapshot store between sessions):

- the servers in containers, then the integration tests before ``test_binlog_choice``;
- ``test_bench_hosts``, then the integration tests from ``test_binlog_choice`` to
  ``test_ssh_shell`` (the booted hosts serve them all; the first session boots none);
- the rest of the integration tests, then ``tests/unit`` and ``tests/ui`` (the UI tests hold
  under load: ``make stress-ui``).

The tests on this machine's Debian MariaDB take turns with the other sessions' (one at a
time, tests/hosts/debian_mariadb.py ``exclusive_use``); each session runs its share of them
at a different time (the containers first in one, the unit and UI tests, whose few on that
server come last, in another), so that none waits long.

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

# Where the integration tests are cut between the sessions (the first file of the next one),
# so that the three take about as long: from the tests' times in a whole run
# (bench-out/suite/*.xml), containers 6.6 min, the integration tests 24.9, unit 1.6, UI 10.0.
SPLITS = ("test_binlog_choice", "test_ssh_shell")
# Run in the second session, whose booted hosts it uses: the first then boots none.
SECOND = "test_bench_hosts.py"


def parts() -> tuple[tuple[str, list[str], dict[str, str]], ...]:
    """The three sessions: their names, test paths and environment."""
    integration = sorted((REPO / "tests" / "integration").glob("test_*.py"))
    first, second = SPLITS

    def files(low: str, high: str) -> list[str]:
        found = [p for p in integration if low <= p.name < high and p.name != SECOND]
        return [str(p.relative_to(REPO)) for p in found]

    # The servers in containers (their own dockerd and podman) first, and the unit tests
    # early in the third: only the second starts on the Debian MariaDB (test_bench_hosts).
    return (
        (
            "containers, and integration before binlog_choice",
            ["tests/integration/containers", *files("", first)],
            {},
        ),
        (
            f"integration from {first[5:]} to {second[5:]}",
            [f"tests/integration/{SECOND}", *files(first, second)],
            {},
        ),
        (
            f"integration from {second[5:]}, unit and ui",
            [*files(second, "~"), "tests/unit", "tests/ui"],
            {},
        ),
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
