"""Following a job on the target: a job that ends between two reads of one poll.

The job journals its end step, then writes its final state. One poll reads both files; when
the job ends between the two reads, the follower must still see the end step with the final
state (a run of the suite once printed an applied job without its "end: applied" line).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.jobs import control
from app.remote.local import LocalTransport
from app.targetjob.formats import JobState, JournalLine

JOB = "20261129T000000Z-f0110e"


@pytest.fixture
def job_dir() -> Iterator[Path]:
    path = Path(control.job_dir(JOB))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _shim(bin_dir: Path, name: str, job: Path) -> None:
    """``name`` runs the real one, then the job ends: its end step, then its final state."""
    real = shutil.which(name)
    assert real, name
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / name
    shim.write_text(
        "#!/bin/sh\n"
        f'"{real}" "$@"; rc=$?\n'
        f'if [ ! -e "{job}/ended" ]; then\n'
        f'  touch "{job}/ended"\n'
        f'  cat "{job}/end.line" >> "{job}/journal.jsonl"\n'
        f'  cp "{job}/state.final" "{job}/state.json"\n'
        "fi\n"
        "exit $rc\n"
    )
    shim.chmod(0o755)


@pytest.mark.parametrize("ends_after", ["tail", "cat"])
def test_a_job_ending_mid_poll_is_followed_to_its_end_step(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ends_after: str
) -> None:
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    ended = JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied")
    (job_dir / "journal.jsonl").write_text(started.to_json() + "\n")
    (job_dir / "state.json").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    (job_dir / "end.line").write_text(ended.to_json() + "\n")
    (job_dir / "state.final").write_bytes(JobState("applied", job=JOB, mode="apply").to_json())
    (job_dir / "pid").write_text(str(os.getpid()))  # a live process: the job runs
    # The job ends right after the poll's read of the journal (tail) or of the state (cat).
    _shim(tmp_path / "bin", ends_after, job_dir)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")

    status = control.follow(LocalTransport(), JOB, poll=0.05)

    assert (job_dir / "ended").exists(), "the job ended while it was followed"
    assert status.state == "applied"
    assert [s.step for s in status.steps] == ["start", "end"]
