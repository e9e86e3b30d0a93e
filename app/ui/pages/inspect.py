"""The Inspect page: gather the facts on the host's worker, then show them for a person."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.access.database import Credentials
from app.access.doctor import DoctorResult
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.inspect.report import machine_lines, path_lines, server_lines
from app.ui.hostworker import Progress, Task, TaskCancelled, TaskHandle
from app.ui.logview import DETAILS_LINK, open_log
from app.ui.state import WizardState
from app.ui.widgets.factsnote import FactsNote
from app.ui.widgets.wraplabel import WrapLabel
from app.ui.widgets.writepath import WritePathView

# How long a cancelled inspection may take to end by itself before its connection is
# closed under it (a long remote command, such as the disk probe, returns only then).
CANCEL_GRACE_MS = 3000


class InspectionCancelled(InnoTuneError):
    """The person cancelled the inspection."""

    def __init__(self) -> None:
        super().__init__("Inspection cancelled.", "Press Inspect again when you are ready.")


@dataclass(frozen=True)
class InspectInputs:
    """How to inspect: the status sample's length and whether to probe the disk."""

    sample: float
    probe: bool
    # How to log in again when the server restarted since the check (the session is gone).
    credentials: Credentials = field(default_factory=Credentials, repr=False)
    use_sudo: bool = True


def run_inspection(conn: DoctorResult, inputs: InspectInputs, progress: Progress) -> HostFacts:
    """The inspection task: the whole inspection through the host's connection.

    A cancel ends the status sample at once and stops before the next step.
    """
    from app.flows.inspecting import follow_instance, inspect_connected, renew_lost_session

    if conn.transport is None or conn.session is None or conn.instance is None:
        raise InnoTuneError("Not connected.", "Go back to Connect and check the connection.")

    def wait(seconds: float) -> None:
        if progress.cancelled.wait(seconds):
            raise InspectionCancelled()

    def say(text: str) -> None:
        if progress.cancelled.is_set():
            raise InspectionCancelled()
        progress.say(text)

    try:
        # The server may have restarted since the check (an apply, a rollback): a new
        # process, whose pid the facts must show, and maybe a session gone with the old one.
        follow_instance(conn)
        renew_lost_session(conn, inputs.credentials, use_sudo=inputs.use_sudo, say=say)
        facts = inspect_connected(
            conn, sample_seconds=inputs.sample, disk_probe=inputs.probe, say=say, wait=wait
        )
    except Exception:
        if progress.cancelled.is_set():  # the page closed the connection under it
            raise InspectionCancelled() from None
        raise
    if progress.cancelled.is_set():
        raise InspectionCancelled()
    return facts


#: The result sections, in the order they are shown.
def no_path_words(facts: HostFacts) -> str:
    """What is known where the write path could not be followed (a server in a container)."""
    server = facts.server
    container = server.instance.container if server is not None else None
    where = f" ({server.datadir})" if server is not None and server.datadir else ""
    if container is not None:
        return (
            f"The data directory{where} is inside the container {container.name} "
            f"({container.engine}): the filesystem and disks under it could not be followed "
            "from there, so which disks hold it is not known."
        )
    return (
        f"The filesystem and disks under the data directory{where} could not be read "
        "(see Could not be read)."
    )


SECTIONS = ("Machine", "Write path", "Server", "Could not be read")


def _section(title: str) -> tuple[QGroupBox, WrapLabel]:
    """A titled box with one word-wrapped label for a section's lines.

    The label is plain text (the lines are facts, never markup) and a :class:`WrapLabel`:
    rich text would lay out a text document, and a plain QLabel measures its whole text
    again for every height question of every layout pass in the scroll area.
    """
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    label = WrapLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setAccessibleName(title)
    layout.addWidget(label)
    box.setObjectName(f"facts_{title.lower().replace(' ', '_')}")
    return box, label


class InspectPage(QWizardPage):
    """Progress while inspecting, then the machine, the write path and the server."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.setTitle("Inspect")
        self.setSubTitle(
            "InnoTune reads the machine, the disks under the data directory and the server. "
            "Nothing is changed."
        )
        self.setObjectName("page_inspect")
        self.state = state
        self.task: TaskHandle | None = None
        self._inspected_for: object = None
        # Next was pressed on facts a change has put out of date: they are read again, then on.
        self._next_after = False
        self._boxes: dict[str, tuple[QGroupBox, WrapLabel]] = {}  # SECTIONS, made once

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Sample write rates for"))
        self.sample = QSpinBox()
        self.sample.setRange(0, 600)
        self.sample.setValue(10)
        self.sample.setSuffix(" s")
        self.sample.setAccessibleName("sampling seconds")
        controls.addWidget(self.sample)
        self.probe = QCheckBox("&Measure the disk's sync rate (a few seconds, ~32 MiB)")
        controls.addWidget(self.probe)
        controls.addStretch(1)
        self.again = QPushButton("&Inspect again")
        self.again.clicked.connect(self.start)
        controls.addWidget(self.again)
        self.cancel = QPushButton("&Cancel inspection")
        self.cancel.setObjectName("inspect_cancel")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self.cancel_inspection)
        controls.addWidget(self.cancel)
        self._grace = QTimer(self)
        self._grace.setSingleShot(True)
        self._grace.timeout.connect(self._on_grace_timeout)

        self.status = WrapLabel()  # its height is asked again on every relayout of the page
        self.status.setObjectName("inspect_status")
        self.status.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.status.linkActivated.connect(lambda _link: open_log(self))
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setVisible(False)
        self.busy.setAccessibleName("inspection progress")
        # When the facts shown were read; after an apply or a rollback, out of date, with a
        # link that reads them again.
        self.dated = FactsNote(state)
        self.dated.read_again.connect(self.start)

        self.picture = WritePathView()
        self.sections = QVBoxLayout()
        # The picture above the facts, not beside them: beside a picture of two write paths
        # the facts had a third of the window, and a long setting name was cut.
        body = QWidget()
        body_layout = QVBoxLayout(body)
        picture_row = QHBoxLayout()
        picture_row.addWidget(self.picture)
        picture_row.addStretch(1)
        body_layout.addLayout(picture_row)
        body_layout.addLayout(self.sections)
        body_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        self._body = body

        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.busy)
        layout.addWidget(self.status)
        layout.addWidget(self.dated)
        layout.addWidget(scroll, 1)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        if self.state.connection is not self._inspected_for or self.state.facts is None:
            self.start()

    def start(self) -> None:
        """Inspect on the host's worker."""
        if self.task is not None and self.task.is_running():
            return
        self.state.facts = None
        self.dated.refresh()
        self.completeChanged.emit()
        self._inspected_for = self.state.connection
        target = self.state.target
        connection = self.state.connection
        inputs = InspectInputs(
            float(self.sample.value()),
            self.probe.isChecked(),
            Credentials(
                target.options.mysql_user if target is not None else None,
                self.state.secrets.mysql_password,
            ),
            # As the check logged in: the practice server's login is our own account.
            use_sudo=(
                connection is not None
                and connection.can_sudo
                and (target is None or target.kind != "practice")
            ),
        )
        # The facts shown are the last inspection's: hidden until the new one has come.
        self._body.setVisible(False)
        self.task = self.state.worker().submit(Task("inspect", run_inspection, inputs), self)
        self.task.say.connect(self._on_task_say)
        self.task.finished.connect(self._on_task_finished)
        self.task.failed.connect(self._on_task_failed)
        self.task.ended.connect(self._on_task_ended)
        self.busy.setVisible(True)
        self.again.setEnabled(False)
        self.cancel.setEnabled(True)
        self.status.setText("Inspecting…")

    def cancel_inspection(self) -> None:
        """Stop the inspection: the sample ends at once; a long remote call is cut off.

        The connection stays open for Inspect again, unless the work does not end within
        :data:`CANCEL_GRACE_MS`: then the connection is closed so the blocked call returns.
        """
        if self.task is None or not self.task.is_running():
            return
        self.task.cancel()
        self.cancel.setEnabled(False)
        self.status.setText("Cancelling…")
        self._grace.start(CANCEL_GRACE_MS)

    def _on_grace_timeout(self) -> None:
        if self.task is None or not self.task.is_running() or self.state.host is None:
            return
        self.state.drop_host()
        self.status.setText(
            "Cancelling: the connection was closed to stop a long command on the server."
        )

    def _on_task_say(self, text: str) -> None:
        if self.cancel.isEnabled():  # "Cancelling…" stays until the work ends
            self.status.setText(f"{text}…")

    def _on_task_finished(self, facts: object) -> None:
        assert isinstance(facts, HostFacts)
        self.state.facts = facts
        self.show_facts(facts)
        self.dated.refresh()
        self.status.setText("Done. Press Next to see what InnoTune recommends.")
        self.completeChanged.emit()
        wizard = self.wizard()
        if self._next_after and wizard is not None and wizard.currentPage() is self:
            wizard.next()
        self._next_after = False

    def _on_task_failed(self, exc: object) -> None:
        self._next_after = False
        if isinstance(exc, TaskCancelled):  # cancelled before it began: the same for a person
            exc = InspectionCancelled()
        if isinstance(exc, InspectionCancelled) and self.state.connection is None:
            self.status.setText(
                "<b>Inspection cancelled.</b> Its connection was closed to stop it: go Back "
                "to Connect and check the connection again."
            )
        elif isinstance(exc, InspectionCancelled):
            self.status.setText(f"<b>{exc.problem}</b> {exc.window_fix}")
        elif isinstance(exc, InnoTuneError):
            self.status.setText(
                f"<b>{html.escape(exc.problem)}</b> {html.escape(exc.window_fix)}{DETAILS_LINK}"
            )
        else:
            self.status.setText(f"<b>Inspection failed:</b> {html.escape(str(exc))}{DETAILS_LINK}")

    def _on_task_ended(self) -> None:
        self._grace.stop()
        self.busy.setVisible(False)
        self.again.setEnabled(True)
        self.cancel.setEnabled(False)

    def show_facts(self, facts: HostFacts) -> None:
        """Lay out the facts: machine, write-path picture and text, server, unknowns.

        The section boxes are made once and then only get new text (and are hidden when
        empty): new widgets would be polished and laid out from scratch each time.
        """
        self.picture.set_paths(list(facts.os.write_paths))
        self.picture.setVisible(bool(facts.os.write_paths))  # no blank band for no path
        texts = dict.fromkeys(SECTIONS, "")
        texts["Machine"] = "\n".join(machine_lines(facts.os.machine))
        paths: list[str] = []
        for p in facts.os.write_paths:
            paths += path_lines(p)
        texts["Write path"] = "\n".join(paths) or no_path_words(facts)
        if facts.server is not None:
            lines = server_lines(facts.server, window=True)
            if len(facts.instances) > 1:
                lines.append(
                    "Other instances on this host: "
                    + "; ".join(i.label for i in facts.instances if i != facts.server.instance)
                )
            texts["Server"] = "\n".join(lines)
        unknown = [
            f"{u.what}: {u.why}"
            for u in facts.unknown + facts.os.unknown + facts.os.machine.unknown
        ]
        for p in facts.os.write_paths:
            unknown += [f"{u.what}: {u.why}" for u in p.unknown]
        if facts.server is not None:
            unknown += [f"{u.what}: {u.why}" for u in facts.server.unknown]
        texts["Could not be read"] = "\n".join(dict.fromkeys(unknown))
        shown = {
            title: title in ("Machine", "Write path") or bool(text) for title, text in texts.items()
        }
        if not self._boxes:
            for title in SECTIONS:
                box, label = self._boxes[title] = _section(title)
                label.setText(texts[title])
                if not shown[title]:
                    box.setVisible(False)
                # Added unhidden, a box is shown by the next layout pass, all in one.
                self.sections.addWidget(box)
            self._body.setVisible(True)
            return
        # Showing a widget inside a visible one lays out every window level at once, so a
        # box shown at a time would lay the page out again for each: the results area is
        # hidden around the changes, and laid out once when it is shown again.
        regroup = any(self._boxes[title][0].isHidden() == show for title, show in shown.items())
        if regroup:
            self._body.setVisible(False)
        for title, text in texts.items():
            box, label = self._boxes[title]
            if label.text() != text:
                label.setText(text)
            box.setVisible(shown[title])
        if regroup or self._body.isHidden():
            self._body.setVisible(True)

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.state.facts is not None

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        """Shown again by Back after an apply or a rollback: say the facts are out of date."""
        if self.state.facts_old and not (self.task is not None and self.task.is_running()):
            self.status.setText(
                "Next reads the server again first, then shows what InnoTune recommends."
            )
        super().showEvent(event)

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        """Next on facts from before a change: read them again first, then go on by itself.

        The trade-offs and the preview plan from these facts; a plan from values the server
        no longer has would be a plan for another server.
        """
        if not self.state.facts_old or not self.state.connected:
            return True
        self._next_after = True
        self.start()
        self.status.setText("Reading the server again: the facts were from before a change…")
        return False
