"""The runner: snapshot → bundle → upload → one detached job on the target → follow it.

From the first write to the verified restart the work runs on the target, as one
detached process (the :mod:`app.targetjob` zipapp, under ``systemd-run`` where systemd runs,
else ``setsid -f``), so a dropped SSH link or a closed laptop cannot leave a half-applied
change: the job finishes, or rolls back by itself. This side only prepares and watches:

1. take the snapshot through the transport and store it locally and on the target
   (root-only) BEFORE anything is written; refuse when a file is no longer what the plan
   saw;
2. write the bundle (files with their expected checksums, values, statements, commands,
   the validation and restart commands, how to judge health, the settings expected in
   force: a :class:`~app.targetjob.formats.Bundle` built from the preview's Actions) and the
   job's zipapp into ``/var/lib/innotune/jobs/<id>/`` (0700);
3. launch it detached and follow its journal, handing each step to a callback;
4. :func:`status` reads a running or interrupted job after a reconnect; :func:`rollback`
   restores any snapshot with the same job in restore mode; :func:`confirm` keeps a
   change made with ``confirm_within``.

The snapshot and the bundle record the server instance (:func:`instance_record`); the job
records the snapshot's state and keeps at most ``keep`` snapshots of its instance; this
side prunes its local copies the same way afterwards (:mod:`app.jobs.history`).

``restart_anyway`` restarts the server after the changes even when every one of them takes
effect live: the restart proves that the server starts with the new option files, so the
values survive the next restart; a later rollback of that snapshot restarts too.

Cancelling (a ``threading.Event`` given to :func:`apply`) does the safe thing at every
point: before the launch nothing on the host was changed, so the job and its snapshot are
removed and :class:`ApplyCancelled` is raised; after it, the job on the target is asked to
stop (``DIR/cancel``) and rolls back what it changed, waiting for a restart under way to
finish first; a job that ended before it saw the request is rolled back by a restore job.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.describe.actions import Action, ApplyError
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ServerFacts
from app.jobs import control
from app.jobs import snapshot as snap
from app.jobs.bundle import build_bundle, expected_values
from app.jobs.control import (
    DEFAULT_HEALTH_TIMEOUT,
    DEFAULT_WATCH_SECONDS,
    DEFAULT_WATCHDOG_GRACE,
    FINAL,
    JOBS_ROOT,
    ApplyCancelled,
    JobInterrupted,
    JobPlan,
    JobStatus,
    JobStep,
    OnStep,
    _sudo,
    confirm,
    follow,
    job_dir,
    job_plan,
    launch,
    list_jobs,
    request_cancel,
    status,
    wait,
)
from app.jobs.restart import restart_argv_from, server_how, validation_command
from app.remote.transport import Transport
from app.targetjob.formats import (
    Bundle,
)

# The entry points below use these; callers reach them through the runner as before.
__all__ = [
    "DEFAULT_HEALTH_TIMEOUT",
    "DEFAULT_WATCH_SECONDS",
    "DEFAULT_WATCHDOG_GRACE",
    "FINAL",
    "JOBS_ROOT",
    "ApplyCancelled",
    "JobInterrupted",
    "JobPlan",
    "JobStatus",
    "JobStep",
    "Prepared",
    "apply",
    "build_bundle",
    "confirm",
    "discard",
    "expected_values",
    "follow",
    "instance_record",
    "job_dir",
    "job_plan",
    "launch",
    "list_jobs",
    "prepare",
    "request_cancel",
    "restart_argv_from",
    "rollback",
    "server_how",
    "status",
    "validation_command",
    "wait",
]

# -- the two entry points ------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A job ready to launch: its snapshot (stored on both sides) and bundle (uploaded)."""

    job_id: str
    snapshot: snap.Snapshot
    bundle: Bundle
    local_manifest: Path | None


def _instance_doc(instance: ServerInstance) -> dict[str, Any]:
    return {
        "label": instance.label,
        "pid": instance.pid,
        "binary": instance.binary,
        "started_by": instance.started_by,
        "service": instance.service,
        "socket": instance.socket,
        "port": instance.port,
    }


def instance_record(transport: Transport, server: ServerFacts) -> dict[str, Any]:
    """What a snapshot records of its instance: identity (datadir + option file) and where."""
    from app.jobs import history

    datadir = next((v.value for v in server.variables if v.name == "datadir"), None)
    return _instance_doc(server.instance) | history.identity(
        transport, server.instance, str(datadir) if datadir else None
    )


def _prune_local(transport: Transport, local_dir: Path | None, keep: int | None) -> None:
    """This computer's copies under the same retention as the target's (never fatal)."""
    from app.jobs import history

    if local_dir is None:
        return
    try:
        records = history.list_records(transport)
        history.prune_locally(local_dir, records, keep or history.keep_default())
    except (InnoTuneError, OSError, ValueError):
        pass


def prepare(
    transport: Transport,
    actions: Sequence[Action],
    server: ServerFacts,
    *,
    target_label: str,
    local_dir: Path | None,
    plan_json: str | None = None,
    expected: dict[str, str] | None = None,
    restart_argv: Sequence[str] | None = None,
    confirm_within: float | None = None,
    health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
    watch_seconds: float = DEFAULT_WATCH_SECONDS,
    watchdog_grace: float = DEFAULT_WATCHDOG_GRACE,
    restart_anyway: bool = False,
    cancel: threading.Event | None = None,
    keep: int | None = None,
) -> Prepared:
    """Snapshot (local + target), then upload the job; nothing on the host is changed yet.

    ``restart_anyway`` restarts after the changes even when none needs it (proving the
    server starts with the new option files); a rollback of the snapshot restarts too.
    A ``cancel`` set before the launch removes what was stored and raises
    :class:`ApplyCancelled`.

    Raises:
        ApplyError: a file is no longer what the plan saw, nothing to do, no known way to
            restart when one is needed or asked for, or the snapshot or the job could not
            be stored.
        ApplyCancelled: ``cancel`` was set; nothing on the host was changed.
    """
    skipped = [a for a in actions if a.empty]  # a change this host cannot take, among them
    actions = [a for a in actions if not a.empty]
    if not actions:
        raise ApplyError("Nothing to apply: every change is already in place or unsupported.")
    sudo = _sudo(transport)
    how = server_how(
        transport,
        server,
        restart_argv=restart_argv,
        health_timeout=health_timeout,
        watch_seconds=watch_seconds,
    )
    needs_restart = any(a.restart_needed for a in actions)
    # A later rollback restarts only when the apply restarted (dynamic-only: no restart);
    # after an asked-for restart it restarts too, proving the restored files start.
    how["restart_needed"] = needs_restart or restart_anyway
    if how["restart_needed"] and not how["restart"]:
        why = "These changes need a restart" if needs_restart else "A restart was asked for"
        raise ApplyError(
            f"{why} and InnoTune does not know how to restart {server.instance.label}.",
            "Give the command with --restart-command (the restart command field).",
        )
    live = sorted({v.key for a in actions for v in a.values if v.kind == "dynamic"})
    if live and not how["restart_needed"] and not how.get("client"):
        # The job logs in as the host's root through the socket (or the image's client);
        # it is never given a database password, so it could not set these live. Refused
        # before anything is written rather than applied half.
        raise ApplyError(
            f"The job on the host cannot log in to {server.instance.label} (it logs in as root "
            f"through the server's socket, without a password), so it cannot set "
            f"{', '.join(live)} live.",
            "Apply with --restart: the option file is written and the server restarts with "
            "the new values.",
            'Tick "Restart the server afterwards": the option file is written and the server '
            "restarts with the new values.",
        )
    snapshot = snap.take(
        transport,
        actions,
        target=target_label,
        instance=instance_record(transport, server),
        how=how,
        plan_json=plan_json,
        sudo=sudo,
    )
    saved = {f.path: f for f in snapshot.files}
    changed = [w.path for a in actions for w in a.files if saved[w.path].sha256 != w.sha256_before]
    if changed:
        raise ApplyError(
            f"Changed since the plan was made: {', '.join(changed)}. Nothing was written.",
            "Someone else edited the file; preview again to see the new diff.",
        )
    if cancel is not None and cancel.is_set():
        raise ApplyCancelled("Cancelled before anything was stored or changed on the host.")
    local_manifest = snap.store_locally(snapshot, local_dir) if local_dir is not None else None
    snap.store_on_target(transport, snapshot, sudo=sudo)
    want = expected_values(actions) | dict(expected or {})
    bundle = build_bundle(
        snapshot.id,
        snapshot,
        actions,
        validate=validation_command(server, snapshot.id),
        expected=want,
        confirm_within=confirm_within,
        watchdog_grace=watchdog_grace,
        restart_anyway=restart_anyway,
        skipped=skipped,
    )
    from app.jobs import history

    bundle.instance = snapshot.instance.get("key")
    bundle.keep = keep or history.keep_default()
    control._upload(transport, snapshot.id, bundle)
    if cancel is not None and cancel.is_set():
        discard(transport, snapshot.id, local_dir)
        raise ApplyCancelled(
            "Cancelled before the job started: nothing on the host was changed.",
            "The snapshot taken for it was removed again.",
        )
    return Prepared(snapshot.id, snapshot, bundle, local_manifest)


def discard(transport: Transport, job_id: str, local_dir: Path | None) -> None:
    """Remove a job that was never launched, and its snapshot (both copies).

    Only for a job that never ran: its snapshot records nothing that was changed.
    """
    directory = job_dir(job_id)
    transport.run(
        [
            "sh",
            "-c",
            'test -e "$1/pid" || rm -rf -- "$1" "$2"',
            "sh",
            directory,
            snap.target_dir(job_id),
        ],
        sudo=_sudo(transport),
    )
    if local_dir is not None:
        import shutil

        shutil.rmtree(Path(local_dir) / job_id, ignore_errors=True)


def apply(
    transport: Transport,
    actions: Sequence[Action],
    server: ServerFacts,
    *,
    target_label: str,
    local_dir: Path | None,
    on_step: OnStep | None = None,
    cancel: threading.Event | None = None,
    **options: Any,
) -> JobStatus:
    """Snapshot, upload, launch and follow; the job's status at its end.

    With ``confirm_within`` it returns at the confirmation wait (``awaiting-confirm``).
    With ``cancel`` set while it runs, the outcome is the rolled-back state with
    ``cancelled`` true (see the module's notes).

    Raises:
        ApplyError: nothing was changed (see :func:`prepare`).
        ApplyCancelled: cancelled before the launch; nothing on the host was changed.
        JobInterrupted: the connection dropped after the launch; use :func:`status`.
    """
    prepared = prepare(
        transport,
        actions,
        server,
        target_label=target_label,
        local_dir=local_dir,
        cancel=cancel,
        **options,
    )
    launch(transport, prepared.job_id)
    done = follow(transport, prepared.job_id, on_step, cancel=cancel)
    if cancel is not None and cancel.is_set() and done.state == "awaiting-confirm":
        # The cancel came as the job began to wait (after follow's last look at it): ask
        # now, and follow the rollback it does at once, showing only the steps not shown.
        shown = max((step.seq for step in done.steps), default=0)

        def unseen(step: JobStep) -> None:
            if on_step is not None and step.seq > shown:
                on_step(step)

        request_cancel(transport, prepared.job_id)
        done = follow(transport, prepared.job_id, unseen, stop_at_confirm=False)
    if cancel is not None and cancel.is_set() and done.state == "applied":
        # The job finished before it read the request: undo it as asked.
        back = rollback(transport, prepared.job_id, local_dir=local_dir, on_step=on_step)
        back.cancelled = True
        back.errors.insert(0, "cancelled by the user after the job had finished; rolled back")
        return back
    if done.final:
        _prune_local(transport, local_dir, prepared.bundle.keep)
    return done


def rollback(
    transport: Transport,
    snapshot_id: str,
    *,
    local_dir: Path | None = None,
    on_step: OnStep | None = None,
    restart_argv: Sequence[str] | None = None,
    undo: Sequence[str] | None = None,
    keep: int | None = None,
) -> JobStatus:
    """Restore a snapshot with the job in restore mode (files, values, restart if needed).

    The target's copy is verified first; when it is gone but this computer holds a
    complete (unredacted) copy, that copy is put back on the target first.

    The job also restores, newest first, the newer snapshots of the same instance still
    in force (they become superseded). ``undo`` is that list as the preview showed it
    (:func:`app.jobs.history.choose_rollback`): when the job finds another, it
    refuses and restores nothing.

    Raises:
        SnapshotError: no usable copy: nothing is restored.
    """
    sudo = _sudo(transport)
    try:
        snapshot = snap.load_from_target(transport, snapshot_id, sudo=sudo)
    except snap.SnapshotError as missing:
        if local_dir is None:
            raise
        try:
            local = snap.load_locally(local_dir, snapshot_id)
        except snap.SnapshotError:
            raise missing from None
        if any(f.redacted for f in local.files):
            raise snap.SnapshotError(
                f"{missing.problem} This computer's copy holds a secret-bearing file only "
                "redacted, so it cannot stand in.",
                "Nothing was restored. Restore that file by hand.",
            ) from None
        snap.store_on_target(transport, local, sudo=sudo)
        snapshot = local
    job_id = f"{snap.new_id()}-restore"
    bundle = Bundle(
        id=job_id,
        mode="restore",
        snapshot_id=snapshot.id,
        snapshot_dir=snap.target_dir(snapshot.id),
        how={"restart": list(restart_argv)} if restart_argv else {},
        instance=snapshot.instance.get("key"),
        keep=keep or _keep_default(),
        undo=list(undo) if undo is not None else None,
    )
    control._upload(transport, job_id, bundle)
    launch(transport, job_id)
    done = follow(transport, job_id, on_step)
    if done.final:
        _prune_local(transport, local_dir, keep)
    return done


def _keep_default() -> int:
    from app.jobs import history

    return history.keep_default()
