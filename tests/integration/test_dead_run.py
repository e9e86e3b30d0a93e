"""A test run that dies leaves nothing running or mounted (tests/hosts/reaper.py).

A pytest of its own (tests/integration/dying_run.py) boots a Debian host, starts a private
server, an sshd and a detached process, and mounts a loop device; once it says it is ready
it is killed with SIGKILL, as a crash or CI's time limit would end it. Its supervisor tears
everything down within 30 s. Killed together with its supervisor, the next run's start does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts import reaper
from tests.hosts.sshd import USERS_STATE, SshUsers
from tests.hosts.util import need, need_root, shared_state

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("dying_run.py")
WITHIN_S = 30


@pytest.fixture
def base() -> Iterator[str]:
    """The dying run's basetemp: short, since a server's socket path must stay under 108
    bytes; removed afterwards."""
    path = tempfile.mkdtemp(prefix="innotune-dying-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _start_dying_run(
    tmp_path: Path, base: str
) -> tuple[subprocess.Popen[bytes], dict[str, object]]:
    ready = tmp_path / "ready"
    env = {
        **os.environ,
        "INNOTUNE_DYING_RUN_READY": str(ready),
        "INNOTUNE_TEST_HOSTS": "trixie",  # one host is enough, and quicker to boot
    }
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 - the child's output
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += [f"--basetemp={base}", "--timeout=600", str(PROBE)]
    child = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=log)
    log.close()
    deadline = time.monotonic() + 300
    while not ready.exists():
        assert child.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "the dying run never got ready"
        time.sleep(0.2)
    record = json.loads((reaper.RUNS / f"{child.pid}.json").read_text())
    return child, record


def _what_is_left(record: dict[str, object]) -> list[str]:
    pid = int(str(record["pid"]))
    markers = [str(m) for m in record["markers"]]  # type: ignore[attr-defined]
    left = [f"process {p}" for p in reaper._processes_named(markers)]
    left += [f"mount {m}" for m in reaper._mounts_under(markers)]
    left += [f"loop device {d}" for d in reaper._loops_under(markers)]
    root = reaper.cgroup2_root()
    if root is not None:
        left += [
            f"cgroup {c.name}"
            for c in root.iterdir()
            if c.name == f"innotune-run-{pid}"
            or (reaper.HOST_CGROUP.match(c.name) and c.name.split("-")[3] == str(pid))
        ]
    return left


def _wait_until_gone(record: dict[str, object]) -> float:
    """Seconds until nothing of the run is left and its record is gone (at most WITHIN_S)."""
    killed = time.monotonic()
    path = reaper.RUNS / f"{record['pid']}.json"
    while (_what_is_left(record) or path.exists()) and time.monotonic() - killed < WITHIN_S:
        time.sleep(0.2)
    assert not _what_is_left(record), f"left after {WITHIN_S} s: {_what_is_left(record)}"
    assert not path.exists(), f"the run's record is still there after {WITHIN_S} s"
    return time.monotonic() - killed


def test_a_run_killed_with_sigkill_leaves_nothing_within_30_s(tmp_path: Path, base: str) -> None:
    need_root()
    need(reaper.cgroup2_root() is not None, "no cgroup2 hierarchy")
    child, record = _start_dying_run(tmp_path, base)
    before = _what_is_left(record)
    assert any(w.startswith("cgroup innotune-test-") for w in before), before
    assert any(w.startswith("mount") for w in before) and any("loop" in w for w in before)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    seconds = _wait_until_gone(record)
    print(f"\n[dead run] {len(before)} things of the killed run gone in {seconds:.1f} s")
    log = (reaper.RUNS / f"{child.pid}.log").read_text()
    assert f"run {child.pid}: killed" in log, log


def test_a_run_killed_with_its_supervisor_is_cleaned_by_the_next(
    tmp_path: Path, base: str, ssh_users: SshUsers
) -> None:
    need_root()
    need(reaper.cgroup2_root() is not None, "no cgroup2 hierarchy")
    child, record = _start_dying_run(tmp_path, base)
    os.kill(int(str(record["supervisor"])), signal.SIGKILL)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    time.sleep(1)
    assert _what_is_left(record), "nothing was left to clean: the test proves nothing"
    said = reaper.sweep_dead_runs()  # what the next run does at its start
    assert any(f"run {child.pid}:" in line for line in said), said
    # The live runs keep the shared accounts: only the dead one let go of them.
    with shared_state(USERS_STATE) as state:
        assert os.getpid() in state["pids"] and child.pid not in state["pids"]
    _wait_until_gone(record)
