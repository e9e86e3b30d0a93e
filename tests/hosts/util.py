"""Small helpers shared by the test hosts."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

IN_CI = os.environ.get("CI") == "true"


#: Shell lines for a process that has just entered a mount namespace of its own (``unshare
#: --mount``): let go of its copies of the loop-device filesystems mounted outside (another
#: test session's). A copy held in here would keep that loop device attached after its own
#: session unmounted and detached it, and that session's end-of-run check would fail.
DROP_LOOP_MOUNTS = (
    "awk '$1 ~ /^[/]dev[/]loop/ {print $2}' /proc/self/mounts | sort -r | "
    'while read -r m; do umount -l "$m"; done'
)


def need(condition: bool, reason: str) -> None:
    """Skip when a real part is missing; under CI=true, fail instead (nothing may skip)."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"missing under CI=true: {reason}")
    pytest.skip(reason)


def need_root() -> None:
    """The test needs root (loop devices, users, services)."""
    need(os.geteuid() == 0, "needs root")


def sh(*argv: str, input: str | None = None, check: bool = True) -> str:
    """Run a command, return stdout; raise with stderr on failure."""
    proc = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def wait_port(host: str, port: int, timeout: float = 20.0) -> None:
    """Wait until something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s")


@contextlib.contextmanager
def shared_state(path: Path) -> Iterator[dict[str, Any]]:
    """A JSON state file shared by concurrent test sessions, read and written under a lock.

    Emptied state removes the file. The file is root-only: it may hold test secrets.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = json.loads(path.read_text()) if path.exists() else {}
        except ValueError:
            state = {}
        yield state
        if state:
            path.write_text(json.dumps(state))
            path.chmod(0o600)
        else:
            path.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """True while a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def read_until(fd: int, wanted: bytes, seen: bytearray, timeout: float) -> bool:
    """Read a pty's output into ``seen`` until ``wanted`` shows up, EOF, or ``timeout``."""
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        seen += chunk
    return True


def short_watch(monkeypatch: Any, seconds: float) -> None:
    """Make every apply watch the restarted server ``seconds`` long instead of the default.

    The flows pass ``watch_seconds`` themselves, so a ``functools.partial`` of the runner's
    ``apply`` is overridden by them; the keyword is replaced here instead.
    """
    from app.jobs import runner

    real = runner.apply
    monkeypatch.setattr(
        runner, "apply", lambda *a, **k: real(*a, **{**k, "watch_seconds": seconds})
    )


def below_us(pid: int) -> bool:
    """Whether process ``pid`` runs below this one (the suite's other session has its own)."""
    me = os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                # pid (comm) state ppid …: comm may hold spaces, so split after its ")".
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid == me:
            return True
    return False
