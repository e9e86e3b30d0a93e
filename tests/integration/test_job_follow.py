"""Following a job on the target: a job that ends between two reads of one poll.

The job journals its end step, writes its final state, then exits. One poll reads whether it
lives, its state and its journal; when the job ends between two of those reads, the follower
must still see the end step with the final state. Runs of the suite once printed an applied
job without its "end: applied" line (the journal read before the state), and once saw an
applied job as "interrupted" (its state read before it was found gone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
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


def _script(bin_dir: Path, name: str, body: str) -> None:
    """An executable shell script ``bin_dir/name`` (put first on PATH by the test)."""
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / name).write_text("#!/bin/sh\n" + body)
    (bin_dir / name).chmod(0o755)


def _shim(bin_dir: Path, name: str, job: Path) -> None:
    """``name`` runs the real one, then the job ends: its end step, its final state, its exit."""
    real, cat = shutil.which(name), shutil.which("cat")
    assert real and cat, name
    _script(
        bin_dir,
        name,
        f'"{real}" "$@"; rc=$?\n'
        f'if [ ! -e "{job}/ended" ]; then\n'
        f'  : > "{job}/ended"\n'
        f'  "{cat}" "{job}/end.line" >> "{job}/journal.jsonl"\n'
        f'  "{cat}" "{job}/state.final" > "{job}/state.json"\n'
        f'  p=$("{cat}" "{job}/pid"); kill -9 "$p"\n'
        # Dead before the poll goes on (a zombie until the test reaps it).
        f'  while [ -d /proc/$p ] && ! grep -q "^State:.*[ZX]" /proc/$p/status; do :; done\n'
        "fi\n"
        "exit $rc\n",
    )


def _start_shim(bin_dir: Path, job: Path) -> None:
    """``cat`` runs the real one; the first time, the job starts: its pid, first state and step
    (from ``pid.later``, ``state.running``, ``start.line``)."""
    cat = shutil.which("cat")
    assert cat
    _script(
        bin_dir,
        "cat",
        f'"{cat}" "$@"; rc=$?\n'
        f'if [ ! -e "{job}/started" ]; then\n'
        f'  : > "{job}/started"\n'
        f'  "{cat}" "{job}/pid.later" > "{job}/pid"\n'
        f'  "{cat}" "{job}/state.running" > "{job}/state.json"\n'
        f'  "{cat}" "{job}/start.line" >> "{job}/journal.jsonl"\n'
        "fi\n"
        "exit $rc\n",
    )


def _followed_to_its_end(job: subprocess.Popen[bytes], job_dir: Path) -> None:
    """Follow the job until the follower sees it done: applied, with its end step."""
    try:
        status = control.follow(LocalTransport(), JOB, poll=0.05)
    finally:
        job.kill()
        job.wait()
    assert (job_dir / "ended").exists(), "the job ended while it was followed"
    assert status.state == "applied", status
    assert [s.step for s in status.steps] == ["start", "end"]


@pytest.mark.parametrize("ends_after", ["cat", "sed", "tail"])
def test_a_job_ending_mid_poll_is_followed_to_its_end_step(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ends_after: str
) -> None:
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    ended = JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied")
    (job_dir / "journal.jsonl").write_text(started.to_json() + "\n")
    (job_dir / "state.json").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    (job_dir / "end.line").write_text(ended.to_json() + "\n")
    (job_dir / "state.final").write_bytes(JobState("applied", job=JOB, mode="apply").to_json())
    job = subprocess.Popen(["sleep", "600"])  # the job's process: it runs until it ends
    (job_dir / "pid").write_text(str(job.pid))
    # The job ends right after the poll's first read of a file (cat: its pid), of the job's
    # process (sed) or of the journal (tail).
    _shim(tmp_path / "bin", ends_after, job_dir)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")

    _followed_to_its_end(job, job_dir)


def test_a_job_starting_mid_poll_is_followed_as_running(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Launched, the job writes its pid, then its first state: a poll that looked for it just
    before must not take the state it then reads for a job that died (a run of the suite once
    saw a restore "interrupted" at its start)."""
    job = subprocess.Popen(["sleep", "600"])
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    (job_dir / "pid.later").write_text(str(job.pid))
    (job_dir / "state.running").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    (job_dir / "start.line").write_text(started.to_json() + "\n")
    # The job starts right after the poll's first `cat` (of the pid file, not there yet).
    _start_shim(tmp_path / "bin", job_dir)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    ended = JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied")

    def end_later() -> None:
        # Once the polls have seen it run a while: the end step, the final state, the exit.
        while not (job_dir / "started").exists():
            time.sleep(0.01)
        time.sleep(0.5)
        with open(job_dir / "journal.jsonl", "a") as fh:
            fh.write(ended.to_json() + "\n")
        final = JobState("applied", job=JOB, mode="apply").to_json()
        (job_dir / "state.tmp").write_bytes(final)
        (job_dir / "state.tmp").replace(job_dir / "state.json")
        job.kill()

    ender = threading.Thread(target=end_later)
    ender.start()
    try:
        status = control.follow(LocalTransport(), JOB, poll=0.05)
    finally:
        ender.join()
        job.kill()
        job.wait()

    assert (job_dir / "started").exists(), "the job started while it was followed"
    assert status.state == "applied", status
    assert [s.step for s in status.steps] == ["start", "end"]


def test_a_job_starting_and_ending_within_one_poll_is_seen_ended(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short job (one udev rule) on a busy host: the poll looked for it before it started,
    read its state while it ran, then found it gone. Its state read then was "running", so
    it showed as "interrupted" though it had applied (a run of the suite, test_appliers)."""
    job = subprocess.Popen(["sleep", "600"])
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    ended = JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied")
    (job_dir / "pid.later").write_text(str(job.pid))
    (job_dir / "state.running").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    (job_dir / "start.line").write_text(started.to_json() + "\n")
    (job_dir / "end.line").write_text(ended.to_json() + "\n")
    (job_dir / "state.final").write_bytes(JobState("applied", job=JOB, mode="apply").to_json())
    bin_dir = tmp_path / "bin"
    # It starts right after the poll's first `cat` (of its pid file, not there yet), and ends
    # right after the same poll read its state and journal.
    _shim(bin_dir, "tail", job_dir)
    _start_shim(bin_dir, job_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    (job_dir / "journal.jsonl").write_text("")

    _followed_to_its_end(job, job_dir)


def test_a_job_read_dead_for_one_poll_is_followed_on(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy host a running job once read as dead for one poll, so an apply that went on
    to its end showed as "interrupted". Dead is said only when the next poll agrees; a job
    really gone still is (the second case)."""
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    (job_dir / "journal.jsonl").write_text(started.to_json() + "\n")
    (job_dir / "state.json").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    (job_dir / "end.line").write_text(
        JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied").to_json() + "\n"
    )
    (job_dir / "state.final").write_bytes(JobState("applied", job=JOB, mode="apply").to_json())
    job = subprocess.Popen(["sleep", "600"])
    (job_dir / "pid").write_text(str(job.pid))
    sed, count = shutil.which("sed"), tmp_path / "reads"
    assert sed
    bin_dir = tmp_path / "bin"
    # The first poll's two looks at the job's process read it as a zombie.
    _script(
        bin_dir,
        "sed",
        f'n=$(wc -c < "{count}" 2>/dev/null || echo 0); printf x >> "{count}"\n'
        'if [ "$n" -lt 2 ]; then echo Z; exit 0; fi\n'
        f'exec "{sed}" "$@"\n',
    )
    _shim(bin_dir, "tail", job_dir)  # it ends at a journal read of a later poll
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    (job_dir / "ended").write_text("")  # the tail shim ends it only once this is gone

    def end_at_second_poll() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (not count.exists() or count.stat().st_size < 3):
            time.sleep(0.01)
        (job_dir / "ended").unlink()

    ender = threading.Thread(target=end_at_second_poll)
    ender.start()
    try:
        _followed_to_its_end(job, job_dir)
    finally:
        ender.join()

    # Really gone: two polls agree, and it is interrupted.
    (job_dir / "state.json").write_bytes(JobState("running", job=JOB, mode="apply").to_json())
    status = control.follow(LocalTransport(), JOB, poll=0.05)
    assert status.state == "interrupted", status
    assert f"The job (process {job.pid})" in status.errors[0], status.errors


def test_a_poll_without_an_answer_is_not_a_dead_job(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A poll whose shell printed nothing (sudo or the shell failed) said nothing of the job:
    once, it is read again; every time, following fails as a lost contact, and the job is
    never called interrupted for it."""
    started = JournalLine(1, "2026-11-29T00:00:00.000Z", "start", "ok", "job")
    ended = JournalLine(2, "2026-11-29T00:00:01.000Z", "end", "ok", "applied")
    real, fails = shutil.which("sh"), tmp_path / "fails"
    assert real
    bin_dir = tmp_path / "bin"
    _script(
        bin_dir,
        "sh",
        f'n=$(cat "{fails}" 2>/dev/null || echo 0)\n'
        'if [ "${n:-0}" -gt 0 ]; then\n'
        f'  echo $((n - 1)) > "{fails}"\n'
        '  echo "sudo: a password is required" >&2; exit 1\n'
        "fi\n"
        f'exec "{real}" "$@"\n',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    (job_dir / "journal.jsonl").write_text(started.to_json() + "\n" + ended.to_json() + "\n")
    (job_dir / "state.json").write_bytes(JobState("applied", job=JOB, mode="apply").to_json())

    fails.write_text("1")  # one poll fails, the next reads the job
    status = control.follow(LocalTransport(), JOB, poll=0.05)
    assert status.state == "applied", status
    assert [s.step for s in status.steps] == ["start", "end"]

    fails.write_text("1000")  # every poll fails
    with pytest.raises(control.JobInterrupted, match="a password is required"):
        control.follow(LocalTransport(), JOB, poll=0.05)
