"""Login questions: the SSH server's keyboard-interactive prompts and an unknown host key.

The connection code asks (a :class:`LoginQuestion` posted from the worker's thread, a
:class:`~app.domain.errors.HostKeyUnknown` in the doctor's result); the dialogs here show the
question, and the answer goes back the way it came. Passwords typed in the form (login,
sudo, database) never come here: these are the questions the server asks on its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLabel, QLineEdit, QMessageBox, QPushButton, QWidget

from app.domain.errors import AuthError, HostKeyUnknown, InnoTuneError

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


def question_dialog(parent: QWidget, question: LoginQuestion, title: str) -> QInputDialog:
    """The dialog for one login question: the server's text as sent.

    The answer is hidden unless the server asked for it to be echoed.
    """
    box = QInputDialog(parent)
    box.setObjectName("login_question_box")
    box.setWindowTitle(title)
    box.setAccessibleName("SSH login question")
    box.setInputMode(QInputDialog.InputMode.TextInput)
    box.setLabelText(question.text)
    label = box.findChild(QLabel)
    if label is not None:
        label.setTextFormat(Qt.TextFormat.PlainText)  # the server's text, shown as sent
    box.setTextEchoMode(QLineEdit.EchoMode.Normal if question.echo else QLineEdit.EchoMode.Password)
    box.setOkButtonText("&Send")
    edit = box.findChild(QLineEdit)
    if edit is not None:
        edit.setAccessibleName("answer to the SSH login question")
        edit.setAccessibleDescription(question.text.strip())
    return box


def host_key_dialog(parent: QWidget, question: HostKeyUnknown) -> tuple[QMessageBox, QPushButton]:
    """The unknown-host-key question, and its Trust button (Cancel is the default)."""
    box = QMessageBox(parent)
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
    return box, trust
