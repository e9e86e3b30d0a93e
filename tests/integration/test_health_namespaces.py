"""The job finds the server it restarts only in its own pid namespace (app/targetjob/health.py).

A run of the suite restarted the Debian MariaDB through its init script; while the new server
started, the job looked through /proc for a process with the server's markers and took a
mysqld of a booted Debian system (``--pid-file=/run/mysqld/mysqld.pid``, a default path, in a
pid namespace of its own) for it. That mysqld ended, and the job called the restarted server
dead and rolled back. On a real host the same goes for MySQL in containers.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.targetjob import formats
from app.targetjob.health import Health, live_argv
from tests.hosts.util import need, need_root

MARKER = "--pid-file=/run/mysqld/innotune-test-lookalike.pid"


def _lookalike(*prefix: str) -> subprocess.Popen[bytes]:
    """A process whose command line reads as a server's: ``/usr/sbin/mysqld MARKER``."""
    script = "import time; time.sleep(120)"
    argv = [*prefix, "bash", "-c", 'exec -a /usr/sbin/mysqld "$0" -c "$1" "$2"']
    return subprocess.Popen([*argv, sys.executable, script, MARKER])


def _started(proc: subprocess.Popen[bytes]) -> int:
    """The look-alike's pid as this host sees it, once it runs (under unshare: its child)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for pid in [proc.pid, *_children(proc.pid)]:
            argv = live_argv(pid) or []
            if argv[:1] == ["/usr/sbin/mysqld"] and MARKER in argv:
                return pid
        time.sleep(0.05)
    raise AssertionError("the look-alike never started")


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


@pytest.fixture
def health(tmp_path: Path) -> Iterator[Health]:
    (tmp_path / "bundle.json").write_bytes(formats.Bundle("t1", "apply", "t1", "").to_json())
    job = Health(str(tmp_path))
    job.how = {"markers": [MARKER], "pid_file": None}
    yield job
    job.journal.close()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def test_a_server_in_another_pid_namespace_is_not_the_one_restarted(
    health: Health, processes: list[subprocess.Popen[bytes]]
) -> None:
    need_root()
    need(shutil.which("unshare") is not None, "unshare (util-linux) is not installed")
    other = _lookalike("unshare", "--pid", "--fork", "--kill-child")
    processes.append(other)
    elsewhere = _started(other)
    assert elsewhere != other.pid  # the child unshare started in the new namespace
    assert health.server_pid() is None, f"took pid {elsewhere}, in another pid namespace"

    ours = _lookalike()
    processes.append(ours)
    assert _started(ours) == ours.pid
    assert health.server_pid() == ours.pid
