"""Applying a previewed plan, and restoring a snapshot: the job on the target does the work.

Both faces call :func:`apply_preview` and :func:`restore` with the same options, so the
runner's apply and rollback calls are written once, here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.describe import actions
from app.describe.actions import Action
from app.describe.preview import Preview, with_requested_restart
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.domain.serverfacts import ServerFacts
from app.jobs import runner
from app.places import local_snapshot_dir
from app.remote.transport import Transport

# What a job on the target is and says, for both faces.
JobStatus = runner.JobStatus
JobStep = runner.JobStep
JobPlan = runner.JobPlan
FINAL = runner.FINAL
ApplyError = actions.ApplyError
ApplyCancelled = runner.ApplyCancelled
JobInterrupted = runner.JobInterrupted
OnStep = Callable[[runner.JobStep], None]

# How the job is asked to keep or cancel a change, and how a restart command is read.
confirm = runner.confirm
request_cancel = runner.request_cancel
restart_argv_from = runner.restart_argv_from


@dataclass(frozen=True)
class ApplyOptions:
    """How an apply runs, beyond what the preview says.

    Attributes:
        restart_command: how to restart the server when no service manager is found.
        restart_anyway: restart even when every change takes effect live.
        confirm_within: roll back unless confirmed within this many seconds (None: no wait).
        health_timeout: how long a restart, crash recovery included, may take.
        watch_seconds: how long to watch for a crash after a restart.
        keep: snapshots kept per instance (None: the default).
    """

    restart_command: str | None = None
    restart_anyway: bool = False
    confirm_within: float | None = None
    health_timeout: float = runner.DEFAULT_HEALTH_TIMEOUT
    watch_seconds: float = runner.DEFAULT_WATCH_SECONDS
    keep: int | None = None

    @property
    def restart_argv(self) -> list[str] | None:
        """The restart command as an argument list (None: the service manager's)."""
        return runner.restart_argv_from(self.restart_command)


def with_restart(preview: Preview, facts: HostFacts, plan: Plan, options: ApplyOptions) -> Preview:
    """The preview of this apply: with the restart asked for, when it is."""
    if not options.restart_anyway:
        return preview
    return with_requested_restart(preview, facts, plan, options.restart_argv)


def stale_files(plan: Plan, actions: Sequence[Action]) -> list[str]:
    """Files whose checksum differs from the one the saved plan recorded."""
    now = {w.path: w.sha256_before for a in actions for w in a.files}
    return [
        f"{c.path} (planned {'absent' if c.sha256 is None else c.sha256[:12]}, now "
        f"{'absent' if now.get(c.path) is None else str(now[c.path])[:12]})"
        for c in plan.file_checksums
        if c.path in now and now[c.path] != c.sha256
    ]


def not_taken(preview: Preview, status: JobStatus) -> dict[str, str]:
    """The plan's changes this host did not take, each with why (change id → reason).

    An applier may find at describe time that a host cannot take a change (a queue file
    missing), and the job may find a kernel or disk file read-only when it writes it (a
    container's /proc/sys): both are warnings, not failures, so the job is "applied" and a
    summary must not count those changes as applied. The job names those it did not apply
    (``status.not_applied``); older jobs said so only in their warnings.
    """
    # What the job itself says it did not apply (its own count), then what older jobs only
    # said in their warnings.
    taken_not: dict[str, str] = dict(status.not_applied)
    for action in preview.actions:
        # A udev rule that cannot be written leaves the live value in force: it is only
        # not kept across reboots (the preview warned).
        for why in action.unsupported if action.applier != "udev" else ():
            for change_id in action.change_ids:
                taken_not.setdefault(change_id, why)
        for value in action.values:
            if value.kind not in ("sysfs", "sysctl"):
                continue
            path = value.path  # the file the job writes (sysfs, or /proc/sys for sysctl)
            # The change this value is for: an action may carry several (vm.dirty_ratio and
            # vm.dirty_background_ratio in one sysctl file).
            mine = [c for c in action.change_ids if c in (value.key, f"{value.key}@{value.device}")]
            for warning in status.warnings:
                if path and warning.startswith(f"{path} ") and "not supported" in warning:
                    for change_id in mine or action.change_ids:
                        taken_not.setdefault(change_id, warning)
    return taken_not


def apply_preview(
    transport: Transport,
    preview: Preview,
    server: ServerFacts,
    plan: Plan | None,
    options: ApplyOptions,
    *,
    on_step: OnStep,
    cancel: threading.Event | None = None,
    local_dir: Path | None = None,
) -> JobStatus:
    """Snapshot, then run the preview's actions as one detached job; its status at its end.

    With ``options.confirm_within`` it returns at the confirmation wait.

    Raises:
        ApplyError: nothing was changed.
        ApplyCancelled: ``cancel`` was set before the launch; nothing was changed.
        JobInterrupted: the connection dropped after the launch.
    """
    return runner.apply(
        transport,
        preview.actions,
        server,
        target_label=transport.label,
        local_dir=local_dir or local_snapshot_dir(transport.label),
        on_step=on_step,
        plan_json=plan.to_json() if plan is not None else None,
        expected=runner.expected_values(preview.actions, plan.changes if plan else ()),
        restart_argv=options.restart_argv,
        confirm_within=options.confirm_within,
        health_timeout=options.health_timeout,
        watch_seconds=options.watch_seconds,
        restart_anyway=options.restart_anyway,
        cancel=cancel,
        keep=options.keep,
    )


def restore(
    transport: Transport,
    snapshot_id: str,
    *,
    on_step: OnStep,
    restart_command: str | None = None,
    undo: Sequence[str] | None = None,
    keep: int | None = None,
    local_dir: Path | None = None,
) -> JobStatus:
    """Restore a snapshot with the job (files, values, a restart when an option file changed).

    ``undo`` is the list of newer snapshots the restore also undoes, as shown to the user.

    Raises:
        SnapshotError: no usable copy: nothing is restored.
        JobInterrupted: the connection dropped after the launch.
    """
    return runner.rollback(
        transport,
        snapshot_id,
        local_dir=local_dir or local_snapshot_dir(transport.label),
        on_step=on_step,
        restart_argv=runner.restart_argv_from(restart_command),
        undo=undo,
        keep=keep,
    )


def confirm_and_follow(transport: Transport, job_id: str, keep: bool, on_step: OnStep) -> JobStatus:
    """Confirm a job waiting for it (when ``keep``), then follow it to its end."""
    if keep:
        runner.confirm(transport, job_id)
    return runner.follow(transport, job_id, on_step, stop_at_confirm=False)


def follow(
    transport: Transport, job_id: str, on_step: OnStep, stop_at_confirm: bool = True
) -> JobStatus:
    """Follow a job on the target to its end (or to its wait for a confirmation)."""
    return runner.follow(transport, job_id, on_step, stop_at_confirm=stop_at_confirm)


def job_status(transport: Transport, job_id: str) -> JobStatus:
    """A job's whole journal and state as it is now."""
    return runner.status(transport, job_id)


def job_plan(transport: Transport, job_id: str) -> JobPlan:
    """What a job on the target does (its bundle, read back)."""
    return runner.job_plan(transport, job_id)


def answer_and_follow(
    transport: Transport, job_id: str, answer: Callable[[Transport, str], None], on_step: OnStep
) -> JobStatus:
    """Give a job waiting for its confirmation its answer (keep or cancel), then follow it."""
    answer(transport, job_id)
    return runner.follow(transport, job_id, on_step, stop_at_confirm=False)
