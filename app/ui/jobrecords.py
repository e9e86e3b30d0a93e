"""This computer's record of the jobs the wizard started on a target, and whether it saw them end.

A job on the target goes on by itself when the wizard is closed or the connection drops.
So the wizard notes each job as its first journal step arrives, and again whenever it
sees the job's state; a job whose last seen state is not final is offered for a reconnect
when the wizard starts. One small JSON file per job, under the data directory; never a
password (the connection profile is the form without its secret fields).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.flows.apply import FINAL, JobStatus, JobStep

# The target job's first journal line: "job <id> (<mode>), pid <n>" (see targetjob.main).
_START = re.compile(r"^job (?P<id>\S+) \((?P<mode>\w+)\)")
# States after which nothing more will happen to the job: final, or gone from the target.
ENDED = frozenset(FINAL) | {"missing"}


@dataclass
class JobRecord:
    """One job the wizard started: where, when, and the last state it saw."""

    job_id: str
    mode: str  # apply or restore
    target: str  # the target's label, as the person saw it
    started: str  # the job's own time stamp of its first step
    profile: dict[str, str] = field(default_factory=dict)  # the Connect form, no secrets
    state: str = "running"

    @property
    def ended(self) -> bool:
        """True once the wizard saw the job end."""
        return self.state in ENDED


def records_dir() -> Path:
    """``<data directory>/jobs``."""
    from app.places import app_data_dir

    return app_data_dir() / "jobs"


def _path(folder: Path, job_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", job_id).strip(".") or "job"
    return folder / f"{safe}.json"


def _write(folder: Path, record: JobRecord) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = _path(folder, record.job_id)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record), indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def load(folder: Path, job_id: str) -> JobRecord | None:
    """The record of ``job_id``, if this computer has one."""
    try:
        data: dict[str, Any] = json.loads(_path(folder, job_id).read_text())
        return JobRecord(**data)
    except (OSError, ValueError, TypeError):
        return None


def note_step(folder: Path, step: JobStep, target: str, profile: dict[str, str]) -> None:
    """Record a job when its first journal step ("start") is seen."""
    match = _START.match(step.detail) if step.step == "start" else None
    if match is None or load(folder, match["id"]) is not None:
        return
    _write(folder, JobRecord(match["id"], match["mode"], target, step.time, dict(profile)))


def note_status(folder: Path, status: JobStatus) -> None:
    """Record the state the wizard saw a job in."""
    record = load(folder, status.job_id)
    if record is not None and record.state != status.state:
        record.state = status.state
        _write(folder, record)


def unfinished(folder: Path) -> list[JobRecord]:
    """Jobs started from this computer and not seen to end, newest first."""
    found = []
    for path in folder.glob("*.json") if folder.is_dir() else ():
        record = load(folder, path.stem)
        if record is not None and not record.ended:
            found.append(record)
    return sorted(found, key=lambda r: r.started, reverse=True)
