"""The whole suite as ``make test`` runs it: four pytest processes at once, mypy beside them.

Most of the integration tests wait (for a server to restart, a job to finish, a host to
answer): three sessions kept a 2-core machine busy 1.34 cores on average (user and system
time over the run's), so the suite runs as four test sessions side by side, as several
sessions of developers and CI already may (the fixtures share the test accounts, the Debian
MariaDB and the snapshot store between sessions):

- the servers in containers, then the first integration tests, then ``tests/unit``;
- every integration test that uses the booted Debian hosts (only this session boots all
  three), with a few more;
- the rest of the integration tests;
- ``tests/ui``, with only the sid host booted (the UI tests hold under load:
  ``make stress-ui``).

The tests on this machine's Debian MariaDB take turns with the other sessions' (one at a
time, tests/hosts/debian_mariadb.py ``exclusive_use``).

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

# Where the integration tests that need no booted host are cut between the first three sessions
# (the first file of the next one), so that the four take about as long: from the tests' times
# in a whole run (bench-out/suite/*.xml, four sessions): containers 10.2 min, the booted hosts'
# files 12.6, the other integration tests 21.0, unit 1.3, UI 15.6.
SPLITS = ("test_apply_restart", "test_bench_loadgen")


def uses_booted_hosts(path: Path) -> bool:
    """True when a test file asks for the booted Debian hosts (its fixtures by name)."""
    text = path.read_text()
    return "debian_hosts" in text or "server_host" in text


def parts() -> tuple[tuple[str, list[str], dict[str, str]], ...]:
    """The four sessions: their names, test paths and environment."""
    integration = sorted((REPO / "tests" / "integration").glob("test_*.py"))
    hosts = [p for p in integration if uses_booted_hosts(p)]
    first, second = SPLITS

    def files(low: str, high: str) -> list[str]:
        found = [p for p in integration if low <= p.name < high and p not in hosts]
        return [str(p.relative_to(REPO)) for p in found]

    return (
        (
            f"containers, integration before {first[5:]}, and unit",
            ["tests/integration/containers", *files("", first), "tests/unit"],
            {},
        ),
        (
            f"integration on the booted hosts, and from {first[5:]} to {second[5:]}",
            [*(str(p.relative_to(REPO)) for p in hosts), *files(first, second)],
            {},
        ),
        (
            f"integration from {second[5:]}",
            files(second, "~"),
            {},
        ),
        # The UI tests drive the sid host only.
        ("ui", ["tests/ui"], {"INNOTUNE_TEST_HOSTS": "sid"}),
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
    """Run mypy and the four sessions; print each as it ends and the totals."""
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
