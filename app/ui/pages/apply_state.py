"""What the wizard keeps of a job: its snapshot, the benchmarks beside it, the changes in force.

Plain bookkeeping on :class:`app.ui.state.WizardState` from a job's status, for the Apply
page and the Verify page (which store their benchmarks beside the apply's snapshot).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from app.domain.bench import BenchReport
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.watch import Watch
from app.flows import apply as jobs
from app.flows import snapshots
from app.flows.apply import not_taken
from app.flows.freshness import ServerChange
from app.flows.preview import Preview, with_requested_restart
from app.places import local_snapshot_dir
from app.ui.pages.apply_tasks import Relogin
from app.ui.state import WizardState


def instance_of(state: WizardState) -> ServerInstance | None:
    """The connected server instance, as inspected (else as the check found it)."""
    facts = state.facts
    if facts is not None and facts.server is not None:
        return facts.server.instance
    connection = state.connection
    return connection.instance if connection is not None else None


def target_label(state: WizardState) -> str | None:
    """The connected host's name (else the target's)."""
    conn = state.connection
    if conn is not None and conn.transport is not None:
        return str(conn.transport.label)
    return state.target.label if state.target is not None else None


def relogin(state: WizardState) -> Relogin:
    """How a job's task logs in to the database again after a restart."""
    target = state.target
    return Relogin(
        target.options.mysql_user if target is not None else None,
        state.secrets.mysql_password,
        use_sudo=target is None or target.kind != "practice",
    )


def local_copy(state: WizardState) -> Path:
    """Where this computer keeps its copy of the host's snapshots."""
    return local_snapshot_dir(target_label(state) or "host")


def keep_bench(state: WizardState, label: str, report: object) -> None:
    """Store a benchmark result beside the last apply's snapshot, when there is one."""
    from app.domain.facts import to_json

    if state.snapshot_id is None or state.snapshot_dir is None or report is None:
        return
    try:
        snapshots.store_bench_locally(state.snapshot_dir, state.snapshot_id, label, to_json(report))
    except (OSError, InnoTuneError):
        pass  # the result stays on the Verify page; losing the copy must not stop the wizard


def store_watch(state: WizardState, label: str, found: Watch | None) -> None:
    """Store a watch of the server's own workload beside the last apply's snapshot, if any."""
    if state.snapshot_id is None or state.snapshot_dir is None or found is None:
        return
    try:
        snapshots.store_watch_locally(
            state.snapshot_dir, state.snapshot_id, label, found.to_json() + "\n"
        )
    except (OSError, InnoTuneError):
        pass  # the watch stays on the Verify page; losing the copy must not stop the wizard


def keep_bench_with_snapshot(state: WizardState, result: jobs.JobStatus) -> None:
    """A new snapshot taken: remember it, and store the "before" benchmark and watch beside it."""
    if result.snapshot_id is None or state.target is None:
        return
    if state.snapshot_id != result.snapshot_id:
        state.snapshot_id = result.snapshot_id
        state.snapshot_dir = local_snapshot_dir(state.target.label)
        keep_bench(state, "before", state.bench_before)
        store_watch(state, "before", state.watch_before)


def note_server_change(state: WizardState, result: jobs.JobStatus) -> None:
    """A job changed the server (anything but refused): facts read before it are out of date.

    A job rolled back after a failure counts too: it may have restarted the server.
    """
    if result.state == "refused" or not (result.final or result.state == "awaiting-confirm"):
        return
    if any(c.job_id == result.job_id and c.state == result.state for c in state.server_changes):
        return  # the same job seen again (its status read once more)
    what = "the rollback" if result.mode == "restore" else "the apply"
    # To the second, as facts are dated: facts read in the same second came after it (the
    # host's worker runs one task at a time, and the job's end reached the window first).
    at = datetime.now(UTC).replace(microsecond=0)
    conn = state.connection
    target = str(conn.transport.label) if conn is not None and conn.transport is not None else ""
    change = ServerChange(what, at, result.restarted, result.job_id, result.state, target)
    state.server_changes.append(change)


def note_changes_in_force(state: WizardState, result: jobs.JobStatus) -> None:
    """Whether the server now runs with this wizard's changes (Verify's "before" asks)."""
    note_server_change(state, result)
    if result.state == "rolled-back":
        state.changes_in_force = None
    elif result.mode != "restore" and result.state in ("applied", "awaiting-confirm"):
        state.changes_in_force = result.snapshot_id
        if state.preview is not None:
            state.not_taken = not_taken(state.preview, result)


def keep_before(state: WizardState, item: object) -> bool:
    """Keep a "before" a measured or watched apply posted (a new pair begins); False: not one."""
    if isinstance(item, BenchReport):
        state.bench_before, state.bench_after = item, None
        return True
    if isinstance(item, Watch):  # the server's own workload before: Verify compares
        state.watch_before, state.watch_after = item, None
        return True
    return False


def with_restart(state: WizardState, ticked: bool, command: str | None) -> Preview | None:
    """The preview Apply runs: with a restart asked for when ``ticked`` and none is needed."""
    preview, facts, plan = state.preview, state.facts, state.plan
    if preview is None or not ticked or preview.restart_needed or facts is None or plan is None:
        return preview
    return with_requested_restart(preview, facts, plan, jobs.restart_argv_from(command))
