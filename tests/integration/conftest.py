"""What the integration tests share: this computer as a target, and `innotune` as a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.remote.local import LocalTransport
from tests.hosts.util import need_root

REPO = Path(__file__).resolve().parents[2]
JOB_ID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}(?:-restore)?\b")


@pytest.fixture
def local() -> Iterator[LocalTransport]:
    """This computer as root (apply, sysfs and the Debian server need it)."""
    need_root()
    transport = LocalTransport()
    yield transport
    transport.close()


# Subcommands that make no job and no snapshot: what they print is the host's, not the test's.
LISTING_ONLY = ("snapshots",)


class Cli:
    """`innotune` in a subprocess with its own data directory and no terminal.

    ``ids`` collects the job and snapshot ids its applies and rollbacks printed, for the
    test's cleanup. Not those a listing printed: ``innotune snapshots`` shows every snapshot
    and job on this host, other test sessions' too, and removing those broke the sessions
    that were using them (their snapshot or job was gone mid-test).
    """

    def __init__(self, data_home: Path, timeout: float = 300) -> None:
        self.env = dict(os.environ, XDG_DATA_HOME=str(data_home))
        self.timeout = timeout
        self.ids: list[str] = []

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "app", *args],
            capture_output=True,
            text=True,
            timeout=self.timeout,
            env=self.env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
        )
        subcommand = next((a for a in args if not a.startswith("-")), "")
        if subcommand not in LISTING_ONLY:
            self.ids.extend(JOB_ID.findall(done.stdout + done.stderr))
        return done
