"""The Connect page: choose the server, check every step, answer the host-key question."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.access.doctor import DoctorResult, Secrets, Step, run_doctor
from app.domain.errors import AuthError, HostKeyUnknown, InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.domain.target import ConnectOptions, Target, parse_target
from app.ui.jobrecords import JobRecord
from app.ui.logview import DETAILS_LINK, open_log
from app.ui.profile_keyring import ProfileKeyring
from app.ui.state import WizardState
from app.ui.worker import Job, Progress

STATUS_TEXT = {"ok": "OK", "warn": "OK (note)", "fail": "Failed", "skip": "Not checked"}
STEP_TITLES = {
    "connect": "Connection",
    "host": "Linux host",
    "sudo": "Administrator rights (sudo)",
    "server": "Database server",
    "instance": "Which server",
    "socket": "Socket or port",
    "login": "Database login",
    "privileges": "Privileges",
}
PROFILE_KEYS = ("kind", "host", "user", "port", "identity", "mysql_user", "instance")


#: How long a login question waits for its answer: a little longer than the SSH layer
#: waits for the whole login (``INTERACTIVE_AUTH_TIMEOUT``), so the SSH layer's clearer
#: error comes first; the question then only frees paramiko's thread.
QUESTION_TIMEOUT = 130.0


class CheckCancelled(InnoTuneError):
    """The person cancelled the check; whatever it had opened is closed."""

    def __init__(self) -> None:
        super().__init__("Cancelled: nothing is connected.", "Press Check connection to try again.")


class QuestionRefused(AuthError):
    """The person pressed Cancel on an SSH login question: no answer was sent."""

    def __init__(self, question: str) -> None:
        super().__init__(
            f"Not logged in: the server's login question ({question.strip()!r}) was cancelled, "
            "so no answer was sent",
            "Press Check connection to be asked again, or log in with a key file.",
        )


class LoginQuestion:
    """One keyboard-interactive question on its way from the SSH thread to the window.

    The SSH thread waits in :meth:`wait` while the window shows the question; the window
    calls :meth:`answer` or :meth:`refuse`, and a cancelled check :meth:`abort`. The answer
    is held only until the SSH thread has taken it.
    """

    def __init__(self, text: str, echo: bool, cancelled: threading.Event | None = None) -> None:
        self.text = text
        self.echo = echo
        self.cancelled = cancelled or threading.Event()  # the check's own cancel
        self._done = threading.Event()
        self._answer: str | None = None
        self._outcome = ""  # "answered", "refused" or "aborted"

    def answer(self, text: str) -> None:
        """The person's answer (called on the GUI thread)."""
        self._settle("answered", text)

    def refuse(self) -> None:
        """The person pressed Cancel."""
        self._settle("refused", None)

    def abort(self) -> None:
        """The check was cancelled, or the window closes."""
        self._settle("aborted", None)

    @property
    def settled(self) -> bool:
        """True once answered, refused or aborted, or its check was cancelled."""
        return self._done.is_set() or self.cancelled.is_set()

    def _settle(self, outcome: str, answer: str | None) -> None:
        if not self._done.is_set():  # the first word counts
            self._outcome, self._answer = outcome, answer
            self._done.set()

    def wait(self, timeout: float = QUESTION_TIMEOUT) -> str:
        """Block the SSH thread until the answer comes (never on the GUI thread).

        Raises:
            QuestionRefused: the person pressed Cancel.
            CheckCancelled: the check was cancelled, or no answer came within ``timeout``.
        """
        deadline = time.monotonic() + timeout
        # A short poll also sees a cancel that did not go through abort() (a job.cancel()).
        while not self._done.is_set():
            if self.cancelled.is_set() or time.monotonic() > deadline:
                self.abort()
            self._done.wait(0.1)
        answer, self._answer = self._answer, None
        if self._outcome == "answered" and answer is not None:
            return answer
        if self._outcome == "refused":
            raise QuestionRefused(self.text)
        raise CheckCancelled()


def ask_in_window(
    post: Callable[[LoginQuestion], None], cancelled: threading.Event
) -> Callable[[str, bool], str]:
    """A keyboard-interactive answerer that asks in the window and waits for the answer.

    ``post`` hands the question to the GUI thread (a queued signal); the returned callable
    runs on paramiko's thread and blocks it until the person answers, refuses or the check
    is cancelled (``cancelled``). A refusal raises, so the SSH layer sends nothing and no
    failed attempt is counted against the account.
    """

    def ask(text: str, echo: bool) -> str:
        if cancelled.is_set():
            raise CheckCancelled()
        question = LoginQuestion(text, echo, cancelled)
        post(question)
        return question.wait()

    return ask


def check_connection(
    target: Target,
    secrets: Secrets,
    progress: Progress,
    own_known_hosts: str | None,
    practice_dir: Path | None,
    result: DoctorResult | None = None,
    prompt: Callable[[str, bool], str] | None = None,
) -> DoctorResult:
    """Runs in a worker: start the practice server if chosen, then every doctor step.

    ``result`` is filled as the steps pass, so the page can close what it holds when the
    person cancels: a blocked call on a closed connection returns at once. A cancel seen
    between steps closes it here, and the check ends with :class:`CheckCancelled`.
    ``prompt`` answers the SSH server's login questions (one-time codes, PAM prompts).
    """
    import functools

    from app.remote.connect import open_transport

    opener = open_transport if prompt is None else functools.partial(open_transport, prompt=prompt)

    instance_spec = target.options.instance
    if target.kind == "practice":
        from app.practice.practice import PracticeServer
        from app.ui.paths import default_practice_dir

        progress.say("Starting the practice server (the first start takes a few seconds)…")
        practice = PracticeServer(practice_dir or default_practice_dir())
        practice.start()
        instance_spec = str(practice.endpoint().socket)
    result = result if result is not None else DoctorResult()
    try:
        for step in run_doctor(
            target,
            secrets,
            result,
            opener=opener,
            instance_spec=instance_spec,
            own_known_hosts=own_known_hosts,
        ):
            if progress.cancelled.is_set():
                break
            progress.say(f"{STEP_TITLES.get(step.name, step.name)}: {STATUS_TEXT[step.status]}")
            progress.post(step)
    except Exception:
        if progress.cancelled.is_set():  # the page closed the connection under it
            close_quietly(result)
            raise CheckCancelled() from None
        raise
    if progress.cancelled.is_set():
        close_quietly(result)
        raise CheckCancelled()
    return result


def close_quietly(result: DoctorResult) -> None:
    """Close a check's session and connection; a connection already gone is fine.

    Closing ends the relay on the target too: it stops when its stdin (the SSH channel)
    closes, and a local relay when its socket does.
    """
    import contextlib

    with contextlib.suppress(Exception):
        result.close()
    result.session = None
    result.transport = None


def close_in_background(result: DoctorResult) -> threading.Thread:
    """Close ``result`` from a thread of its own: SSH waits for its reader thread to end."""
    closer = threading.Thread(
        target=close_quietly, args=(result,), name="innotune-close", daemon=True
    )
    closer.start()
    return closer


def find_plan_facts(plan: Plan, folder: Path) -> HostFacts | None:
    """The facts file in ``folder`` that ``plan`` was made from (by checksum), if any."""
    from app.planner import facts_checksum

    for candidate in sorted(folder.glob("*.json"))[:200]:  # a big download folder: enough
        try:
            if candidate.stat().st_size > 50 << 20:
                continue
            facts = HostFacts.from_json(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if facts_checksum(facts) == plan.facts.checksum:
            return facts
    return None


class ConnectView(QWidget):
    """The Connect page's widgets (layout only; behaviour lives in the page)."""

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)

        # A job started from this computer and not seen to end: offered at start-up.
        banner_row = QHBoxLayout()
        self.banner = QLabel()
        self.banner.setObjectName("unfinished_job_banner")
        self.banner.setWordWrap(True)
        self.reconnect = QPushButton("Reconnect and see the &job")
        self.reconnect.setObjectName("reconnect_job")
        banner_row.addWidget(self.banner, 1)
        banner_row.addWidget(self.reconnect)
        layout.addLayout(banner_row)
        self.banner.setVisible(False)
        self.reconnect.setVisible(False)

        # Rolling back is a task of its own: someone who only wants the old settings back
        # goes from here straight to the snapshot list.
        task_row = QHBoxLayout()
        task_row.addWidget(QLabel("What do you want to do?"))
        self.tune = QRadioButton("T&une this server")
        self.restore = QRadioButton("&Restore an earlier snapshot")
        self.tasks = QButtonGroup(self)
        for i, button in enumerate((self.tune, self.restore)):
            self.tasks.addButton(button, i)
            task_row.addWidget(button)
        self.tune.setChecked(True)
        for button in (self.tune, self.restore):
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        task_row.addStretch(1)
        self.open_facts = QPushButton("Open a saved &facts file or plan…")
        self.open_facts.setToolTip(
            "Review facts saved with `innotune inspect --out`, or a plan saved with "
            "`innotune plan --out` (with its facts), without connecting"
        )
        task_row.addWidget(self.open_facts)
        layout.addLayout(task_row)

        self.practice = QRadioButton("&Practice server on this computer (safe to experiment)")
        self.local = QRadioButton("&This computer")
        self.ssh = QRadioButton("Another computer over &SSH")
        self.kinds = QButtonGroup(self)
        for i, button in enumerate((self.practice, self.local, self.ssh)):
            self.kinds.addButton(button, i)
            layout.addWidget(button)
        self.practice.setChecked(True)
        self.practice_note = QLabel()
        self.practice_note.setWordWrap(True)
        self.practice_note.setIndent(24)
        layout.addWidget(self.practice_note)

        self.ssh_box = QGroupBox("SSH")
        form = QFormLayout(self.ssh_box)
        self.host = QLineEdit()
        self.host.setPlaceholderText(
            "db1.example.com, 192.0.2.7, [2001:db8::7] or an ~/.ssh/config alias"
        )
        self.user = QLineEdit()
        self.user.setPlaceholderText("as in ~/.ssh/config, or your login name")
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setSpecialValueText("default")
        key_row = QHBoxLayout()
        self.identity = QLineEdit()
        self.identity.setPlaceholderText("the agent and ~/.ssh keys are tried when empty")
        self.browse = QPushButton("Bro&wse…")
        key_row.addWidget(self.identity)
        key_row.addWidget(self.browse)
        self.login_password = QLineEdit()
        self.login_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.login_password.setPlaceholderText("only if the host takes passwords")
        form.addRow("&Host:", self.host)
        form.addRow("User:", self.user)
        form.addRow("P&ort:", self.port)
        key_label = QLabel("&Key file:")
        key_label.setBuddy(self.identity)
        form.addRow(key_label, key_row)
        form.addRow("Login password:", self.login_password)
        layout.addWidget(self.ssh_box)

        self.access_box = QGroupBox("Access to the server")
        access = QFormLayout(self.access_box)
        self.sudo_password = QLineEdit()
        self.sudo_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.sudo_password.setPlaceholderText("only if sudo asks for one")
        self.mysql_user = QLineEdit()
        self.mysql_user.setPlaceholderText("empty: log in as root through the socket, with sudo")
        self.mysql_password = QLineEdit()
        self.mysql_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.instance = QLineEdit()
        self.instance.setPlaceholderText("socket, port or pid — only when several servers run")
        access.addRow("sudo password:", self.sudo_password)
        access.addRow("&Database user:", self.mysql_user)
        access.addRow("Database password:", self.mysql_password)
        access.addRow("Server &instance:", self.instance)
        layout.addWidget(self.access_box)

        profile_row = QHBoxLayout()
        self.profiles = QComboBox()
        self.profiles.setMinimumContentsLength(18)
        self.save_profile = QPushButton("Sa&ve profile…")
        self.delete_profile = QPushButton("Re&move profile")
        profile_label = QLabel("Profile:")
        profile_label.setBuddy(self.profiles)
        self.profiles.setAccessibleName("saved profile")
        profile_row.addWidget(profile_label)
        profile_row.addWidget(self.profiles, 1)
        profile_row.addWidget(self.save_profile)
        profile_row.addWidget(self.delete_profile)
        layout.addLayout(profile_row)
        self.remember = QCheckBox("Remember passwords in the s&ystem keyring")
        layout.addWidget(self.remember)

        self.check = QPushButton("&Check connection")
        self.check.setDefault(True)
        self.cancel_check = QPushButton("Cance&l check")
        self.cancel_check.setToolTip("Stop the check and close what it opened on the server")
        self.cancel_check.setEnabled(False)
        check_row = QHBoxLayout()
        check_row.addWidget(self.check)
        check_row.addWidget(self.cancel_check)
        check_row.addStretch(1)
        layout.addLayout(check_row)
        self.steps = QTreeWidget()
        self.steps.setHeaderLabels(["Step", "Result", "Details"])
        self.steps.setRootIsDecorated(False)
        self.steps.setColumnWidth(0, 190)
        self.steps.setColumnWidth(1, 90)
        layout.addWidget(self.steps, 1)
        chooser_row = QHBoxLayout()
        self.chooser_label = QLabel("This host runs several servers. Which one?")
        self.chooser = QComboBox()
        self.chooser.setAccessibleName("server instance chooser")
        self.chooser_label.setBuddy(self.chooser)
        chooser_row.addWidget(self.chooser_label)
        chooser_row.addWidget(self.chooser, 1)
        layout.addLayout(chooser_row)
        for w in (self.chooser_label, self.chooser):
            w.setVisible(False)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setObjectName("connect_message")
        # An error's "Details…" link opens the log: reachable by mouse and by keyboard.
        self.message.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        layout.addWidget(self.message)

        for widget, name in (
            (self.host, "SSH host"),
            (self.user, "SSH user"),
            (self.port, "SSH port"),
            (self.identity, "SSH key file"),
            (self.login_password, "SSH login password"),
            (self.sudo_password, "sudo password"),
            (self.mysql_user, "database user"),
            (self.mysql_password, "database password"),
            (self.instance, "server instance"),
            (self.steps, "connection check steps"),
        ):
            widget.setAccessibleName(name)


class ConnectPage(QWizardPage):
    """Choose the target, run the doctor in a worker, show each step as it completes."""

    #: A reconnect to an unfinished job passed every step: the job's id (the wizard goes on
    #: to the Apply page and shows it).
    reconnect_ready = Signal(str)
    #: A login question (:class:`LoginQuestion`) from the SSH thread, shown on the GUI thread.
    login_question = Signal(object)

    def __init__(self, state: WizardState, settings: QSettings | None = None) -> None:
        super().__init__()
        self.setTitle("Connect")
        self.setSubTitle(
            "Choose the server to tune. The practice server is a private MariaDB on this "
            "computer, made for trying things safely."
        )
        self.setObjectName("page_connect")
        self.state = state
        self.settings = settings or QSettings()
        self.own_known_hosts: str | None = None  # None: InnoTune's default file
        self.practice_dir: Path | None = None  # None: the default practice directory
        self.job: Job | None = None
        self._checking: DoctorResult | None = None  # what the running check has opened
        self._winding_down: list[Job] = []  # cancelled checks still ending
        self.host_key_box: QMessageBox | None = None
        self.question_box: QInputDialog | None = None  # a login question being asked
        self._question: LoginQuestion | None = None
        self._accepted_fingerprint: str | None = None
        self.view = ConnectView()
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        v = self.view
        v.kinds.idToggled.connect(self._on_kind_toggled)
        v.tasks.idToggled.connect(self._on_task_toggled)
        v.open_facts.clicked.connect(self._on_open_facts_clicked)
        v.check.clicked.connect(self._on_check_clicked)
        v.cancel_check.clicked.connect(self.cancel_check)
        v.message.linkActivated.connect(lambda _link: open_log(self))
        v.browse.clicked.connect(self._on_browse_clicked)
        v.save_profile.clicked.connect(self._on_save_profile_clicked)
        v.delete_profile.clicked.connect(self._on_delete_profile_clicked)
        v.profiles.activated.connect(self._on_profile_activated)
        v.chooser.activated.connect(self._on_chooser_activated)
        self._load_profile_names()
        self.keyring = ProfileKeyring(self, v, self.settings)
        self._update_practice_note()
        self._on_kind_toggled(0, True)
        v.reconnect.clicked.connect(self._on_reconnect_clicked)
        self.login_question.connect(self._on_login_question)
        self.unfinished_job: JobRecord | None = None  # offered in the banner
        self._reconnecting: JobRecord | None = None  # the job the running check leads to
        self.show_unfinished_jobs()

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
        self.fill_form(job.profile)
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
        return ("practice", "local", "ssh")[max(self.view.kinds.checkedId(), 0)]

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
        """Validate the form and run the doctor in a worker."""
        v = self.view
        try:
            target = self.build_target()
        except InnoTuneError as exc:
            v.message.setText(f"<b>{exc.problem}</b> {exc.fix}")
            return
        if self.job is not None and self.job.is_running():
            # The last check is still winding down; run this one as soon as it has.
            self.job.finished.connect(self.start_check, Qt.ConnectionType.SingleShotConnection)
            return
        if self.state.connection is not None:
            close_in_background(self.state.connection)
            self.state.connection = None
        self.state.mode = self.task()
        self.completeChanged.emit()
        secrets = self.build_secrets()
        self.state.target, self.state.secrets = target, secrets
        v.steps.clear()
        v.message.setText(f"Checking {target.label}…")
        v.check.setEnabled(False)
        result = DoctorResult()
        self._checking = result
        job = Job(
            lambda progress: check_connection(
                target,
                secrets,
                progress,
                self.own_known_hosts,
                self.practice_dir,
                result,
                prompt=ask_in_window(self.login_question.emit, progress.cancelled),
            ),
            self,
        )
        self.job = job
        # Each slot first asks whether this job is still the page's: a cancelled one winds
        # down on its own and only its connection is closed.
        job.partial.connect(self._while_current(job, "_on_job_partial"))
        job.progress.connect(self._while_current(job, "_on_job_progress"))
        job.succeeded.connect(lambda res: self._on_check_succeeded(job, res))
        job.failed.connect(self._while_current(job, "_on_job_failed"))
        job.finished.connect(lambda: self._on_check_finished(job))
        v.cancel_check.setEnabled(True)
        job.start()

    def _while_current(self, job: Job, slot: str) -> Callable[[object], None]:
        """The page's slot ``slot``, called only while ``job`` is the page's running check."""

        def call(arg: object) -> None:
            if job is self.job:
                getattr(self, slot)(arg)

        return call

    def cancel_check(self) -> Job | None:
        """Stop the running check: close what it opened so a blocked call returns.

        The page is usable again at once; the worker ends by itself a moment later (the
        returned job, whose ``finished`` says when) and closes anything it still opens.
        """
        job, result = self.job, self._checking
        if job is None or not job.is_running():
            return None
        job.cancel()
        self.job, self._checking = None, None
        self._winding_down.append(job)
        if result is not None:
            close_in_background(result)
        self._close_question()  # the asking thread sees the cancel and gives up the login
        v = self.view
        v.cancel_check.setEnabled(False)
        v.check.setEnabled(True)
        v.message.setText("Cancelled: the check was stopped and its connection closed.")
        self.completeChanged.emit()
        return job

    def _on_check_succeeded(self, job: Job, result: object) -> None:
        if job is self.job:
            self._on_job_succeeded(result)
        elif isinstance(result, DoctorResult):
            close_in_background(result)  # cancelled just as it finished

    def _on_check_finished(self, job: Job) -> None:
        if job in self._winding_down:
            self._winding_down.remove(job)
        if job is self.job:
            self._checking = None
            self._close_question()  # e.g. the SSH layer gave up waiting for the answer
            self._on_job_finished()

    def _on_check_clicked(self) -> None:
        self._accepted_fingerprint = None
        job, now = self._reconnecting, self.profile_values()
        if job is not None and any(job.profile.get(k) != now[k] for k in ("kind", "host", "port")):
            self._reconnecting = None  # another server now: a plain check
        self.start_check()

    def _on_job_progress(self, text: str) -> None:
        self.view.message.setText(text)

    def _on_job_partial(self, step: object) -> None:
        if not isinstance(step, Step):
            return
        item = QTreeWidgetItem(
            [STEP_TITLES.get(step.name, step.name), STATUS_TEXT[step.status], step.detail]
        )
        item.setToolTip(2, f"{step.detail}\n{step.fix}".strip())
        if step.fix:
            item.setText(2, f"{step.detail} — {step.fix}")
        self.view.steps.addTopLevelItem(item)

    def _on_job_succeeded(self, result: object) -> None:
        assert isinstance(result, DoctorResult)
        self.state.connection = result
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
            self.view.message.setText(f"<b>{failed.detail}.</b> {failed.fix}{DETAILS_LINK}")
            if failed.name == "instance" and len(result.instances) > 1:
                self.offer_instances(result)
        self.completeChanged.emit()

    def offer_instances(self, result: DoctorResult) -> None:
        """Let the user pick one of several server instances, then check again."""
        v = self.view
        v.chooser.clear()
        v.chooser.addItem("Choose a server…", None)
        for inst in result.instances:
            spec = inst.socket or (str(inst.port) if inst.port else str(inst.pid))
            v.chooser.addItem(inst.label, spec)
        for w in (v.chooser_label, v.chooser):
            w.setVisible(True)
        v.chooser.setFocus()

    def _on_chooser_activated(self, index: int) -> None:
        spec = self.view.chooser.itemData(index)
        if spec:
            self.view.instance.setText(str(spec))
            for w in (self.view.chooser_label, self.view.chooser):
                w.setVisible(False)
            self.start_check()

    def _on_job_failed(self, exc: object) -> None:
        if isinstance(exc, InnoTuneError):
            self.view.message.setText(f"<b>{exc.problem}</b> {exc.fix}{DETAILS_LINK}")
        else:
            self.view.message.setText(f"<b>Unexpected error:</b> {exc}{DETAILS_LINK}")

    def _on_job_finished(self) -> None:
        self.view.check.setEnabled(True)
        self.view.cancel_check.setEnabled(False)

    # -- login questions (keyboard-interactive) -------------------------------------------
    def _on_login_question(self, question: object) -> None:
        """Show the SSH server's question; the answer goes back to the waiting SSH thread.

        The answer is never logged or kept: the dialog's field is emptied once read.
        """
        if not isinstance(question, LoginQuestion):
            return
        if question.settled or self.job is None or not self.job.is_running():
            question.abort()  # the check it belonged to was cancelled (or has ended)
            return
        self._close_question()
        target = self.state.target
        box = QInputDialog(self)
        box.setObjectName("login_question_box")
        box.setWindowTitle(
            f"Login question from {target.label}" if target is not None else "Login question"
        )
        box.setAccessibleName("SSH login question")
        box.setInputMode(QInputDialog.InputMode.TextInput)
        box.setLabelText(question.text)
        label = box.findChild(QLabel)
        if label is not None:
            label.setTextFormat(Qt.TextFormat.PlainText)  # the server's text, shown as sent
        box.setTextEchoMode(
            QLineEdit.EchoMode.Normal if question.echo else QLineEdit.EchoMode.Password
        )
        box.setOkButtonText("&Send")
        edit = box.findChild(QLineEdit)
        if edit is not None:
            edit.setAccessibleName("answer to the SSH login question")
            edit.setAccessibleDescription(question.text.strip())
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
        box = QMessageBox(self)
        box.setObjectName("host_key_box")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Unknown host key")
        box.setText(f"InnoTune has never seen the host key of <b>{question.host}</b>.")
        box.setInformativeText(
            f"Key type: {question.key_type}\nFingerprint: {question.fingerprint}\n\n"
            "Trust it only if it matches what the server's administrator sees with\n"
            "ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the server."
        )
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        trust = box.addButton("&Trust this key", QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        self.host_key_box = box
        self.trust_button = trust

        def on_finished(_code: int) -> None:
            if box.clickedButton() is trust:
                self._accepted_fingerprint = question.fingerprint
                self.start_check()
            else:
                self.view.message.setText("Not connected: the host key was not trusted.")
            self.host_key_box = None

        box.finished.connect(on_finished)
        box.open()

    # -- page protocol --------------------------------------------------------------------
    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        if self.state.mode == "offline":
            return self.state.facts is not None
        return self.state.connected

    # -- what to do -----------------------------------------------------------------------
    def task(self) -> str:
        """The chosen task: tune or restore."""
        return "restore" if self.view.restore.isChecked() else "tune"

    def _on_task_toggled(self, _id: int, checked: bool) -> None:
        if checked and self.state.mode != "offline":
            self.state.mode = self.task()
            if self.state.connected:
                self._on_job_succeeded(self.state.connection)  # the message names the next step

    def open_facts_file(self, path: str | Path) -> None:
        """Load facts saved by ``innotune inspect --out`` for review without a connection."""
        try:
            facts = HostFacts.from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.view.message.setText(
                f"<b>{Path(path).name} could not be read as a facts file:</b> {exc}. "
                "Choose a file written by <code>innotune inspect --out FILE</code>."
            )
            return
        plan = self.state.saved_plan
        if plan is not None and self.state.facts is None and self.state.mode == "offline":
            # The facts a plan just opened is waiting for: only its own will do.
            from app.planner import facts_checksum

            if facts_checksum(facts) != plan.facts.checksum:
                self.view.message.setText(
                    f"<b>{html.escape(Path(path).name)} holds other facts than the plan was "
                    f"made from</b> ({html.escape(plan.facts.target)}, collected "
                    f"{html.escape(plan.facts.collected_at)}). Choose that facts file."
                )
                return
            self.state.facts = facts
            self.state.plan = self.state.preview = None
            self.view.message.setText(
                f"<b>Opened the plan with its facts</b> ({html.escape(Path(path).name)}), for "
                "review without a connection. Press Next to see its trade-offs and preview. "
                "Nothing can be applied from a file: connect to the server to apply."
            )
            self.completeChanged.emit()
            return
        self._go_offline()
        self.state.saved_plan = None
        self.state.facts = facts
        server = facts.server.version if facts.server is not None else "no database server"
        self.view.message.setText(
            f"<b>Opened {Path(path).name}</b> ({server}), for review without a connection. "
            "Press Next to choose the trade-offs; nothing can be applied from a file."
        )
        self.completeChanged.emit()

    def _on_open_facts_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Saved facts file or plan",
            str(Path.home()),
            "Facts or plans (*.json);;All files (*)",
        )
        if not path:
            return
        self.open_saved_file(path)
        if self.state.saved_plan is not None and self.state.facts is None:
            # A plan alone cannot be previewed: ask for the facts it was made from.
            facts, _ = QFileDialog.getOpenFileName(
                self, "The plan's facts file", str(Path(path).parent), "Facts (*.json)"
            )
            if facts:
                self.open_facts_file(facts)

    def open_saved_file(self, path: str | Path) -> None:
        """Open a saved plan or facts file, whichever it is, for review without a connection."""
        from app.domain.plan import Plan

        try:
            plan = Plan.from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            self.open_facts_file(path)  # not a plan: a facts file, or it says what is wrong
            return
        self.open_plan(plan, Path(path))

    def open_plan(self, plan: Plan, path: Path) -> None:
        """Review ``plan`` offline: with its facts (found beside it) on Trade-offs and Preview.

        The facts are those whose checksum the plan names; a JSON file beside the plan that
        holds them is used, otherwise the page asks for it (:meth:`open_facts_file`).
        """
        self._go_offline()
        self.state.saved_plan = plan
        self.state.facts = None
        made = f"for {plan.facts.target}, from facts collected {plan.facts.collected_at}"
        facts = find_plan_facts(plan, path.parent)
        if facts is None:
            self.view.message.setText(
                f"<b>Opened the plan {html.escape(path.name)}</b> ({html.escape(made)}). "
                "Now choose the facts file it was made from (saved with <code>innotune plan "
                "--save-facts FILE</code> or <code>innotune inspect --out FILE</code>)."
            )
        else:
            self.state.facts = facts
            self.view.message.setText(
                f"<b>Opened the plan {html.escape(path.name)}</b> ({html.escape(made)}), "
                f"for review without a connection. Press Next to see its trade-offs and "
                f"preview. Nothing can be applied from a file: connect to the server to apply."
            )
        self.completeChanged.emit()

    def _go_offline(self) -> None:
        if self.state.connection is not None:
            close_in_background(self.state.connection)
            self.state.connection = None
        self.state.target = None
        self.state.mode = "offline"
        self.state.plan = self.state.preview = None
        self.view.steps.clear()

    # -- form behaviour -----------------------------------------------------------------
    def _on_kind_toggled(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        self.view.ssh_box.setEnabled(self.kind() == "ssh")
        self.view.access_box.setEnabled(self.kind() != "practice")
        self.view.practice_note.setVisible(self.kind() == "practice")

    def _update_practice_note(self) -> None:
        # A path lookup only: running the server program would block the GUI thread.
        from app.practice.binaries import INSTALL_HINT, server_program

        if server_program() is None:
            self.view.practice_note.setText(INSTALL_HINT)
        else:
            self.view.practice_note.setText(
                "A private MariaDB with its own data directory under your user account; "
                "InnoTune starts it when you press Check."
            )

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "SSH private key", str(Path.home() / ".ssh"), "All files (*)"
        )
        if path:
            self.view.identity.setText(path)

    # -- profiles (passwords only in the keyring) ------------------------------------------
    def _load_profile_names(self) -> None:
        self.settings.beginGroup("profiles")
        names = sorted(self.settings.childGroups())
        self.settings.endGroup()
        self.view.profiles.clear()
        self.view.profiles.addItems(names)

    def profile_values(self) -> dict[str, str]:
        """The current form as a profile: no password field is ever included."""
        v = self.view
        return {
            "kind": self.kind(),
            "host": v.host.text().strip(),
            "user": v.user.text().strip(),
            "port": str(v.port.value()),
            "identity": v.identity.text().strip(),
            "mysql_user": v.mysql_user.text().strip(),
            "instance": v.instance.text().strip(),
        }

    def save_profile(self, name: str) -> None:
        """Store the form under ``name``; passwords only in the system keyring, if opted in."""
        for key, value in self.profile_values().items():
            self.settings.setValue(f"profiles/{name}/{key}", value)
        self.settings.sync()
        self._load_profile_names()
        self.view.profiles.setCurrentText(name)
        self.keyring.profile_saved(name)

    def load_profile(self, name: str) -> None:
        """Fill the form from a saved profile."""
        self.fill_form(
            {k: str(self.settings.value(f"profiles/{name}/{k}", "")) for k in PROFILE_KEYS}
        )
        self.keyring.profile_loaded(name)

    def fill_form(self, profile: dict[str, str]) -> None:
        """Fill the form from profile values (:meth:`profile_values`, never a password)."""
        values = {k: str(profile.get(k, "")) for k in PROFILE_KEYS}
        kinds = {"practice": self.view.practice, "local": self.view.local, "ssh": self.view.ssh}
        kinds.get(values["kind"], self.view.practice).setChecked(True)
        v = self.view
        v.host.setText(values["host"])
        v.user.setText(values["user"])
        v.port.setValue(int(values["port"] or 0))
        v.identity.setText(values["identity"])
        v.mysql_user.setText(values["mysql_user"])
        v.instance.setText(values["instance"])

    def _on_save_profile_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, "Save profile", self.keyring.save_prompt())
        if ok and name.strip():
            self.save_profile(name.strip().replace("/", "-"))

    def _on_delete_profile_clicked(self) -> None:
        name = self.view.profiles.currentText()
        if name:
            self.keyring.profile_removed(name)
            self.settings.remove(f"profiles/{name}")
            self._load_profile_names()

    def _on_profile_activated(self, _index: int) -> None:
        self.load_profile(self.view.profiles.currentText())
