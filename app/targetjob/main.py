"""The command line of the job on the target: ``python3 job.pyz [--watchdog] DIR``.

Standard library only, Python 3.7+: this module runs on the target.
"""

from __future__ import annotations

import json
import os
import sys

from .files import atomic_write
from .formats import FormatError, JobState, JournalLine, now_iso
from .job import Job
from .records import prune, read_records, remove_free_locks
from .watchdog import watchdog


def main(argv: list[str]) -> int:
    """Run as ``python3 job.pyz DIR`` (the job) or with ``--watchdog DIR`` (its dead-man).

    ``--list`` prints the snapshots with their states (JSON); ``--prune KEEP [INSTANCE]``
    applies the retention.
    """
    if len(argv) == 3 and argv[1] == "--watchdog":
        watchdog(argv[2])
        return 0
    if len(argv) == 2 and argv[1] == "--list":
        sys.stdout.write(json.dumps(read_records()) + "\n")
        return 0
    if len(argv) in (3, 4) and argv[1] == "--prune":
        done = prune(int(argv[2]), argv[3] if len(argv) == 4 else None)
        done["locks_removed"] = remove_free_locks()
        sys.stdout.write(json.dumps(done) + "\n")
        return 0
    if len(argv) != 2:
        sys.stderr.write("usage: job.pyz [--watchdog] DIR | --list | --prune KEEP [INSTANCE]\n")
        return 2
    try:
        job = Job(argv[1])
    except FormatError as exc:
        refuse(argv[1], str(exc))
        return 1
    final = job.main()
    return 0 if final in ("applied", "rolled-back", "refused") else 1


def refuse(directory: str, problem: str) -> None:
    """A bundle this job does not read: say so in the journal and the state, change nothing."""
    line = JournalLine(1, now_iso(), "start", "fail", "bundle refused, nothing changed: " + problem)
    with open(os.path.join(directory, "journal.jsonl"), "a") as fh:
        fh.write(line.to_json() + "\n")
    state = JobState(state="refused", errors=[line.detail], updated=now_iso())
    atomic_write(os.path.join(directory, "state.json"), state.to_json(), 0o600, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
