"""The Apply page: consent, then one detached job on the target; its journal, live.

The page only drives :mod:`app.jobs.runner` from tasks on the host's worker: the
snapshot is taken and stored (on the target and on this computer) before the first change,
the job on the target does the rest and rolls back by itself on failure. The page shows
each journal step as it arrives, lets the person keep a change made with a confirmation
deadline, roll back, look at a job again after the connection dropped, and restore any
earlier snapshot.

"Restart the server afterwards" asks for a restart even when every change is live (it
proves the server starts with the new files). While an apply runs, Cancel does the safe
thing: before the job starts nothing is changed; after, the job rolls back to the snapshot.

Beside it: its widgets (``apply_view``), its tasks (``apply_tasks``), its sentences
(``apply_texts``), what the wizard keeps of a job (``apply_state``), the snapshot list.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal

from app.domain.words import count
from app.flows import apply as jobs
from app.flows import snapshots
from app.flows.measure import MeasureOptions, quietness
from app.flows.measured import MeasuredApply, data_set_ahead, method_for
from app.flows.preview import Preview
from app.ui import jobrecords
from app.ui.hostworker import Task, TaskHandle
from app.ui.logview import DETAILS_LINK, error_parts, log_error
from app.ui.pages import apply_tasks as tasks
from app.ui.pages import apply_texts as texts
from app.ui.pages.apply_state import (
    instance_of,
    keep_before,
    keep_bench,
    keep_bench_with_snapshot,
    local_copy,
    note_changes_in_force,
    relogin,
    target_label,
    with_restart,
)
from app.ui.pages.apply_view import CANCEL_AFTER_TEXT, CANCEL_BEFORE_TEXT, CANCEL_TEXT, ApplyView
from app.ui.pages.snapshot_list import ask_before_restore, choose_restore, chosen_id, show_listing
from app.ui.state import WizardState

# Journal steps that change the host: from the first one on, cancelling rolls back.
_CHANGING_STEPS = ("write", "dynamic", "live", "commands", "restart")
_log = logging.getLogger(__name__)


class ApplyPage(ApplyView):
    """Apply with a snapshot, follow the job, confirm, roll back, restore snapshots."""

    #: Every journal step and job status the page sees (the wizard keeps its job records).
    seen = Signal(object)

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.task: TaskHandle | None = None
        self.status: jobs.JobStatus | None = None
        self._measure_decided_for: object = None  # the facts the default was decided from
        self._after_phase = False  # the apply ended; "after" is being measured
        self._written = False
        self._cancelling = False
        self._applying = False
        self._box_forced = False
        self._restart_anyway = False
        # The job followed after a reconnect (show_job): its id, what it was asked to do,
        # and when it started (from this computer's record, else its first journal step).
        self._followed: str | None = None
        self._followed_plan: jobs.JobPlan | None = None
        self._followed_started: str | None = None
        # The last snapshot listing read, and whether to read it again after the job.
        self._listing: tasks.SnapshotListing | None = None
        self._list_after = False
        self._refreshing = False  # that quiet re-read runs: the page stays complete
        # The plan the page last showed, and the plan last applied (not offered again).
        self._shown_plan: object = None
        self._applied_plan: object = None
        self.restart_edit.textChanged.connect(lambda _text: self._show_summary())
        self.restart_box.toggled.connect(self._on_restart_box_toggled)
        self.bench_time.valueChanged.connect(self._on_bench_time_changed)
        self.consent.toggled.connect(self._on_consent_toggled)
        for button, slot in (
            (self.apply_button, self._on_apply_clicked),
            (self.keep_button, self._on_keep_clicked),
            (self.rollback_button, self._on_rollback_clicked),
            (self.refresh_button, self._on_refresh_clicked),
            (self.cancel_button, self._on_cancel_clicked),
            (self.list_button, self._on_list_clicked),
            (self.restore_button, self._on_restore_clicked),
        ):
            button.clicked.connect(slot)
        # Choosing a snapshot is what makes Restore possible.
        self.snapshots.currentItemChanged.connect(lambda *_: self._sync_buttons())
        self._sync_buttons()

    # -- state ------------------------------------------------------------------------------
    def _show_restart_way(self) -> None:
        """Say how the server is restarted; ask for a command only when nothing runs it."""
        way = texts.restart_way(instance_of(self.state))
        if way is not None:
            self.restart_note.setText(way)
            self.restart_edit.clear()
            self.restart_edit.setVisible(False)
        else:
            self.restart_note.setText(texts.ASK_RESTART_COMMAND)
            self.restart_edit.setVisible(True)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        self._show_restart_way()
        self.bench_time.setValue(round(self.state.bench_seconds))
        preview = self.state.preview
        # Without a preview (the wizard was started to restore a snapshot) only the
        # snapshot list makes sense: the apply controls are hidden, the list is read at once.
        for widget in (
            self.confirm_label,
            self.confirm_spin,
            self.restart_box,
            self.measure_box,
            self.measure_note,
            self.consent,
            self.apply_button,
            self.cancel_button,
            self.keep_button,
        ):
            widget.setVisible(preview is not None)
        if preview is None and self._followed is not None:
            self._show_followed()
        elif preview is None:
            self.summary.reserve([])  # no restart box to toggle
            self.summary.setText(
                "Choose a snapshot and press Restore selected: its option files and values "
                "come back, and the server restarts if they need it."
                if self.state.mode == "restore"
                else "No preview yet: go back to Preview, or restore a snapshot below."
            )
            if self.state.connected and not self._busy():
                self._on_list_clicked()
        else:
            self._follow_plan()
            if preview.restart_needed:
                # The changes restart it anyway: the box shows that and cannot be cleared.
                self.restart_box.setChecked(True)
                self._box_forced = True
            elif self._box_forced:
                # A new preview needs no restart: the person decides again.
                self.restart_box.setChecked(False)
                self._box_forced = False
            self._show_summary()
            self._decide_measure()
        self._sync_buttons()

    def _plan_key(self) -> object:
        """What the plan changes: the same plan made again (Back, Next) is the same key."""
        plan, preview = self.state.plan, self.state.preview
        if plan is None:
            return id(preview)
        return tuple((c.key, c.device, c.proposed) for c in plan.changes)

    def _follow_plan(self) -> None:
        """A new plan: the last job's words and the consent given for the old one go."""
        key = self._plan_key()
        if key == self._shown_plan:
            return
        self._shown_plan = key
        self.consent.setChecked(False)
        if not self._busy() and (self.status is None or self.status.final):
            self.status = None
            self._say([])
            self.journal.clear()

    def _decide_measure(self) -> None:
        """Tick "Measure before and after" when the inspection found the server quiet.

        Decided once per inspection: going back and forth keeps the person's choice.
        """
        facts = self.state.facts
        found = quietness(facts.server if facts is not None else None)
        if facts is not self._measure_decided_for:
            self._measure_decided_for = facts
            self.measure_box.setChecked(found.quiet)
            self.watch_box.setChecked(found.why.startswith("busy"))
        data = data_set_ahead(self.state.preview)
        once = self.state.preview is not None and method_for(self.state.preview).interleaved
        self.measure_note.setText(texts.measure_note(found, data, once=once))

    def effective_preview(self) -> Preview | None:
        """The preview of what Apply will do now: with the asked-for restart, if ticked."""
        return with_restart(self.state, self.restart_box.isChecked(), self._restart_command())

    def _show_summary(self) -> None:
        preview = self.effective_preview()
        if preview is None:
            return
        given = bool(self._restart_command())
        self.summary.setText(texts.summary_text(preview, given))
        # The words for the restart box's other state too: ticking it must not move it.
        other = with_restart(self.state, not preview.restart_requested, self._restart_command())
        shown = self.state.preview
        keep = other is not None and shown is not None and not shown.restart_needed
        self.summary.reserve([texts.summary_text(other, given)] if keep and other else [])

    def _show_followed(self) -> None:
        """The summary of the job followed after a reconnect: where, since when, what."""
        job_id = self._followed
        assert job_id is not None
        # Keep and Cancel act on the job waiting for its confirmation: they must be seen.
        self.keep_button.setVisible(True)
        self.cancel_button.setVisible(True)
        record = jobrecords.load(jobrecords.records_dir(), job_id)
        plan = self._followed_plan
        mode = plan.mode if plan is not None else record.mode if record is not None else "apply"
        target = record.target if record is not None else target_label(self.state)
        started = record.started if record is not None else self._followed_started
        self.summary.reserve([])  # no restart box to toggle
        self.summary.setText(texts.followed_text(job_id, mode, target, started, plan))

    def _busy(self) -> bool:
        return self.task is not None and self.task.is_running()

    def _sync_buttons(self) -> None:
        preview = self.state.preview
        can_apply = (
            preview is not None
            and not preview.errors
            and self.consent.isChecked()
            and self._plan_key() != self._applied_plan
            and not self._busy()
            and (self.status is None or self.status.final)
        )
        self.apply_button.setEnabled(can_apply)
        awaiting = self.status is not None and self.status.state == "awaiting-confirm"
        self.cancel_button.setEnabled(
            (self._applying and self._busy() and not self._cancelling)
            or (awaiting and not self._busy())
        )
        self.restart_box.setEnabled(
            preview is not None and not preview.restart_needed and not self._busy()
        )
        self.measure_box.setEnabled(preview is not None and not self._busy())
        self.watch_box.setEnabled(preview is not None and not self._busy())
        waiting = self.status is not None and self.status.state == "awaiting-confirm"
        self.keep_button.setEnabled(waiting and not self._busy())
        self.rollback_button.setEnabled(
            self.status is not None
            and self.status.snapshot_id is not None
            and not self._busy()
            and self.status.state in ("applied", "interrupted", "failed-rollback")
        )
        self.refresh_button.setEnabled(self.status is not None and not self._busy())
        self.restore_button.setEnabled(
            self.snapshots.currentItem() is not None and not self._busy()
        )
        self.list_button.setEnabled(not self._busy())

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        busy = self._busy() and not self._refreshing
        return not busy and (self.status is None or self.status.final)

    def _say(self, lines: list[str], error: bool = False) -> None:
        """Show the state; an error also gets a Details… link to this session's log."""
        if error:
            self.state_label.setTextFormat(Qt.TextFormat.RichText)
            body = "<br>".join(html.escape(line, quote=False) for line in lines)
            self.state_label.setText(body + DETAILS_LINK)
        else:
            self.state_label.setTextFormat(Qt.TextFormat.PlainText)
            self.state_label.setText("\n".join(lines))

    def _run(self, name: str, run: Any, inputs: Any, started: str | None) -> None:
        """Run a task on the host's worker; JobSteps it posts go to the journal.

        ``started`` is shown while it runs (None: the state shown stays, a quiet refresh).
        """
        if started is not None:
            self._say([started])
        self.task = self.state.worker().submit(Task(name, run, inputs), self)
        self.task.progress.connect(self._on_task_progress)
        self.task.finished.connect(self._on_task_finished)
        self.task.failed.connect(self._on_task_failed)
        self.task.ended.connect(self._on_task_ended)
        self._sync_buttons()
        self.completeChanged.emit()

    def _restart_command(self) -> str | None:
        return self.restart_edit.text().strip() or None

    # -- slots ------------------------------------------------------------------------------
    def _on_consent_toggled(self, _checked: bool) -> None:
        self._sync_buttons()

    def _on_bench_time_changed(self, value: int) -> None:
        self.state.bench_seconds = float(value)

    def _on_restart_box_toggled(self, _checked: bool) -> None:
        self._show_summary()

    def _on_apply_clicked(self) -> None:
        self.journal.clear()
        self._written = False
        self._cancelling = False
        self._applying = True
        preview = self.state.preview
        self._restart_anyway = (
            self.restart_box.isChecked() and preview is not None and not preview.restart_needed
        )
        self._after_phase = False
        self.cancel_button.setText(CANCEL_BEFORE_TEXT)
        facts, plan, confirm = self.state.facts, self.state.plan, self.confirm_spin.value()
        assert preview is not None and facts is not None and facts.server is not None
        inputs = tasks.ApplyInputs(
            preview,
            facts.server,
            plan,
            local_copy(self.state),
            self._restart_command(),
            float(confirm) if confirm else None,
            self._restart_anyway,
            relogin(self.state),
        )
        self.bench_bar.setRange(0, 1000)
        if not self.measure_box.isChecked() or self.state.target is None:
            name, run, task_inputs, started = tasks.plain_apply(inputs, self.state, self.watch_box)
            self.bench_bar.setVisible(name == "watched apply")
            self._run(name, run, task_inputs, started)
            assert self.task is not None
            self.task.say.connect(self._on_task_say)
            return
        measured = tasks.MeasuredInputs(
            inputs,
            self.state.target,
            self.state.secrets,
            MeasureOptions(seconds=self.state.bench_seconds),
            self.state.changes_in_force or "",
        )
        self.bench_bar.setValue(0)
        self.bench_bar.setVisible(True)
        started = texts.measuring(method_for(preview, inputs.confirm_within))
        self._run("measured apply", tasks.run_measured_apply, measured, started)
        assert self.task is not None
        self.task.say.connect(self._on_task_say)

    def _on_task_say(self, text: str) -> None:
        if text == tasks.APPLYING:  # how long it takes is not known: the bar says it works
            self.bench_bar.setRange(0, 0)
        self._say([text + "…"])

    def _on_cancel_clicked(self) -> None:
        if (
            self.status is not None
            and self.status.state == "awaiting-confirm"
            and not self._applying
        ):
            # The job waits on the target: cancelling it is a request there. Its button is
            # only enabled once the last worker's thread ended; this guards a click queued
            # before that.
            if not self._busy():
                self._cancel_waiting(self.status.job_id)
            return
        if self.task is None or not self._busy() or not self._applying:
            return
        self._cancelling = True
        self.task.cancel()
        self._say([texts.cancelling(self._after_phase, self._written)])
        self._sync_buttons()

    def _cancel_waiting(self, job_id: str) -> None:
        """Cancel a change that waits for its confirmation: the job rolls back at once."""
        self._answer_waiting_job(
            jobs.request_cancel, job_id, "Cancelling: rolling the change back on the server…"
        )

    def _on_keep_clicked(self) -> None:
        assert self.status is not None
        self._answer_waiting_job(jobs.confirm, self.status.job_id, "Keeping the change…")

    def _answer_waiting_job(
        self, answer: Callable[[Any, str], None], job_id: str, doing: str
    ) -> None:
        """Give a job waiting for its confirmation its answer, then follow it to its end."""
        self.journal.clear()
        self._run(
            "answer", tasks.answer_job, tasks.JobInputs(job_id, relogin(self.state), answer), doing
        )

    def _on_rollback_clicked(self) -> None:
        assert self.status is not None and self.status.snapshot_id is not None
        # The job this page followed: its snapshot belongs to the server it changed.
        self._choose_and_restore(self.status.snapshot_id, own=True)

    def _on_restore_clicked(self) -> None:
        snapshot_id = chosen_id(self.snapshots)
        if snapshot_id is not None:
            self._choose_and_restore(snapshot_id, always_ask=True)

    def _choose_and_restore(
        self, snapshot_id: str, own: bool = False, always_ask: bool = False
    ) -> None:
        """Restore, asking first when it is not the plain undo of this server's last change."""
        answer = choose_restore(
            self._listing, snapshot_id, self.ask_restore, own=own, always_ask=always_ask
        )
        if answer.refused:
            self._say([answer.refused])
            return
        self._restore(snapshot_id, answer.undo)

    def ask_restore(self, choice: snapshots.RollbackChoice | None, snapshot_id: str = "") -> bool:
        """Ask before a restore: it may restart the server (see ``restore_question``)."""
        instance = instance_of(self.state)
        argv = instance.restart_argv() if instance is not None else None
        return ask_before_restore(self, choice, snapshot_id, argv)

    def _restore(self, snapshot_id: str, undo: tuple[str, ...] | None = None) -> None:
        inputs = tasks.RestoreInputs(
            snapshot_id,
            undo,
            local_copy(self.state),
            self._restart_command(),
            relogin(self.state),
        )
        self.journal.clear()
        self._run("rollback", tasks.run_restore, inputs, f"Restoring snapshot {snapshot_id}…")

    def _on_refresh_clicked(self) -> None:
        assert self.status is not None
        job_id = self.status.job_id
        self.journal.clear()
        self._run(
            "job status",
            tasks.read_job,
            tasks.JobInputs(job_id),
            f"Reading job {job_id} on the server…",
        )

    def show_job(self, job_id: str) -> None:
        """Follow a job found on the target (a reconnect): its journal, then its state."""
        if self._busy():  # the snapshot list being read: show the job right after it
            assert self.task is not None
            self.task.ended.connect(
                lambda: self.show_job(job_id), Qt.ConnectionType.SingleShotConnection
            )
            return
        self._followed = job_id
        self._followed_plan = None
        self._followed_started = None
        if self.state.preview is None:
            self._show_followed()
        self.journal.clear()
        started = f"Reconnected: following job {job_id} on the server…"
        self._run("follow", tasks.follow_job, tasks.JobInputs(job_id), started)

    def _on_list_clicked(self) -> None:
        self._read_snapshots("Reading the snapshots on the server…")

    def _read_snapshots(self, started: str | None) -> None:
        """Read the snapshots per instance with their states (``started``: see ``_run``)."""
        conn = self.state.connection
        inputs = tasks.ListInputs(conn.instance if conn is not None else None)
        self._run("snapshots", tasks.list_snapshots, inputs, started)

    def _on_task_progress(self, item: object) -> None:
        if isinstance(item, float):  # a benchmark's progress, within its side
            self.bench_bar.setRange(0, 1000)
            self.bench_bar.setValue(round(item * 1000))
            return
        if keep_before(self.state, item):  # "before" measured or watched: a new pair begins
            return
        if isinstance(item, jobs.JobStatus) and self._applying:
            # The apply ended inside a measured apply: from here Cancel stops "after" only.
            self._after_phase = item.state == "applied"
            note_changes_in_force(self.state, item)
            if self._after_phase:
                self.cancel_button.setText(CANCEL_AFTER_TEXT)
                self.bench_bar.setRange(0, 1000)
                self.bench_bar.setValue(0)
            return
        if isinstance(item, jobs.JobPlan) and item.job_id == self._followed:
            self._followed_plan = item
            if self.state.preview is None:
                self._show_followed()
            return
        if (
            isinstance(item, jobs.JobStep)
            and self._followed is not None
            and item.step == "start"
            and self._followed_started is None
            and self._followed in item.detail
        ):
            self._followed_started = item.time
            if self.state.preview is None:
                self._show_followed()
        if isinstance(item, jobs.JobStep):
            self.seen.emit(item)
            self.journal.appendPlainText(item.line())
            if self._applying and not self._written and item.step in _CHANGING_STEPS:
                # From the first write on, Cancel means rolling back to the snapshot.
                self._written = True
                self.cancel_button.setText(CANCEL_TEXT)

    def _apply_work_returned(self) -> None:
        """The apply's worker has returned; its thread ends a moment later.

        From here Cancel no longer reaches that worker (its cancel flag is read by no one):
        it must mean the job on the target, which it can only once the thread has ended.
        Until then the button is disabled, so no click in between is lost.
        """
        self._applying = False
        self._cancelling = False
        self._sync_buttons()

    def _on_task_finished(self, result: object) -> None:
        if isinstance(result, tasks.SnapshotListing):
            quiet = self._list_after
            self._list_after = False
            self._listing = result
            show_listing(self.snapshots, result)
            if not quiet:
                self._say([f"{count(len(result.records), 'snapshot')} on the server."])
            return
        measured: list[str] = []
        if isinstance(result, MeasuredApply):
            self.bench_bar.setVisible(False)
            self.state.bench_before, self.state.bench_after = result.before, result.after
            if result.status is None:
                self._apply_work_returned()
                self._say([result.not_applied])
                return
            measured = texts.measured_lines(result)
            result = result.status
        assert isinstance(result, jobs.JobStatus)
        self.status = result
        if result.mode != "restore" and result.state in ("applied", "awaiting-confirm"):
            # Done for this plan: applying it again would change nothing; consent was used.
            self._applied_plan = self._plan_key()
            self.consent.setChecked(False)
        elif result.state == "rolled-back":
            self._applied_plan = None
        # The list shows the snapshot just taken (or restored) with its new state.
        self._list_after = result.final and result.snapshot_id is not None
        self._apply_work_returned()
        self.seen.emit(result)
        keep_bench_with_snapshot(self.state, result)
        note_changes_in_force(self.state, result)
        # Anything but the outcome asked for (or a clean cancel) is an error: it goes to the
        # log with the failed steps, and the page links to it.
        went_wrong = texts.failed(result)
        if went_wrong:
            texts.log_failure(_log, result)
        if self.state.bench_after is not None:
            keep_bench(self.state, "after", self.state.bench_after)
        self._say(texts.outcome_lines(result) + measured, error=went_wrong)

    def _on_task_failed(self, exc: object) -> None:
        self.bench_bar.setVisible(False)
        self._apply_work_returned()
        if self._list_after:  # the quiet refresh failed: the job's outcome stays shown
            self._list_after = False
            _log.warning("apply page: the snapshot list was not read again: %s", exc)
            return
        if isinstance(exc, jobs.ApplyCancelled):
            self._say([f"{exc.problem} {exc.window_fix}".strip()])
            return
        if isinstance(exc, jobs.JobInterrupted):
            self.status = jobs.JobStatus(job_id=exc.job_id, state="interrupted")
        problem, fix = error_parts(exc)
        log_error(_log, "apply page", problem, fix)
        self._say([f"{problem} {fix}".strip()], error=True)

    def _on_task_ended(self) -> None:
        self._applying = False
        self._cancelling = False
        self._after_phase = False
        self.cancel_button.setText(CANCEL_TEXT)
        self._sync_buttons()
        self.completeChanged.emit()
        self._refreshing = False
        conn = self.state.connection
        if self._list_after and conn is not None and conn.transport is not None:
            self._refreshing = True
            self._read_snapshots(None)
