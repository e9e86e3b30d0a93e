"""The job's core: its bundle, its journal and state file, running commands and SQL.

Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import os
import pwd
import subprocess
from typing import Any

from .errors import JobCancelled
from .files import atomic_write
from .formats import Bundle, JobState, JournalLine, now_iso
from .records import verified_manifest
from .values import ORDERED_PAIRS


class JobBase:
    """One run of the job in DIR: its bundle, journal, state file and how it runs things."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        with open(os.path.join(directory, "bundle.json"), "rb") as fh:
            self.bundle = Bundle.from_json(fh.read())
        self.seq = 0
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.log_lines: list[str] = []
        self.restarted = False
        self.downtime: float | None = None
        self.manifest: dict[str, Any] = {}
        self.how: dict[str, Any] = {}
        self.log_mark: Any = None
        self.client_ok: bool | None = None
        self.healthy_pid: int | None = None
        self.restart_attempted = False
        self.cancelled = False
        # Dynamic variables this apply set live (SET GLOBAL): its own rollback sets back only
        # these; None for a standalone rollback, which sets back every saved value.
        self.live_set: set[str] | None = None
        self.kept = False  # a change made with a deadline was confirmed
        # The plan's changes the host refused (change id -> why): reported, never "applied".
        self.not_applied: dict[str, str] = {}
        self.undone: list[str] = []  # newer snapshots a restore undid too (superseded)
        self.journal = open(os.path.join(directory, "journal.jsonl"), "a", encoding="utf-8")  # noqa: SIM115

    # -- journal and state ------------------------------------------------------------------
    def step(self, step: str, status: str, detail: str = "") -> None:
        """Append one line to the journal, durably."""
        self.seq += 1
        line = JournalLine(self.seq, now_iso(), step, status, detail)
        self.journal.write(line.to_json() + "\n")
        self.journal.flush()
        os.fsync(self.journal.fileno())

    def state(
        self, state: str, confirm_deadline: float | None = None, rescued_by: str | None = None
    ) -> None:
        """Replace DIR/state.json atomically."""
        doc = JobState(
            state=state,
            job=self.bundle.id,
            mode=self.bundle.mode,
            snapshot=self.manifest.get("id") or self.bundle.snapshot_id or None,
            errors=self.errors,
            warnings=self.warnings,
            log_lines=self.log_lines,
            restarted=self.restarted,
            downtime_seconds=self.downtime,
            cancelled=self.cancelled,
            instance=self.bundle.instance,
            updated=now_iso(),
            confirm_deadline=confirm_deadline,
            rescued_by=rescued_by,
            changes=list(self.bundle.changes),
            not_applied=dict(self.not_applied),
        )
        atomic_write(os.path.join(self.dir, "state.json"), doc.to_json(), 0o600, "")

    # -- the snapshot -------------------------------------------------------------------------
    def load_snapshot(self) -> None:
        """Read and verify the snapshot's manifest; a bad one stops everything loudly."""
        self.manifest = verified_manifest(self.bundle.snapshot_dir)
        self.how = dict(self.manifest.get("how") or {})
        self.how.update(self.bundle.how)

    # -- running things ---------------------------------------------------------------------
    def run(
        self, argv: list[str], timeout: float = 120.0, user: str | None = None
    ) -> tuple[int, str]:
        """Run argv; exit status and combined output (never a shell)."""
        preexec = None
        if user and user != "root":
            entry = pwd.getpwnam(user)

            def preexec() -> None:
                os.setgid(entry.pw_gid)
                os.initgroups(user, entry.pw_gid)
                os.setuid(entry.pw_uid)

        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                preexec_fn=preexec,  # noqa: PLW1509 - drop to the service user
                check=False,
            )
        except FileNotFoundError:
            return 127, f"{argv[0]}: not found"
        except subprocess.TimeoutExpired:
            return 124, "timed out after %d s" % timeout
        return proc.returncode, proc.stdout.decode("utf-8", "replace")

    def client(self, sql: str, timeout: float = 15.0) -> tuple[bool, str]:
        """Run SQL through the server's client as root over the socket."""
        argv = self.how.get("client")
        if not argv:
            return False, "no client login"
        status, out = self.run(list(argv) + ["-N", "-B", "-e", sql], timeout=timeout)
        return status == 0, out.strip()

    def globals_now(self) -> dict[str, str]:
        """The server's values now of the variables in :data:`ORDERED_PAIRS` (empty: unknown)."""
        names = [name for pair in ORDERED_PAIRS for name in pair]
        if not self.how.get("client"):
            return {}
        ok, out = self.client("SELECT " + ", ".join("@@GLOBAL." + n for n in names))
        values = out.split("\t") if ok else []
        return dict(zip(names, values)) if len(values) == len(names) else {}  # noqa: B905 (3.7+)

    # -- cancelling ---------------------------------------------------------------------------
    def cancel_requested(self) -> bool:
        """True once the client asked to cancel (it creates ``DIR/cancel``)."""
        return os.path.exists(os.path.join(self.dir, "cancel"))

    def check_cancel(self, where: str) -> None:
        """Stop here when a cancel was asked for: the caller rolls back what was changed.

        Only called between steps, never while a restart is under way: a server being
        restarted is waited for until it is healthy (or judged failed) first, so a cancel
        never leaves it down.
        """
        if self.cancel_requested():
            self.cancelled = True
            self.step("cancel", "info", f"cancel asked for; stopping {where} and rolling back")
            raise JobCancelled(f"cancelled by the user {where}; every change is rolled back")
