"""The Apply page's tasks: they run on the host's worker, from inputs frozen at the click.

Each drives the job on the target (through :mod:`app.flows.apply`, as the command line does)
over the worker's connection: an apply, a rollback,
an answer to a job waiting for its confirmation, a job followed or read after a reconnect,
and the snapshot listing. After a job restarted the server, the worker's database session
is opened again (:func:`_reconnect_after`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.access.database import Credentials, open_session
from app.access.doctor import DoctorResult, Secrets
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.plan import Plan
from app.domain.serverfacts import ServerFacts
from app.domain.target import Target
from app.flows.apply import (
    ApplyError,
    ApplyOptions,
    JobStatus,
    JobStep,
    answer_and_follow,
    apply_preview,
    follow,
    job_plan,
    job_status,
    restore,
)
from app.flows.inspecting import follow_instance
from app.flows.measure import MeasureOptions
from app.flows.measured import MeasuredApply, Measuring, measured_apply, method_for
from app.flows.preview import Preview
from app.flows.snapshots import Record, connected_key, list_records
from app.ui.hostworker import Progress


@dataclass(frozen=True)
class SnapshotListing:
    """The snapshots on the server with their states, and which instance is connected."""

    records: tuple[Record, ...]
    current_key: str | None


@dataclass(frozen=True)
class Relogin:
    """How to log in to the database again after a job restarted the server."""

    mysql_user: str | None
    mysql_password: str | None
    use_sudo: bool


@dataclass(frozen=True)
class ApplyInputs:
    """An apply, as it was asked for when Apply was pressed."""

    preview: Preview
    server: ServerFacts
    plan: Plan | None
    local_dir: Path  # this computer's copy of the snapshot
    restart_command: str | None
    confirm_within: float | None
    restart_anyway: bool
    relogin: Relogin


@dataclass(frozen=True)
class MeasuredInputs:
    """An apply measured before and after (``in_force``: the snapshot in force before it)."""

    apply: ApplyInputs
    target: Target
    secrets: Secrets
    options: MeasureOptions
    in_force: str = ""


@dataclass(frozen=True)
class RestoreInputs:
    """A rollback to ``snapshot_id`` (``undo``: the newer snapshots it undoes too)."""

    snapshot_id: str
    undo: tuple[str, ...] | None
    local_dir: Path
    restart_command: str | None
    relogin: Relogin


@dataclass(frozen=True)
class JobInputs:
    """A job on the target to answer (``answer``: confirm or cancel), follow or read."""

    job_id: str
    relogin: Relogin | None = None
    answer: Callable[[Any, str], None] | None = None


@dataclass(frozen=True)
class ListInputs:
    """Which instance is connected, to mark its snapshots."""

    instance: ServerInstance | None


def _transport(conn: DoctorResult) -> Any:
    if conn.transport is None:
        raise ApplyError("Not connected: go back to Connect.")
    return conn.transport


def _reconnect_after(
    conn: DoctorResult, relogin: Relogin, progress: Progress, result: JobStatus
) -> JobStatus:
    """Log in to the database again when the job restarted the server.

    The worker's session still points at the old server process, so the pages after this
    one (Verify) would fail on it; this opens a new one the same way.
    """
    if not result.restarted or conn.transport is None or conn.instance is None:
        return result
    old, conn.session = conn.session, None
    if old is not None:
        # The old server process is gone; closing its session may fail, and that is fine.
        with contextlib.suppress(Exception):
            old.close()
    # The restarted server is a new process: the pages after this one name its new pid.
    with contextlib.suppress(InnoTuneError):
        follow_instance(conn)
    creds = Credentials(relogin.mysql_user, relogin.mysql_password)
    try:
        conn.session = open_session(conn.transport, conn.instance, creds, use_sudo=relogin.use_sudo)
    except InnoTuneError as exc:
        progress.post(JobStep(0, "", "reconnect", "warn", f"could not log in again: {exc.problem}"))
    else:
        progress.post(
            JobStep(0, "", "reconnect", "ok", f"database session reopened via {conn.session.via}")
        )
    return result


#: Said as the apply itself begins (after a "before" measured or watched): the phase whose
#: length nobody knows, so the progress bar only shows that it works.
APPLYING = "Taking the snapshot, then applying on the server"


def run_apply(conn: DoctorResult, inputs: ApplyInputs, progress: Progress) -> JobStatus:
    """The apply task: snapshot, bundle and job on the target, followed to its end."""
    options = ApplyOptions(
        restart_command=inputs.restart_command,
        restart_anyway=inputs.restart_anyway,
        confirm_within=inputs.confirm_within,
    )
    done = apply_preview(
        _transport(conn),
        inputs.preview,
        inputs.server,
        inputs.plan,
        options,
        on_step=progress.post,
        cancel=progress.cancelled,
        local_dir=inputs.local_dir,
    )
    return _reconnect_after(conn, inputs.relogin, progress, done)


@dataclass(frozen=True)
class WatchedInputs:
    """An apply with a watch of the server's own workload first (a busy server's "before")."""

    apply: ApplyInputs
    target: Target
    secrets: Secrets
    seconds: float


def run_watched_apply(conn: DoctorResult, inputs: WatchedInputs, progress: Progress) -> JobStatus:
    """Watch the server's own workload (posted as soon as it is there), then apply.

    Raises:
        InnoTuneError: cancelled during the watch (nothing was changed).
    """
    from app.flows.watching import watch

    found = watch(
        conn,
        inputs.target,
        inputs.secrets,
        inputs.seconds,
        cancel=progress.cancelled,
        progress=progress.post,
    )
    progress.post(found)
    if progress.cancelled.is_set():
        raise InnoTuneError("Cancelled during the watch: nothing was changed.")
    progress.say(APPLYING)
    return run_apply(conn, inputs.apply, progress)


def plain_apply(
    inputs: ApplyInputs, state: Any, watch_box: Any
) -> tuple[str, Callable[..., Any], Any, str]:
    """The apply task without a benchmark: its name, function, inputs and first words.

    With ``watch_box`` ticked, the server's own workload is watched first, as long as the
    Verify page's watch, so that a watch after the apply has a "before" to compare with.
    """
    target, secrets = state.target, state.secrets
    if watch_box.isChecked() and target is not None:
        from app.flows.watching import WATCH_SECONDS

        watched = WatchedInputs(inputs, target, secrets, WATCH_SECONDS)
        started = (
            f"Watching the server's own workload for {WATCH_SECONDS:.0f} s first (no load "
            "added); nothing is changed yet…"
        )
        return "watched apply", run_watched_apply, watched, started
    return "apply", run_apply, inputs, APPLYING + "…"


def run_measured_apply(
    conn: DoctorResult, inputs: MeasuredInputs, progress: Progress
) -> MeasuredApply:
    """The measured apply task: "before", the apply (as :func:`run_apply`), then "after".

    Posts the benchmarks' progress as fractions (0-1 within each side), the "before" report
    as soon as it is there, the job's steps, and its status once it has ended (the "after"
    side begins); the benchmarks' text goes out as ``say``.
    """

    def say(label: str, text: str) -> None:
        progress.say(f"“{label}”: {text}" if label else text)

    measuring = Measuring(
        conn,
        inputs.target,
        inputs.secrets,
        inputs.options,
        cancel=progress.cancelled,
        say=say,
        progress=progress.post,
    )

    def apply() -> JobStatus:
        progress.say(APPLYING)
        return run_apply(conn, inputs.apply, progress)

    method = method_for(inputs.apply.preview, inputs.apply.confirm_within)
    return measured_apply(
        measuring,
        apply,
        method,
        cancel=progress.cancelled,
        in_force=inputs.in_force,
        on_before=progress.post,
        on_applied=progress.post,
    )


def run_restore(conn: DoctorResult, inputs: RestoreInputs, progress: Progress) -> JobStatus:
    """The rollback task: the snapshot's job on the target, followed to its end."""
    done = restore(
        _transport(conn),
        inputs.snapshot_id,
        on_step=progress.post,
        restart_command=inputs.restart_command,
        undo=list(inputs.undo) if inputs.undo is not None else None,
        local_dir=inputs.local_dir,
    )
    return _reconnect_after(conn, inputs.relogin, progress, done)


def answer_job(conn: DoctorResult, inputs: JobInputs, progress: Progress) -> JobStatus:
    """Give a job waiting for its confirmation its answer, then follow it to its end."""
    assert inputs.answer is not None and inputs.relogin is not None
    transport = _transport(conn)
    done = answer_and_follow(transport, inputs.job_id, inputs.answer, progress.post)
    return _reconnect_after(conn, inputs.relogin, progress, done)


def read_job(conn: DoctorResult, inputs: JobInputs, progress: Progress) -> JobStatus:
    """A job's whole journal and state as it is now (its steps posted)."""
    found = job_status(_transport(conn), inputs.job_id)
    for step in found.steps:
        progress.post(step)
    return found


def follow_job(conn: DoctorResult, inputs: JobInputs, progress: Progress) -> JobStatus:
    """Follow a job found on the target (a reconnect): what it does, its journal, its state."""
    transport = _transport(conn)
    # A job gone from the host is for follow to report (as missing), so a bundle that
    # cannot be read is not an error here.
    with contextlib.suppress(InnoTuneError):
        progress.post(job_plan(transport, inputs.job_id))
    return follow(transport, inputs.job_id, progress.post)


def list_snapshots(conn: DoctorResult, inputs: ListInputs, _progress: Progress) -> SnapshotListing:
    """The snapshots on the server per instance with their states."""
    transport = _transport(conn)
    records = tuple(list_records(transport))
    key = connected_key(transport, inputs.instance) if inputs.instance is not None else None
    return SnapshotListing(records, key)
