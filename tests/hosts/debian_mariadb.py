"""The MariaDB server from Debian's packages, with its real /etc/mysql and init script.

Debian sends the server's error lines to syslog, so rsyslog runs alongside it.
The fixture records /etc/mysql byte for byte and puts it back after any test
that changed it.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hosts.reaper import leave_shared
from tests.hosts.util import pid_alive, sh, shared_state

ETC = Path("/etc/mysql")
SOCKET = "/run/mysqld/mysqld.sock"
SYSLOG = Path("/var/log/syslog")


@dataclass(frozen=True)
class Entry:
    """One file, directory or link under /etc/mysql, as it was."""

    kind: str
    mode: int
    uid: int
    gid: int
    data: bytes  # file content or link target


def record_tree(root: Path = ETC) -> dict[str, Entry]:
    """Everything under ``root``: content, mode, owner, links."""
    tree: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                entry = Entry("link", 0, st.st_uid, st.st_gid, os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                entry = Entry("dir", stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, b"")
            else:
                entry = Entry(
                    "file", stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, path.read_bytes()
                )
            tree[str(path.relative_to(root))] = entry
    return tree


def tree_digest(tree: dict[str, Entry]) -> str:
    """One checksum of a recorded tree."""
    h = hashlib.sha256()
    for name in sorted(tree):
        e = tree[name]
        h.update(f"{name}\0{e.kind}\0{e.mode}\0{e.uid}\0{e.gid}\0".encode() + e.data + b"\0")
    return h.hexdigest()


def restore_tree(tree: dict[str, Entry], root: Path = ETC) -> None:
    """Put ``root`` back exactly as recorded."""
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if rel not in tree:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
    for rel in sorted(tree):
        e, path = tree[rel], root / rel
        if e.kind == "dir":
            path.mkdir(exist_ok=True)
        elif e.kind == "link":
            if path.is_symlink() or path.exists():
                path.unlink()
            path.symlink_to(e.data.decode())
            os.lchown(path, e.uid, e.gid)
            continue
        else:
            if path.is_symlink():
                path.unlink()
            path.write_bytes(e.data)
        os.chown(path, e.uid, e.gid)
        path.chmod(e.mode)


SHARED_STATE = Path("/var/lib/innotune-tests/debian-mariadb.json")


@contextlib.contextmanager
def exclusive_use() -> Iterator[None]:
    """Hold the one Debian server for one test: tests of concurrent sessions take turns."""
    SHARED_STATE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(SHARED_STATE.with_suffix(".test.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _tree_to_json(tree: dict[str, Entry]) -> dict[str, list[object]]:
    return {
        name: [e.kind, e.mode, e.uid, e.gid, base64.b64encode(e.data).decode()]
        for name, e in tree.items()
    }


def _tree_from_json(data: dict[str, list[Any]]) -> dict[str, Entry]:
    return {
        name: Entry(str(k), int(m), int(u), int(g), base64.b64decode(str(d)))
        for name, (k, m, u, g, d) in data.items()
    }


def _rsyslog_running() -> bool:
    return subprocess.run(["pgrep", "-x", "rsyslogd"], capture_output=True).returncode == 0


class DebianMariaDB:
    """Start, query and stop the packaged server through its init script."""

    socket = SOCKET

    def __init__(self) -> None:
        self.original: dict[str, Entry] = {}

    def start(self) -> None:
        """Start rsyslog (for the error lines) and the server via `service mariadb start`.

        Concurrent test sessions share the server: whoever started it is recorded, and the
        last session using it stops what was started.
        """
        with shared_state(SHARED_STATE) as state:
            pids = [p for p in state.get("pids", []) if pid_alive(p)]
            if pids and "original" in state:
                # Another session is using the server: its record of /etc/mysql, taken
                # before any test touched it, is the one to restore (not today's tree,
                # which may hold that session's change of the moment).
                self.original = _tree_from_json(state["original"])
            else:
                if not pids:
                    # Nobody else uses the server: InnoTune's own drop-ins still here were
                    # left by a killed run and are not part of the package.
                    for leftover in ETC.rglob("*innotune*"):
                        print(f"removing a leftover from an earlier run: {leftover}")
                        leftover.unlink()
                self.original = record_tree()
                state["original"] = _tree_to_json(self.original)
            if not pids:
                state["started_rsyslog"] = not _rsyslog_running()
                if state["started_rsyslog"]:
                    sh(*leave_shared(["rsyslogd"]))
                state["started_server"] = not self.running()
                if state["started_server"]:
                    sh(*leave_shared(["service", "mariadb", "start"]))
            state["pids"] = [*pids, os.getpid()]
        self.wait_ready()

    def running(self) -> bool:
        """True when the server answers a ping over its socket."""
        proc = subprocess.run(
            ["mariadb-admin", "--no-defaults", f"--socket={SOCKET}", "-uroot", "ping"],
            capture_output=True,
            text=True,
        )
        return proc.returncode == 0

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the server answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.running():
                return
            time.sleep(0.2)
        raise TimeoutError("the Debian MariaDB did not come up")

    def query(self, sql: str) -> str:
        """Run SQL as root over the socket with the client program."""
        return sh(
            "mariadb",
            "--no-defaults",
            f"--socket={SOCKET}",
            "-uroot",
            "--batch",
            "--skip-column-names",
            "-e",
            sql,
        )

    def ensure_pristine(self) -> bool:
        """Put /etc/mysql back if a test changed it; restart so the old settings are in force.

        Returns True when something had to be restored.
        """
        current = record_tree()
        if tree_digest(current) == tree_digest(self.original):
            if not self.running():
                sh(*leave_shared(["service", "mariadb", "start"]))
                self.wait_ready()
            return False
        restore_tree(self.original)
        subprocess.run(leave_shared(["service", "mariadb", "restart"]), capture_output=True)
        self.wait_ready()
        return True

    def stop(self) -> None:
        """Stop what this fixture started, and leave /etc/mysql as it found it."""
        _leave(self.original)

    @staticmethod
    def release_if_unused() -> bool:
        """After a run died: put the server back as the runs found it when none uses it now.

        True when something was put back or stopped.
        """
        if not SHARED_STATE.exists():
            return False
        return _leave(None)


def _leave(original: dict[str, Entry] | None) -> bool:
    """This run stops using the server; the last one out restores /etc/mysql and stops it.

    Without ``original`` no run leaves: only the runs that died are let go (the record's own
    ``original`` is what is put back).
    """
    leaving = os.getpid() if original is not None else 0
    with shared_state(SHARED_STATE) as state:
        pids = [p for p in state.get("pids", []) if pid_alive(p) and p != leaving]
        if pids:
            state["pids"] = pids  # the last session out restores and stops
            return False
        if not state:
            return False
        if original is None:
            original = _tree_from_json(state.get("original", {}))
        if original and tree_digest(record_tree()) != tree_digest(original):
            restore_tree(original)
        if state.get("started_server"):
            subprocess.run(["service", "mariadb", "stop"], capture_output=True)
        if state.get("started_rsyslog"):
            subprocess.run(["pkill", "-x", "rsyslogd"], capture_output=True)
        state.clear()
        return True
