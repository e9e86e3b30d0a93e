"""The dead-man switch: restores a job's snapshot when the job dies before it ends.

The rescue runs in ``DIR-rescue`` as a restore job of the same code (the zipapp this
process runs from: nothing is copied).

Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import os
import time

from .files import atomic_write, read_or_none
from .formats import FINAL, Bundle, FormatError, JobState, JournalLine
from .health import live_argv
from .job import Job


def _job_alive(pid: int, directory: str) -> bool:
    """True while ``pid`` is this job's process (not a zombie, not a reused pid)."""
    argv = live_argv(pid)
    return argv is not None and directory in argv and "--watchdog" not in argv


def _read_state(directory: str) -> JobState:
    data = read_or_none(os.path.join(directory, "state.json")) or b""
    return JobState.from_json(data) or JobState("")


def watchdog(directory: str, poll: float = 0.5, start_wait: float = 120.0) -> str:
    """The dead-man switch next to a job: restore its snapshot if the job dies unfinished.

    It runs as its own detached process (launched with the job), so a job killed by
    SIGKILL, the OOM killer or a crash still ends rolled back. It never acts while the job's
    process lives (a health wait may legitimately take minutes), nor when the job never
    started (nothing was changed). Once the job's process is gone without a final state for
    ``watchdog_grace`` seconds, it runs the job in restore mode in ``DIR-rescue`` and writes
    the outcome into the dead job's own journal and state, so a reconnecting client sees
    ``rolled-back`` (or ``failed-rollback``).

    Returns:
        What it did: ``ended`` (the job ended by itself), ``not-started`` or the rescue's
        final state.
    """
    directory = directory.rstrip("/")
    with open(os.path.join(directory, "watchdog.pid"), "w") as fh:
        fh.write("%d\n" % os.getpid())
    with open(os.path.join(directory, "bundle.json"), "rb") as fh:
        try:
            bundle = Bundle.from_json(fh.read())
        except FormatError:
            return "not-started"  # the job refuses the same bundle and changes nothing
    grace = bundle.watchdog_grace
    began = time.time()
    dead_since: float | None = None
    pid: int | None = None
    while True:
        if not os.path.isdir(directory):
            return "ended"  # the job's record was removed: nothing left to watch over
        if _read_state(directory).state in FINAL:
            return "ended"
        try:
            with open(os.path.join(directory, "pid")) as fh:
                pid = int(fh.read().strip())
        except (OSError, ValueError):
            pid = None
        if pid is None and time.time() - began > start_wait:
            return "not-started"
        if pid is None or _job_alive(pid, directory):
            dead_since = None
        elif dead_since is None:
            dead_since = time.time()
        elif time.time() - dead_since >= grace:
            break
        time.sleep(poll)
    if _read_state(directory).state in FINAL:
        return "ended"
    rescue_dir = directory + "-rescue"
    os.makedirs(rescue_dir, mode=0o700, exist_ok=True)
    rescue_bundle = Bundle(
        id="%s-rescue" % bundle.id,
        mode="restore",
        snapshot_id=bundle.snapshot_id,
        snapshot_dir=bundle.snapshot_dir,
        how=bundle.how,
        only=True,  # its own snapshot only: the job it stands in for was the newest
    )
    atomic_write(os.path.join(rescue_dir, "bundle.json"), rescue_bundle.to_json(), 0o600, "")
    final = Job(rescue_dir).main()
    # The dead job's own record: its journal goes on, its state becomes final.
    dead = Job(directory)
    journal = read_or_none(os.path.join(directory, "journal.jsonl")) or b""
    dead.seq = journal.count(b"\n")
    dead.manifest = {"id": bundle.snapshot_id}
    dead.step(
        "watchdog",
        "fail",
        "the job (pid %s) died before it ended; restoring snapshot %s" % (pid, bundle.snapshot_id),
    )
    for raw in (read_or_none(os.path.join(rescue_dir, "journal.jsonl")) or b"").splitlines():
        line = JournalLine.from_json(raw)
        if line is not None:
            dead.step("watchdog:" + line.step, line.status, line.detail)
    rescued = _read_state(rescue_dir)
    dead.errors = [
        "the job (pid %s) died before it ended; the watchdog restored the snapshot" % pid
    ]
    dead.errors += rescued.errors
    dead.log_lines = rescued.log_lines
    dead.restarted = rescued.restarted
    state = "rolled-back" if final == "rolled-back" else "failed-rollback"
    dead.step("end", "ok" if state == "rolled-back" else "fail", state + " (by the watchdog)")
    dead.state(state, rescued_by="%s-rescue" % bundle.id)
    dead.journal.close()
    return final
