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
"""

from __future__ import annotations

import html
import logging
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWizardPage,
)

from app.domain.bench import BenchReport
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.words import count
from app.flows import apply as jobs
from app.flows import snapshots
from app.flows.apply import not_taken
from app.flows.measure import MeasuredApply, MeasureOptions, quietness
from app.flows.preview import Preview, with_requested_restart
from app.places import local_snapshot_dir
from app.ui import jobrecords
from app.ui.hostworker import Task, TaskHandle
from app.ui.logview import DETAILS_LINK, error_parts, link_to_log, log_error
from app.ui.pages.apply_tasks import (
    ApplyInputs,
    JobInputs,
    ListInputs,
    MeasuredInputs,
    Relogin,
    RestoreInputs,
    SnapshotListing,
    answer_job,
    follow_job,
    list_snapshots,
    read_job,
    run_apply,
    run_measured_apply,
    run_restore,
)
from app.ui.state import WizardState
from app.ui.widgets.wraplabel import WrapLabel

_CANCEL_TEXT = "&Cancel and roll back"
_CANCEL_BEFORE_TEXT = "&Cancel (nothing changed yet)"
_CANCEL_AFTER_TEXT = "&Cancel “after” (the change stays)"
# Journal steps that change the host: from the first one on, cancelling rolls back.
_CHANGING_STEPS = ("write", "dynamic", "live", "commands", "restart")
_log = logging.getLogger(__name__)


def keep_bench(state: WizardState, label: str, report: object) -> None:
    """Store a benchmark result beside the last apply's snapshot, when there is one."""
    from app.domain.facts import to_json

    if state.snapshot_id is None or state.snapshot_dir is None or report is None:
        return
    try:
        snapshots.store_bench_locally(state.snapshot_dir, state.snapshot_id, label, to_json(report))
    except (OSError, InnoTuneError):
        pass  # the result stays on the Verify page; losing the copy must not stop the wizard


class ApplyPage(QWizardPage):
    """Apply with a snapshot, follow the job, confirm, roll back, restore snapshots."""

    #: Every journal step and job status the page sees (the wizard keeps its job records).
    seen = Signal(object)

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle("Apply")
        self.setSubTitle(
            "A snapshot first, then the changes run on the server's host as one job that "
            "finishes or rolls back by itself, even if the connection drops."
        )
        self.setObjectName("page_apply")
        self.task: TaskHandle | None = None
        self.status: jobs.JobStatus | None = None
        layout = QVBoxLayout(self)
        self.summary = WrapLabel("")
        self.summary.setObjectName("apply_summary")
        layout.addWidget(self.summary)
        row = QHBoxLayout()
        # How the server is restarted: said when a service manager runs it; asked for only
        # when none was found (a server started by hand).
        self.restart_note = QLabel("")
        self.restart_note.setObjectName("apply_restart_note")
        self.restart_note.setWordWrap(True)
        row.addWidget(self.restart_note, 1)
        self.restart_edit = QLineEdit()
        self.restart_edit.setObjectName("apply_restart_command")
        self.restart_edit.setPlaceholderText("e.g. mysqladmin shutdown; mysqld_safe &")
        self.restart_edit.setAccessibleName("restart command")
        self.restart_edit.textChanged.connect(lambda _text: self._show_summary())
        row.addWidget(self.restart_edit, 1)
        self.confirm_label = QLabel("Roll back &unless kept within")
        row.addWidget(self.confirm_label)
        self.confirm_spin = QSpinBox()
        self.confirm_spin.setObjectName("apply_confirm_within")
        self.confirm_spin.setRange(0, 3600)
        self.confirm_spin.setSuffix(" s")
        self.confirm_spin.setSpecialValueText("off")
        self.confirm_spin.setAccessibleName("roll back unless kept within seconds")
        self.confirm_label.setBuddy(self.confirm_spin)
        row.addWidget(self.confirm_spin)
        layout.addLayout(row)
        self.restart_box = QCheckBox(
            "Restart the ser&ver afterwards to prove it starts with the new settings"
        )
        self.restart_box.setObjectName("apply_restart_anyway")
        self.restart_box.setAccessibleName(
            "restart the server afterwards to prove it starts with the new settings"
        )
        self.restart_box.setToolTip(
            "Every change here takes effect live. Ticked, the server is also restarted: the "
            "values then come from the new option files, proving they survive a restart. "
            "Rolling this change back restarts the server too."
        )
        self.restart_box.toggled.connect(self._on_restart_box_toggled)
        layout.addWidget(self.restart_box)
        # Before comes before: measured on the unchanged server as part of applying, and
        # "after" once the change is in force. Ticked by default only on a quiet server.
        self.measure_box = QCheckBox("&Measure before and after")
        self.measure_box.setObjectName("apply_measure")
        self.measure_box.setAccessibleName("measure before and after")
        self.measure_box.setToolTip(
            "A short write benchmark in a scratch schema on the unchanged server, then the "
            "apply, then the same benchmark with the change in force: Verify and Done show "
            "both, and whether each difference is beyond the noise."
        )
        layout.addWidget(self.measure_box)
        self.measure_note = QLabel("")
        self.measure_note.setObjectName("apply_measure_note")
        self.measure_note.setWordWrap(True)
        layout.addWidget(self.measure_note)
        self._measure_decided_for: object = None  # the facts the default was decided from
        self._after_phase = False  # the apply ended; "after" is being measured
        self.consent = QCheckBox("I have read the preview; apply these changes to the &server")
        self.consent.setObjectName("apply_consent")
        self.consent.toggled.connect(self._on_consent_toggled)
        layout.addWidget(self.consent)
        buttons = QHBoxLayout()
        self.apply_button = self._button("A&pply", "apply_start", self._on_apply_clicked)
        self.keep_button = self._button("&Keep the change", "apply_keep", self._on_keep_clicked)
        self.rollback_button = self._button(
            "&Roll back", "apply_rollback", self._on_rollback_clicked
        )
        self.refresh_button = self._button(
            "&Where is it?", "apply_refresh", self._on_refresh_clicked
        )
        self.cancel_button = self._button(_CANCEL_TEXT, "apply_cancel", self._on_cancel_clicked)
        self.cancel_button.setToolTip(
            "Stop the apply safely: before anything is written nothing changes; after, the "
            "job on the server rolls back to the snapshot (a restart under way finishes first)."
        )
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
        self._listing: SnapshotListing | None = None
        self._list_after = False
        self._refreshing = False  # that quiet re-read runs: the page stays complete
        for button in (
            self.apply_button,
            self.cancel_button,
            self.keep_button,
            self.rollback_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        layout.addLayout(buttons)
        self.bench_bar = QProgressBar()
        self.bench_bar.setObjectName("apply_bench_progress")
        self.bench_bar.setRange(0, 1000)
        self.bench_bar.setAccessibleName("benchmark progress")
        self.bench_bar.setVisible(False)
        layout.addWidget(self.bench_bar)
        self.state_label = QLabel("")
        self.state_label.setWordWrap(True)
        self.state_label.setObjectName("apply_state")
        link_to_log(self.state_label)  # an error shown here links to the session's log
        self.state_label.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.state_label)
        self.journal = QPlainTextEdit()
        self.journal.setReadOnly(True)
        self.journal.setObjectName("apply_journal")
        self.journal.setAccessibleName("apply journal")
        layout.addWidget(self.journal, 2)
        snapshots_label = QLabel("Snaps&hots on the server:")
        layout.addWidget(snapshots_label)
        self.snapshots = QListWidget()
        self.snapshots.setObjectName("apply_snapshots")
        self.snapshots.setAccessibleName("snapshots on the server, per server instance")
        snapshots_label.setBuddy(self.snapshots)
        # Choosing a snapshot is what makes Restore possible.
        self.snapshots.currentItemChanged.connect(lambda *_: self._sync_buttons())
        layout.addWidget(self.snapshots, 1)
        snap_row = QHBoxLayout()
        snap_row.addStretch(1)
        self.list_button = self._button("&List snapshots", "apply_list", self._on_list_clicked)
        self.restore_button = self._button(
            "Res&tore selected", "apply_restore", self._on_restore_clicked
        )
        snap_row.addWidget(self.list_button)
        snap_row.addWidget(self.restore_button)
        layout.addLayout(snap_row)
        self._sync_buttons()

    def _button(self, text: str, name: str, slot: Any) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(slot)
        return button

    # -- state ------------------------------------------------------------------------------
    def _instance(self) -> ServerInstance | None:
        """The connected server instance, as inspected (else as the check found it)."""
        facts = self.state.facts
        if facts is not None and facts.server is not None:
            return facts.server.instance
        connection = self.state.connection
        return connection.instance if connection is not None else None

    def _show_restart_way(self) -> None:
        """Say how the server is restarted; ask for a command only when nothing runs it."""
        instance = self._instance()
        argv = instance.restart_argv() if instance is not None else None
        if argv is not None and instance is not None:
            manager = "systemd" if instance.started_by == "systemd" else "its init script"
            if instance.container is not None:
                manager = f"the container engine ({instance.container.engine})"
            self.restart_note.setText(
                f"When a restart is needed, {manager} restarts the server: {shlex.join(argv)}"
            )
            self.restart_edit.clear()
            self.restart_edit.setVisible(False)
        else:
            self.restart_note.setText(
                "No service manager runs this server: if a restart is needed, type the "
                "command that restarts it:"
            )
            self.restart_edit.setVisible(True)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        self._show_restart_way()
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

    def _decide_measure(self) -> None:
        """Tick "Measure before and after" when the inspection found the server quiet.

        Decided once per inspection: going back and forth keeps the person's choice.
        """
        facts = self.state.facts
        if facts is self._measure_decided_for:
            return
        self._measure_decided_for = facts
        found = quietness(facts.server if facts is not None else None)
        self.measure_box.setChecked(found.quiet)
        seconds = MeasureOptions().seconds
        if found.quiet:
            self.measure_note.setText(
                f"Ticked: the server is {found.why}. A {seconds:.0f}-second write benchmark "
                "runs before the change and again after it."
            )
        else:
            self.measure_note.setText(
                f"Not ticked: the server is {found.why}. A benchmark would slow that work "
                "down and be blurred by it; tick it to measure anyway."
                if found.why.startswith("busy")
                else f"Not ticked: {found.why}, so it is not known to be quiet. Tick it to "
                "measure before and after anyway."
            )

    def effective_preview(self) -> Preview | None:
        """The preview of what Apply will do now: with the asked-for restart, if ticked."""
        preview, facts, plan = self.state.preview, self.state.facts, self.state.plan
        if preview is None or not self.restart_box.isChecked() or preview.restart_needed:
            return preview
        if facts is None or plan is None:
            return preview
        argv = jobs.restart_argv_from(self.restart_edit.text().strip() or None)
        return with_requested_restart(preview, facts, plan, argv)

    def _show_summary(self) -> None:
        preview = self.effective_preview()
        if preview is None:
            return
        self.summary.setText(self._summary_text(preview))
        # The words for the restart box's other state too: ticking it must not move it.
        shown, facts, plan = self.state.preview, self.state.facts, self.state.plan
        other = None
        if shown is not None and not shown.restart_needed and facts and plan:
            if preview.restart_requested:
                other = shown
            else:
                argv = jobs.restart_argv_from(self.restart_edit.text().strip() or None)
                other = with_requested_restart(shown, facts, plan, argv)
        self.summary.reserve([self._summary_text(other)] if other is not None else [])

    def _summary_text(self, preview: Preview) -> str:
        """What Apply will change and whether the server restarts, for ``preview``."""
        files = len(preview.option_files) + len(preview.persistence_files)
        text = f"{count(files, 'file')}, {count(len(preview.values), 'value')} to change. "
        if preview.will_restart:
            text += "The server will restart."
            if preview.restart_requested:
                text += " (asked for: every change is live, the restart proves the new files)"
            if preview.downtime is not None:
                text += f" Estimated downtime: {preview.downtime.text()}."
            if preview.restart is None and not self.restart_edit.text().strip():
                text += (
                    " InnoTune does not know how this server is restarted: give the "
                    "restart command above."
                )
        else:
            text += "No restart needed."
        if preview.errors:
            text += " An applier refused; nothing can be applied: " + "; ".join(preview.errors)
        return text

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
        target = record.target if record is not None else self._target_label()
        started = record.started if record is not None else self._followed_started
        self.summary.reserve([])  # no restart box to toggle
        text = f"Reconnected to job {job_id}: {'a rollback' if mode == 'restore' else 'an apply'}"
        text += f" on {target}" if target else ""
        text += f", started {started.replace('T', ' ')}." if started else "."
        if plan is not None:
            text += " " + plan.text()
        else:
            text += " Reading what it does from the server…"
        self.summary.setText(text)

    def _target_label(self) -> str | None:
        conn = self.state.connection
        if conn is not None and conn.transport is not None:
            return str(conn.transport.label)
        return self.state.target.label if self.state.target is not None else None

    def _busy(self) -> bool:
        return self.task is not None and self.task.is_running()

    def _sync_buttons(self) -> None:
        preview = self.state.preview
        can_apply = (
            preview is not None
            and not preview.errors
            and self.consent.isChecked()
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

    def _relogin(self) -> Relogin:
        target = self.state.target
        return Relogin(
            target.options.mysql_user if target is not None else None,
            self.state.secrets.mysql_password,
            use_sudo=target is None or target.kind != "practice",
        )

    def _local_copy(self) -> Path:
        """Where this computer keeps its copy of the host's snapshots."""
        return local_snapshot_dir(self._target_label() or "host")

    def _restart_command(self) -> str | None:
        return self.restart_edit.text().strip() or None

    # -- slots ------------------------------------------------------------------------------
    def _on_consent_toggled(self, _checked: bool) -> None:
        self._sync_buttons()

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
        self.cancel_button.setText(_CANCEL_BEFORE_TEXT)
        facts, plan, confirm = self.state.facts, self.state.plan, self.confirm_spin.value()
        assert preview is not None and facts is not None and facts.server is not None
        inputs = ApplyInputs(
            preview,
            facts.server,
            plan,
            self._local_copy(),
            self._restart_command(),
            float(confirm) if confirm else None,
            self._restart_anyway,
            self._relogin(),
        )
        if not self.measure_box.isChecked() or self.state.target is None:
            self.bench_bar.setVisible(False)
            started = "Taking the snapshot, then applying on the server…"
            self._run("apply", run_apply, inputs, started)
            return
        measured = MeasuredInputs(
            inputs,
            self.state.target,
            self.state.secrets,
            MeasureOptions(),
            self.state.changes_in_force or "",
        )
        self.bench_bar.setValue(0)
        self.bench_bar.setVisible(True)
        started = "Measuring “before” on the unchanged server; nothing is changed yet…"
        self._run("measured apply", run_measured_apply, measured, started)
        assert self.task is not None
        self.task.say.connect(self._on_task_say)

    def _on_task_say(self, text: str) -> None:
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
        self._say(
            [
                "Stopping the “after” benchmark: the change stays applied…"
                if self._after_phase
                else "Cancelling: the job on the server stops at its next step and rolls back "
                "what it changed (a restart under way finishes first)…"
                if self._written
                else "Cancelling before anything on the server is changed…"
            ]
        )
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
        self._run("answer", answer_job, JobInputs(job_id, self._relogin(), answer), doing)

    def _on_rollback_clicked(self) -> None:
        assert self.status is not None and self.status.snapshot_id is not None
        # The job this page followed: its snapshot belongs to the server it changed.
        self._choose_and_restore(self.status.snapshot_id, own=True)

    def _on_restore_clicked(self) -> None:
        item = self.snapshots.currentItem()
        if item is not None and item.data(256) is not None:
            self._choose_and_restore(str(item.data(256)), always_ask=True)

    def _choose_and_restore(
        self, snapshot_id: str, own: bool = False, always_ask: bool = False
    ) -> None:
        """Restore, asking first when it is not the plain undo of this server's last change.

        ``always_ask``: a snapshot chosen in the list is restored only after a Yes, since the
        restore may restart the server.
        """
        undo: list[str] | None = None
        if always_ask and (
            self._listing is None or not any(r.id == snapshot_id for r in self._listing.records)
        ):
            if not self.ask_restore(None, snapshot_id):
                self._say([f"Snapshot {snapshot_id} was not restored; nothing was changed."])
                return
        if self._listing is not None and any(r.id == snapshot_id for r in self._listing.records):
            try:
                choice = snapshots.choose_rollback(
                    self._listing.records,
                    None if own else self._listing.current_key,
                    snapshot_id,
                )
            except snapshots.RollbackRefused as exc:
                self._say([f"{exc.problem} {exc.window_fix}".strip()])
                return
            asking = always_ask or choice.caveats or choice.undo
            if asking and not self.ask_restore(choice, snapshot_id):
                self._say([f"Snapshot {snapshot_id} was not restored; nothing was changed."])
                return
            undo = [r.id for r in choice.undo]
        self._restore(snapshot_id, undo)

    def ask_restore(self, choice: snapshots.RollbackChoice | None, snapshot_id: str = "") -> bool:
        """Ask before a restore: it may restart the server.

        Another instance's snapshot, one already rolled back or superseded, or an older one
        whose restore also undoes newer changes: the question says which and why.
        """
        instance = self._instance()
        argv = instance.restart_argv() if instance is not None else None
        restart = "The server restarts if the restored settings need it" + (
            f" ({shlex.join(argv)})." if argv else "."
        )
        about = (
            [*choice.caveats, choice.text()]
            if choice is not None
            else [f"Snapshot {snapshot_id}: its option files and values come back."]
        )
        text = "\n\n".join([*about, restart, "Restore it?"])
        answer = QMessageBox.question(
            self,
            "Restore this snapshot?",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _restore(self, snapshot_id: str, undo: list[str] | None = None) -> None:
        inputs = RestoreInputs(
            snapshot_id,
            tuple(undo) if undo is not None else None,
            self._local_copy(),
            self._restart_command(),
            self._relogin(),
        )
        self.journal.clear()
        self._run("rollback", run_restore, inputs, f"Restoring snapshot {snapshot_id}…")

    def _on_refresh_clicked(self) -> None:
        assert self.status is not None
        job_id = self.status.job_id
        self.journal.clear()
        self._run("job status", read_job, JobInputs(job_id), f"Reading job {job_id} on the server…")

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
        self._run("follow", follow_job, JobInputs(job_id), started)

    def _on_list_clicked(self) -> None:
        self._read_snapshots("Reading the snapshots on the server…")

    def _read_snapshots(self, started: str | None) -> None:
        """Read the snapshots per instance with their states (``started``: see ``_run``)."""
        conn = self.state.connection
        inputs = ListInputs(conn.instance if conn is not None else None)
        self._run("snapshots", list_snapshots, inputs, started)

    def _show_snapshots(self, listing: SnapshotListing) -> None:
        """The list: one heading per instance (this server's marked), its snapshots newest first."""
        self._listing = listing
        chosen = self.snapshots.currentItem()
        keep = chosen.data(256) if chosen is not None else None
        self.snapshots.clear()
        bold = QFont()
        bold.setBold(True)
        for doc, group in snapshots.by_instance(listing.records):
            mine = bool(doc.get("key")) and doc.get("key") == listing.current_key
            heading = QListWidgetItem(
                ("This server: " if mine else "Instance ")
                + snapshots.describe_instance(doc)
                + f" — {sum(1 for r in group if r.in_force)} of {len(group)} in force"
            )
            heading.setFlags(Qt.ItemFlag.NoItemFlags)  # a heading, not a choice
            heading.setFont(bold)
            self.snapshots.addItem(heading)
            for record in group:
                entry = QListWidgetItem("    " + record.line())
                entry.setData(256, record.id)
                entry.setData(257, record.state)
                entry.setToolTip(record.snapshot.summary())
                self.snapshots.addItem(entry)
                if record.id == keep:
                    self.snapshots.setCurrentItem(entry)

    def _on_task_progress(self, item: object) -> None:
        if isinstance(item, float):  # a benchmark's progress, within its side
            self.bench_bar.setValue(round(item * 1000))
            return
        if isinstance(item, BenchReport):  # "before" measured: a new pair begins
            self.state.bench_before, self.state.bench_after = item, None
            return
        if isinstance(item, jobs.JobStatus) and self._applying:
            # The apply ended inside a measured apply: from here Cancel stops "after" only.
            self._after_phase = item.state == "applied"
            self._note_changes_in_force(item)
            if self._after_phase:
                self.cancel_button.setText(_CANCEL_AFTER_TEXT)
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
                self.cancel_button.setText(_CANCEL_TEXT)

    def _keep_bench_with_snapshot(self, result: jobs.JobStatus) -> None:
        if result.snapshot_id is None or self.state.target is None:
            return
        if self.state.snapshot_id != result.snapshot_id:
            self.state.snapshot_id = result.snapshot_id
            self.state.snapshot_dir = local_snapshot_dir(self.state.target.label)
            keep_bench(self.state, "before", self.state.bench_before)

    def _note_changes_in_force(self, result: jobs.JobStatus) -> None:
        """Whether the server now runs with this wizard's changes (Verify's "before" asks)."""
        if result.state == "rolled-back":
            self.state.changes_in_force = None
        elif result.mode != "restore" and result.state in ("applied", "awaiting-confirm"):
            self.state.changes_in_force = result.snapshot_id
            if self.state.preview is not None:
                self.state.not_taken = not_taken(self.state.preview, result)

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
        if isinstance(result, SnapshotListing):
            quiet = self._list_after
            self._list_after = False
            self._show_snapshots(result)
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
            measured = self._measured_lines(result)
            result = result.status
        assert isinstance(result, jobs.JobStatus)
        self.status = result
        # The list shows the snapshot just taken (or restored) with its new state.
        self._list_after = result.final and result.snapshot_id is not None
        self._apply_work_returned()
        self.seen.emit(result)
        self._keep_bench_with_snapshot(result)
        self._note_changes_in_force(result)
        lines = [f"Job {result.job_id}: {result.state}."]
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
        lines += [f"Warning: {w}" for w in result.warnings]
        lines += [f"Log: {ln}" for ln in result.log_lines[-10:]]
        # Anything but the outcome asked for (or a clean cancel) is an error: it goes to the
        # log with the failed steps, and the page links to it.
        wanted = "rolled-back" if result.mode == "restore" else "applied"
        failed = result.state not in (wanted, "awaiting-confirm") and not (
            result.cancelled and result.state in ("refused", "rolled-back")
        )
        if failed:
            log_error(
                _log,
                f"job {result.job_id}",
                f"ended {result.state}",
                "; ".join(result.errors) or "no error recorded",
            )
            for step in result.steps:
                if step.status == "fail":
                    _log.warning("job %s: %s", result.job_id, step.line())
            for line in result.log_lines[-25:]:
                _log.warning("job %s server log: %s", result.job_id, line)
        if self.state.bench_after is not None:
            keep_bench(self.state, "after", self.state.bench_after)
        self._say(lines + measured, error=failed)

    def _measured_lines(self, result: MeasuredApply) -> list[str]:
        """What a measured apply measured, in a line or two (Verify shows the figures)."""
        if result.after is None or result.before is None:
            return [result.no_after] if result.no_after else []
        verdicts = result.after.verdicts(result.before)
        words = [v.verdict for v in verdicts]
        found = ", ".join(
            f"{words.count(w)} {'no change beyond the noise' if w == 'noise' else w}"
            for w in ("faster", "slower", "noise", "unmeasured")
            if w in words
        )
        cancelled = ""
        if result.after.cancelled:
            cancelled = " (“after” was cancelled: its figures are partial)"
        return [
            f"Measured before and after: {count(len(verdicts), 'run')} compared: {found}"
            f"{cancelled}. The Verify page shows the figures."
        ]

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
        self.cancel_button.setText(_CANCEL_TEXT)
        self._sync_buttons()
        self.completeChanged.emit()
        self._refreshing = False
        conn = self.state.connection
        if self._list_after and conn is not None and conn.transport is not None:
            self._refreshing = True
            self._read_snapshots(None)
