"""The Connect page: choose the server, check every step on the host's own worker.

The check is a task on a new :class:`~app.ui.hostworker.HostWorker`: it opens the
connection the worker then owns. When every step has run, that worker becomes the wizard's
host (``state.host``) and the later pages' tasks run on it. The login questions live in
:mod:`app.ui.pages.login`, the saved targets in :mod:`app.ui.pages.profiles`, the widgets in
:mod:`app.ui.pages.connect_view`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QScrollArea,
    QTreeWidgetItem,
    QVBoxLayout,
    QWizardPage,
)

from app.access.doctor import STEP_TITLES, DoctorResult, Secrets, Step, run_doctor
from app.domain.errors import HostKeyUnknown, InnoTuneError, TargetError
from app.domain.target import ConnectOptions, Target, parse_target
from app.domain.words import count, sentence
from app.ui.hostworker import HostWorker, Progress, Task, TaskHandle, close_quietly
from app.ui.jobrecords import JobRecord
from app.ui.logview import DETAILS_LINK, open_log
from app.ui.pages.connect_view import ConnectView
from app.ui.pages.login import (
    CheckCancelled,
    LoginQuestion,
    ask_in_window,
    host_key_dialog,
    question_dialog,
)
from app.ui.pages.profiles import Profiles
from app.ui.pages.saved_files import SavedFiles
from app.ui.state import WizardState

#: What each kind of target is, under the choice (the practice server's words depend on
#: whether MariaDB is installed here).
KIND_NOTES = {
    "local": "A MySQL or MariaDB server running on this computer; changing its settings "
    "needs sudo (its password, if sudo asks for one, goes below).",
    "ssh": "A server on another computer, reached over SSH with your keys, an agent or a "
    "password: fill in the SSH fields below.",
}
STATUS_TEXT = {"ok": "OK", "warn": "OK (note)", "fail": "Failed", "skip": "Not checked"}


@dataclass(frozen=True)
class CheckInputs:
    """What a check works from, read from the form when Check was pressed."""

    target: Target
    secrets: Secrets
    own_known_hosts: str | None = None  # None: InnoTune's default file
    practice_dir: Path | None = None  # None: the default practice directory


def check_connection(conn: DoctorResult, inputs: CheckInputs, progress: Progress) -> DoctorResult:
    """The check task: start the practice server if chosen, then every doctor step.

    ``conn`` (the worker's, empty) is filled as the steps pass, so the page can close it
    when the person cancels: a blocked call on a closed connection returns at once. A cancel
    seen between steps closes it here, and the check ends with :class:`CheckCancelled`.
    The SSH server's login questions are posted to the window (a :class:`LoginQuestion`).
    """
    import functools

    from app.remote.connect import open_transport

    prompt = ask_in_window(progress.post, progress.cancelled)
    opener = functools.partial(open_transport, prompt=prompt)
    target = inputs.target
    instance_spec = target.options.instance
    if target.kind == "practice":
        from app.places import default_practice_dir
        from app.practice.practice import PracticeServer

        progress.say("Starting the practice server (the first start takes a few seconds)…")
        practice = PracticeServer(inputs.practice_dir or default_practice_dir())
        practice.start()
        instance_spec = str(practice.endpoint().socket)
    try:
        for step in run_doctor(
            target,
            inputs.secrets,
            conn,
            opener=opener,
            instance_spec=instance_spec,
            own_known_hosts=inputs.own_known_hosts,
        ):
            if progress.cancelled.is_set():
                break
            progress.say(f"{STEP_TITLES.get(step.name, step.name)}: {STATUS_TEXT[step.status]}")
            progress.post(step)
    except Exception:
        if progress.cancelled.is_set():  # the page closed the connection under it
            close_quietly(conn)
            raise CheckCancelled() from None
        raise
    if progress.cancelled.is_set():
        close_quietly(conn)
        raise CheckCancelled()
    return conn


class ConnectPage(QWizardPage):
    """Choose the target, run the check on the host's worker, show each step as it passes."""

    #: A reconnect to an unfinished job passed every step: the job's id (the wizard goes on
    #: to the Apply page and shows it).
    reconnect_ready = Signal(str)

    def __init__(self, state: WizardState, settings: QSettings | None = None) -> None:
        super().__init__()
        self.setTitle("Connect")
        self.setSubTitle(
            "Choose the server to tune. The practice server is a private MariaDB on this "
            "computer, made for trying things safely."
        )
        self.setObjectName("page_connect")
        self.state = state
        self.own_known_hosts: str | None = None  # None: InnoTune's default file
        self.practice_dir: Path | None = None  # None: the default practice directory
        self.task: TaskHandle | None = None  # the running check
        self._checking: HostWorker | None = None  # the worker the running check connects
        self.host_key_box: QMessageBox | None = None
        self.question_box: QInputDialog | None = None  # a login question being asked
        self._question: LoginQuestion | None = None
        self._accepted_fingerprint: str | None = None
        self.view = ConnectView()
        # Scrolled rather than squeezed: a long answer (several servers, a wrapped error)
        # would otherwise draw widgets over each other at the default window size.
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll_area)
        v = self.view
        v.kinds.idToggled.connect(self._on_kind_toggled)
        for field in v.target_fields():
            field.textChanged.connect(self._on_target_edited)
        v.tasks.idToggled.connect(self._on_task_toggled)
        v.check.clicked.connect(self._on_check_clicked)
        v.cancel_check.clicked.connect(self.cancel_check)
        v.message.linkActivated.connect(lambda _link: open_log(self))
        v.browse.clicked.connect(self._on_browse_clicked)
        v.chooser.activated.connect(self._on_chooser_activated)
        self.profiles = Profiles(self, v, settings or QSettings())
        self.saved = SavedFiles(self, v, state)
        self.saved.changed.connect(self.completeChanged)
        self._update_practice_note()
        self._show_kind_boxes()
        v.reconnect.clicked.connect(self._on_reconnect_clicked)
        self.unfinished_job: JobRecord | None = None  # offered in the banner
        self._reconnecting: JobRecord | None = None  # the job the running check leads to
        self.show_unfinished_jobs()
        # The window keeps the room the page needs as it opens (every step of a check whole);
        # only what comes later (a chooser, a long error) scrolls.
        self.scroll_area.setMinimumHeight(v.sizeHint().height())

    @property
    def settings(self) -> QSettings:
        """Where profiles are kept."""
        return self.profiles.settings

    @settings.setter
    def settings(self, settings: QSettings) -> None:
        self.profiles.settings = settings

    # -- a job not seen to finish ---------------------------------------------------------
    def show_unfinished_jobs(self) -> None:
        """Offer the newest job this computer started and did not see end, if any."""
        from app.ui.jobrecords import records_dir, unfinished

        try:
            found = unfinished(records_dir())
        except (OSError, InnoTuneError):
            found = []
        self.unfinished_job = found[0] if found else None
        for w in (self.view.banner, self.view.reconnect):
            w.setVisible(bool(found))
        if not found:
            return
        job = found[0]
        what = "A rollback" if job.mode == "restore" else "An apply"
        more = f" ({len(found) - 1} more not seen to finish)" if len(found) > 1 else ""
        self.view.banner.setText(
            f"<b>{what} on {html.escape(job.target)} started at "
            f"{html.escape(job.started.replace('T', ' '))} was not seen to finish</b>{more}. "
            "It goes on on the server by itself. Reconnect to see it."
        )

    def reconnect_to_job(self, job: JobRecord) -> None:
        """Connect as that job's profile says, then go on to the Apply page with the job."""
        self.profiles.fill_form(job.profile)
        self.view.tune.setChecked(True)
        self._accepted_fingerprint = None
        self.start_check()
        self.state.mode = "reconnect"
        self._reconnecting = job
        self.view.message.setText(
            f"Reconnecting to {html.escape(job.target)} to see job {html.escape(job.job_id)}…"
        )

    def _on_reconnect_clicked(self) -> None:
        if self.unfinished_job is not None:
            self.reconnect_to_job(self.unfinished_job)

    # -- reading the form ---------------------------------------------------------------
    def kind(self) -> str:
        """The chosen kind of target: practice, local or ssh."""
        return self.view.kind()

    def build_target(self) -> Target:
        """The Target the form describes (raises TargetError with what to fix)."""
        v = self.view
        options = ConnectOptions(
            identity=v.identity.text().strip() or None,
            accept_host_key=self._accepted_fingerprint,
            mysql_user=v.mysql_user.text().strip() or None,
            instance=v.instance.text().strip() or None,
        )
        if self.kind() != "ssh":
            return parse_target(self.kind(), options)
        host = v.host.text().strip()
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"  # a bare IPv6 address
        text = host
        if v.user.text().strip():
            text = f"{v.user.text().strip()}@{text}"
        problem = v.port.problem()
        if problem is not None:
            raise TargetError(
                problem,
                "Type a port number from 1 to 65535, or leave the box empty for the default "
                "(22, or what ~/.ssh/config says).",
            )
        if v.port.value():
            text = f"{text}:{v.port.value()}"
        return parse_target(text, options)

    def build_secrets(self) -> Secrets:
        """The secrets typed in; they live in memory only."""
        v = self.view

        def value(edit: QLineEdit) -> str | None:
            return edit.text() or None

        return Secrets(
            login_password=value(v.login_password),
            sudo_password=value(v.sudo_password),
            mysql_password=value(v.mysql_password),
        )

    # -- the check ---------------------------------------------------------------------
    def start_check(self) -> None:
        """Validate the form and run the check on a new host worker."""
        v = self.view
        try:
            target = self.build_target()
        except InnoTuneError as exc:
            v.message.setText(f"<b>{exc.problem}</b> {exc.window_fix}")
            return
        if self.task is not None and self.task.is_running():
            # The last check is still winding down; run this one as soon as it has.
            self.task.ended.connect(self.start_check, Qt.ConnectionType.SingleShotConnection)
            return
        self.state.drop_host()  # its connection closes; its tasks end
        self.state.mode = self.chosen_task()
        self.completeChanged.emit()
        secrets = self.build_secrets()
        self.state.target, self.state.secrets = target, secrets
        v.steps.clear()
        v.message.setText(f"Checking {target.label}…")
        v.check.setEnabled(False)
        worker = HostWorker(name=target.label)
        if target.kind == "practice":
            self.state.note_practice(self.practice_dir)
        inputs = CheckInputs(target, secrets, self.own_known_hosts, self.practice_dir)
        task = worker.submit(Task("check", check_connection, inputs), self)
        self.task, self._checking = task, worker
        # Each slot first asks whether this task is still the page's: a cancelled one winds
        # down on its own and only its connection is closed.
        task.progress.connect(self._while_current(task, "_on_check_progress"))
        task.say.connect(self._while_current(task, "_on_check_say"))
        task.finished.connect(lambda result: self._on_check_finished(task, worker, result))
        task.failed.connect(self._while_current(task, "_on_check_failed"))
        task.ended.connect(lambda: self._on_check_ended(task, worker))
        v.cancel_check.setEnabled(True)

    def _while_current(self, task: TaskHandle, slot: str) -> Callable[[object], None]:
        """The page's slot ``slot``, called only while ``task`` is the page's running check."""

        def call(arg: object) -> None:
            if task is self.task:
                getattr(self, slot)(arg)

        return call

    def cancel_check(self) -> TaskHandle | None:
        """Stop the running check: close what it opened so a blocked call returns.

        The page is usable again at once; the task ends by itself a moment later (the
        returned handle, whose ``ended`` says when) and closes anything it still opens.
        Its worker is retired: the window waits for it when it closes.
        """
        task, worker = self.task, self._checking
        if task is None or worker is None or not task.is_running():
            return None
        task.cancel()
        self.task, self._checking = None, None
        worker.close_in_background()
        self.state.retired.append(worker)
        self._close_question()  # the asking thread sees the cancel and gives up the login
        v = self.view
        v.cancel_check.setEnabled(False)
        v.check.setEnabled(True)
        v.message.setText("Cancelled: the check was stopped and its connection closed.")
        self.completeChanged.emit()
        return task

    def _on_check_finished(self, task: TaskHandle, worker: HostWorker, result: object) -> None:
        if task is self.task:
            self.state.host = worker  # from now on the pages' tasks run on it
            self.show_check_result(result)
        # else: cancelled just as it finished; cancel_check closes its connection

    def _on_check_ended(self, task: TaskHandle, worker: HostWorker) -> None:
        if task is self.task and self.state.host is not worker:
            # It failed outright (no result to show): close whatever it had opened.
            worker.close_in_background()
            self.state.retired.append(worker)
        if task is self.task:
            self._checking = None
            self._close_question()  # e.g. the SSH layer gave up waiting for the answer
            self.view.check.setEnabled(True)
            self.view.cancel_check.setEnabled(False)

    def _on_check_clicked(self) -> None:
        self._accepted_fingerprint = None
        job, now = self._reconnecting, self.profiles.values()
        if job is not None and any(job.profile.get(k) != now[k] for k in ("kind", "host", "port")):
            self._reconnecting = None  # another server now: a plain check
        self.start_check()

    def _on_check_say(self, text: str) -> None:
        self.view.message.setText(text)

    def _on_check_progress(self, item: object) -> None:
        if isinstance(item, LoginQuestion):
            self._on_login_question(item)
            return
        if not isinstance(item, Step):
            return
        step = item
        row = QTreeWidgetItem(
            [STEP_TITLES.get(step.name, step.name), STATUS_TEXT[step.status], step.detail]
        )
        fix = step.window_fix or step.fix  # the window's wording, never a command-line flag
        row.setToolTip(2, f"{step.detail}\n{fix}".strip())
        if fix:
            row.setText(2, f"{step.detail} — {fix}")
        self.view.steps.addTopLevelItem(row)

    def show_check_result(self, result: object) -> None:
        """Say what the check found and what comes next (the host key question, a chooser)."""
        assert isinstance(result, DoctorResult)
        if result.host_key_question is not None:
            self.view.message.setText("The host's key is not known yet: check its fingerprint.")
            self.ask_host_key(result.host_key_question)
        elif result.ok and self._reconnecting is not None:
            self.view.message.setText(
                f"<b>Every step passed.</b> Showing job {html.escape(self._reconnecting.job_id)}."
            )
            self.state.mode = "reconnect"
            self.completeChanged.emit()
            self.reconnect_ready.emit(self._reconnecting.job_id)
            self._reconnecting = None
            return
        elif result.ok and self.state.mode == "restore":
            self.view.message.setText(
                "<b>Every step passed.</b> Press Next to choose the snapshot to restore."
            )
        elif result.ok:
            self.view.message.setText("<b>Every step passed.</b> Press Next to inspect the server.")
        else:
            failed = next(s for s in result.steps if s.status == "fail")
            fix = sentence(failed.window_fix or failed.fix)
            if failed.name == "instance" and len(result.instances) > 1:
                self.offer_instances(result)
            else:
                self.view.message.setText(f"<b>{sentence(failed.detail)}</b> {fix}{DETAILS_LINK}")
        self.completeChanged.emit()

    def offer_instances(self, result: DoctorResult) -> None:
        """Let the user pick one of several server instances, then check again."""
        v = self.view
        v.chooser.clear()
        v.chooser.addItem("Choose a server…", None)
        for inst in result.instances:
            v.chooser.addItem(inst.label, inst.spec)
        for w in (v.chooser_label, v.chooser):
            w.setVisible(True)
        # The step's row above already lists them; the list holds each one: no third copy.
        v.message.setText(
            f"<b>{count(len(result.instances), 'server instance')} run here.</b> Choose the "
            "one to tune in the list above, or type its socket, port, pid or container name "
            f"in the Server instance box.{DETAILS_LINK}"
        )
        v.chooser.setFocus()
        # Once laid out, the list and the message are scrolled into sight.
        QTimer.singleShot(0, self._show_the_choice)

    def _show_the_choice(self) -> None:
        self.scroll_area.ensureWidgetVisible(self.view.message)
        self.scroll_area.ensureWidgetVisible(self.view.chooser)

    def _on_chooser_activated(self, index: int) -> None:
        spec = self.view.chooser.itemData(index)
        if spec:
            self.view.instance.setText(str(spec))
            for w in (self.view.chooser_label, self.view.chooser):
                w.setVisible(False)
            self.start_check()

    def _on_check_failed(self, exc: object) -> None:
        if isinstance(exc, InnoTuneError):
            self.view.message.setText(f"<b>{exc.problem}</b> {exc.window_fix}{DETAILS_LINK}")
        else:
            self.view.message.setText(f"<b>Unexpected error:</b> {exc}{DETAILS_LINK}")

    # -- login questions (keyboard-interactive) -------------------------------------------
    def _on_login_question(self, question: LoginQuestion) -> None:
        """Show the SSH server's question; the answer goes back to the waiting SSH thread.

        The answer is never logged or kept: the dialog's field is emptied once read.
        """
        if question.settled or self.task is None or not self.task.is_running():
            question.abort()  # the check it belonged to was cancelled (or has ended)
            return
        self._close_question()
        target = self.state.target
        title = f"Login question from {target.label}" if target is not None else "Login question"
        box = question_dialog(self, question, title)
        self.question_box, self._question = box, question

        def on_finished(code: int) -> None:
            if code == QInputDialog.DialogCode.Accepted:
                question.answer(box.textValue())
            else:
                question.refuse()
            box.setTextValue("")
            if self.question_box is box:
                self.question_box, self._question = None, None
            box.deleteLater()

        box.finished.connect(on_finished)
        self.view.message.setText(
            "The server asks a login question: answer it in the dialog, or Cancel to stop."
        )
        box.open()

    def _close_question(self) -> None:
        """Take down an open login question; its SSH thread stops waiting (nothing sent)."""
        box, question = self.question_box, self._question
        self.question_box, self._question = None, None
        if question is not None:
            question.abort()
        if box is not None:
            box.setTextValue("")
            box.reject()  # its finished handler only refuses an already settled question

    # -- host keys ------------------------------------------------------------------------
    def ask_host_key(self, question: HostKeyUnknown) -> None:
        """Show the fingerprint; connect again only if the user trusts it."""
        box, trust = host_key_dialog(self, question)
        self.host_key_box, self.trust_button = box, trust

        def on_finished(_code: int) -> None:
            if box.clickedButton() is trust:
                self._accepted_fingerprint = question.fingerprint
                self.start_check()
            else:
                self.view.message.setText("Not connected: the host key was not trusted.")
            self.host_key_box = None

        box.finished.connect(on_finished)
        box.open()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        if self.state.mode == "offline":
            return self.state.facts is not None
        return self.state.connected

    # -- what to do -----------------------------------------------------------------------
    def chosen_task(self) -> str:
        """The chosen task: tune or restore."""
        return "restore" if self.view.restore.isChecked() else "tune"

    def _on_task_toggled(self, _id: int, checked: bool) -> None:
        if checked and self.state.mode != "offline":
            self.state.mode = self.chosen_task()
            if self.state.connected:
                self.show_check_result(self.state.connection)  # the message names the next step

    # -- form behaviour -----------------------------------------------------------------
    def forget_check(self) -> None:
        """The form names another server now: the last check no longer counts.

        A check belongs to what it checked (kind, host, port, user, key, instance): a
        passed one would otherwise let Next inspect and tune the server checked before.
        A check still running is cancelled; a finished one's connection is closed.
        """
        running = self.task is not None and self.task.is_running()
        if not running and self.state.host is None:
            return  # nothing checked, or a saved facts file: nothing to forget
        if running:
            self.cancel_check()
        box, self.host_key_box = self.host_key_box, None
        if box is not None:  # the key it asks about is the old server's: never trusted now
            box.done(QMessageBox.StandardButton.Cancel)
        self._accepted_fingerprint = None
        if self.state.host is not None:
            self.state.drop_host()
        if self.state.mode != "offline":
            self.state.facts = None
        self.view.steps.clear()
        self.view.message.setText(
            "The server to check has changed: press Check connection to check it."
        )
        self.completeChanged.emit()

    def _on_target_edited(self, _text: str) -> None:
        self.forget_check()

    def _on_kind_toggled(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        self.forget_check()
        self._show_kind_boxes()

    def _show_kind_boxes(self) -> None:
        self.view.ssh_box.setEnabled(self.kind() == "ssh")
        self.view.access_box.setEnabled(self.kind() != "practice")
        # One note for each kind, in the same place, with room kept for the tallest: choosing
        # another kind moves no field under the pointer.
        notes = {**KIND_NOTES, "practice": self._practice_words}
        self.view.practice_note.setText(notes[self.kind()])
        self.view.practice_note.reserve(notes.values())

    def _update_practice_note(self) -> None:
        # A path lookup only: running the server program would block the GUI thread.
        from app.practice.binaries import INSTALL_HINT, server_program

        self._practice_words = (
            INSTALL_HINT
            if server_program() is None
            else "A private MariaDB with its own data directory under your user account; "
            "InnoTune starts it when you press Check and stops it when you close InnoTune."
        )

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "SSH private key", str(Path.home() / ".ssh"), "All files (*)"
        )
        if path:
            self.view.identity.setText(path)
