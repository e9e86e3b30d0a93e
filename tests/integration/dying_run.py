"""Run only by test_dead_run.py, in a pytest of its own that is killed halfway.

It makes every kind of thing a run of the suite leaves while it works: a booted Debian host
(systemd, its server, an overlay mount, a cgroup), a private server, an ext4 loop device, an
sshd, and a detached process in a session of its own. Then it says so and waits to be killed.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from app.practice.server import PrivateServer
from tests.hosts.debian_hosts import DebianHost
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer


def test_wait_to_be_killed(
    debian_hosts: dict[str, DebianHost],
    private_server: PrivateServer,
    loopfs: LoopFs,
    sshd: SshServer,
    tmp_path: Path,
) -> None:
    ready = Path(os.environ["INNOTUNE_DYING_RUN_READY"])
    host = next(iter(debian_hosts.values()))
    assert host.active() and private_server.running_pid() and loopfs.mountpoint.is_mount()
    # A detached process, as an apply job is: its own session, no marker in its command line.
    subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL)
    ready.write_text(f"{os.getpid()}\n")
    time.sleep(300)
    raise AssertionError("nobody killed this run")
