"""What the Apply page says: the summary, the restart's way, a job's outcome, the measuring.

Plain functions from the flows' results to sentences, so the page only puts them in place.
"""

from __future__ import annotations

import logging
import shlex

from app.domain.instance import ServerInstance
from app.domain.words import count, size_text
from app.flows import apply as jobs
from app.flows.measure import BUDGET_FACTOR, Quietness
from app.flows.measured import MeasuredApply, Method
from app.flows.preview import Preview
from app.ui.logview import log_error


def restart_way(instance: ServerInstance | None) -> str | None:
    """How the server is restarted, when a service manager runs it (None: typed by hand)."""
    argv = instance.restart_argv() if instance is not None else None
    if argv is None or instance is None:
        return None
    manager = "systemd" if instance.started_by == "systemd" else "its init script"
    if instance.container is not None:
        manager = f"the container engine ({instance.container.engine})"
    return f"When a restart is needed, {manager} restarts the server: {shlex.join(argv)}"


#: Said when no service manager runs the server, above the field for its restart command.
ASK_RESTART_COMMAND = (
    "No service manager runs this server: if a restart is needed, type the "
    "command that restarts it:"
)


def summary_text(preview: Preview, command_given: bool) -> str:
    """What Apply will change and whether the server restarts, for ``preview``.

    ``command_given``: the person typed the command that restarts the server.
    """
    files = len(preview.option_files) + len(preview.persistence_files)
    text = f"{count(files, 'file')}, {count(len(preview.values), 'value')} to change. "
    if preview.will_restart:
        text += "The server will restart."
        if preview.restart_requested:
            text += " (asked for: every change is live, the restart proves the new files)"
        if preview.downtime is not None:
            text += f" Estimated downtime: {preview.downtime.text()}."
        if preview.restart is None and not command_given:
            text += (
                " InnoTune does not know how this server is restarted: give the "
                "restart command above."
            )
    else:
        text += "No restart needed."
    if preview.errors:
        text += " An applier refused; nothing can be applied: " + "; ".join(preview.errors)
    return text


def followed_text(
    job_id: str, mode: str, target: str | None, started: str | None, plan: jobs.JobPlan | None
) -> str:
    """The summary of a job followed after a reconnect: where, since when, what."""
    text = f"Reconnected to job {job_id}: {'a rollback' if mode == 'restore' else 'an apply'}"
    text += f" on {target}" if target else ""
    text += f", started {started.replace('T', ' ')}." if started else "."
    if plan is not None:
        text += " " + plan.text()
    else:
        text += " Reading what it does from the server…"
    return text


def measure_note(found: Quietness, data_bytes: int = 0, *, once: bool = False) -> str:
    """Why "Measure before and after" starts ticked or not, from how quiet the server is.

    ``data_bytes``: the largest data set measuring this change writes first on each side
    (:func:`app.bench.reach.data_set_most`; 0: none), said beforehand; ``once``: one data
    set serves both sides (measured interleaved).
    """
    who = "the measurement first writes" if once else "each side first writes"
    data = (
        f" This change grows the buffer pool: to show the gain, {who} a data "
        f"set of up to {size_text(data_bytes)} for the benchmark's one-row writes to spread "
        "over (less where the disk has less room); writing it is not counted in that time."
        if data_bytes
        else ""
    )
    if found.quiet:
        return (
            f"Ticked: the server is {found.why}. A write benchmark measures the change: "
            "the benchmark time on each side, then rounds added until every verdict is "
            f"decided, up to {BUDGET_FACTOR:.0f} times that in all." + data
        )
    return (
        f"Not ticked: the server is {found.why}. A benchmark would slow that work "
        "down and be blurred by it; tick it to measure anyway."
        if found.why.startswith("busy")
        else f"Not ticked: {found.why}, so it is not known to be quiet. Tick it to "
        "measure before and after anyway."
    ) + data


def measuring(method: Method) -> str:
    """What a measured apply does first, as it starts, and why not interleaved."""
    if method.interleaved:
        return (
            "Taking the snapshot and applying; then measuring the old and the new values in "
            "turn, round by round…"
        )
    return (
        f"Measuring “before” on the unchanged server ({method.why}: before, then after); "
        "nothing is changed yet…"
    )


def cancelling(after_phase: bool, written: bool) -> str:
    """What Cancel does now: stop "after", roll back what was written, or stop before."""
    if after_phase:
        return "Stopping the “after” benchmark: the change stays applied…"
    if written:
        return (
            "Cancelling: the job on the server stops at its next step and rolls back "
            "what it changed (a restart under way finishes first)…"
        )
    return "Cancelling before anything on the server is changed…"


def measured_lines(result: MeasuredApply) -> list[str]:
    """What a measured apply measured, in a line or two (Verify shows the figures)."""
    if result.after is None or result.before is None:
        lines = [result.measurement.text()] if result.measurement is not None else []
        return lines + ([result.no_after] if result.no_after else [])
    verdicts = result.after.verdicts(result.before)
    words = [v.verdict for v in verdicts]
    found = ", ".join(
        f"{words.count(w)} {w.replace('_', ' ')}"
        for w in ("faster", "slower", "no_change", "undecided", "unmeasured")
        if w in words
    )
    cancelled = ""
    if result.after.cancelled:
        cancelled = " (“after” was cancelled: its figures are partial)"
    how = "Measured before and after"
    spent = ""
    if result.measurement is not None:
        m = result.measurement
        how = f"Measured {m.method_text()}"
        spent = f" Time budget {m.budget_seconds:.0f} s, {m.seconds_used:.0f} s used."
    return [
        f"{how}: {count(len(verdicts), 'run')} compared: {found}"
        f"{cancelled}.{spent} The Verify page shows the figures."
    ]


def outcome_lines(result: jobs.JobStatus) -> list[str]:
    """How a job ended: its state, a cancel's outcome, its errors, warnings and last log lines."""
    if result.mode == "restore":
        lines = [restore_words(result)]
    else:
        lines = [f"Job {result.job_id}: {result.applied_words}."]
    said = set(result.not_applied.values())
    lines += [f"Not applied: {c}: {why}" for c, why in sorted(result.not_applied.items())]
    if result.cancelled:
        lines.append(
            "Cancelled: nothing on the server was changed."
            if result.state == "refused"
            else "Cancelled: every change was rolled back to the snapshot."
            if result.state == "rolled-back"
            else "Cancelled, but the rollback did not complete: see the errors."
        )
    if result.state == "awaiting-confirm":
        lines.append("Check the server now; press Keep before the deadline or it rolls back.")
    lines += [f"Error: {e}" for e in result.errors]
    lines += [f"Warning: {w}" for w in result.warnings if w not in said]
    # The server's start-up log explains a failure; after a success it only alarms.
    if failed(result):
        lines += [f"Server log: {ln}" for ln in result.error_log_lines[-10:]]
    return lines


def restore_words(result: jobs.JobStatus) -> str:
    """How a restore ended, in words: "rolled-back" is its success, not a failure."""
    snapshot = f"snapshot {result.snapshot_id}" if result.snapshot_id else "the snapshot"
    if result.state == "rolled-back":
        restarted = " (the server restarted)" if result.restarted else ""
        return f"Restored {snapshot}: the old settings are back in force{restarted}."
    if result.state == "failed-rollback":
        return f"Restoring {snapshot} did not complete (job {result.job_id}): see the errors."
    if result.state == "refused":
        return f"Restoring {snapshot} was refused (job {result.job_id}): nothing was changed."
    return f"Restoring {snapshot} (job {result.job_id}): {result.state}."


def failed(result: jobs.JobStatus) -> bool:
    """Anything but the outcome asked for (or a clean cancel) is an error."""
    wanted = "rolled-back" if result.mode == "restore" else "applied"
    return result.state not in (wanted, "awaiting-confirm") and not (
        result.cancelled and result.state in ("refused", "rolled-back")
    )


def log_failure(log: logging.Logger, result: jobs.JobStatus) -> None:
    """Put a failed job in the session's log: its errors, its failed steps, its server log."""
    log_error(
        log,
        f"job {result.job_id}",
        f"ended {result.state}",
        "; ".join(result.errors) or "no error recorded",
    )
    for step in result.steps:
        if step.status == "fail":
            log.warning("job %s: %s", result.job_id, step.line())
    for line in result.log_lines[-25:]:
        log.warning("job %s server log: %s", result.job_id, line)
