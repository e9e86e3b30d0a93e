"""SSH login questions (keyboard-interactive: PAM, one-time codes) asked on the Connect page.

Against a real sshd whose only ways in are a key or PAM's questions: the question comes up
in a dialog, the answer typed there logs in; Cancel sends nothing and says so; cancelling
the whole check while the question is open ends the worker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDialogButtonBox, QInputDialog, QLineEdit
from pytestqt.qtbot import QtBot

from app.ui.pages.connect import ConnectPage
from app.ui.pages.login import CheckCancelled, LoginQuestion, QuestionRefused, ask_in_window
from app.ui.state import WizardState
from tests.hosts.pam_sshd import start_pam_sshd
from tests.hosts.sshd import SshServer, SshUsers
from tests.ui.wizards import open_wizard


@pytest.fixture
def pam_sshd(
    sshd_factory: list[SshServer], ssh_users: SshUsers, tmp_path: Path
) -> Iterator[SshServer]:
    """Keys or PAM questions only; the test accounts re-asserted (another run may reset them)."""
    ssh_users.create()
    yield start_pam_sshd(sshd_factory, tmp_path / "pam")


@pytest.fixture
def no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ~/.ssh keys and no agent that could log in instead of the question."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def _fill(page: ConnectPage, server: SshServer, users: SshUsers) -> None:
    """The form for the sudo-with-password user, who has no key here: PAM asks."""
    page.own_known_hosts = str(server.workdir / "known_hosts")
    v = page.view
    v.ssh.setChecked(True)
    v.host.setText(server.host)
    v.user.setText(users.pw_user)
    v.port.setValue(server.port)


@pytest.fixture
def page(
    qtbot: QtBot, tmp_path: Path, no_keys: None, pam_sshd: SshServer, ssh_users: SshUsers
) -> Iterator[ConnectPage]:
    """The Connect page filled in for the sudo-with-password user; no key, no agent."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    page = ConnectPage(WizardState(), settings)
    qtbot.addWidget(page)
    page.show()
    _fill(page, pam_sshd, ssh_users)
    yield page
    if page.task is not None:
        page.cancel_check()
        page.task.stop(30_000)
    if page.state.connection is not None:
        page.state.connection.close()


def _question(qtbot: QtBot, page: ConnectPage) -> QInputDialog:
    qtbot.mouseClick(page.view.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.question_box is not None and page.question_box.isVisible(), timeout=60_000
    )
    box = page.question_box
    assert box is not None
    return box


def _wait_check(qtbot: QtBot, page: ConnectPage) -> None:
    qtbot.waitUntil(
        lambda: (
            page.task is not None and not page.task.is_running() and page.view.check.isEnabled()
        ),
        timeout=120_000,
    )


def _rows(page: ConnectPage) -> list[tuple[str, str, str]]:
    items = [page.view.steps.topLevelItem(i) for i in range(page.view.steps.topLevelItemCount())]
    return [(i.text(0), i.text(1), i.text(2)) for i in items if i is not None]


def test_the_servers_question_is_asked_in_a_dialog_and_the_answer_logs_in(
    qtbot: QtBot, page: ConnectPage, pam_sshd: SshServer, ssh_users: SshUsers
) -> None:
    box = _question(qtbot, page)
    assert box.labelText() == "Password: "  # pam_unix's question, as the server sent it
    assert box.textEchoMode() == QLineEdit.EchoMode.Password  # not echoed
    assert box.accessibleName() == "SSH login question"
    edit = box.findChild(QLineEdit)
    assert edit is not None and edit.accessibleName() == "answer to the SSH login question"
    assert pam_sshd.host in box.windowTitle()
    qtbot.keyClicks(edit, ssh_users.pw_password)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert box.textValue() == ""  # the answer is not kept in the dialog (deleted soon after)
    assert page.question_box is None
    _wait_check(qtbot, page)
    rows = _rows(page)
    assert rows[0][:2] == ("Connection", "OK"), (rows, page.view.message.text())
    assert "Accepted keyboard-interactive/pam" in pam_sshd.log.read_text(errors="replace")
    for shown in (page.view.message.text(), *(" ".join(r) for r in rows)):
        assert ssh_users.pw_password not in shown


def test_cancelling_the_question_sends_nothing_and_says_so(
    qtbot: QtBot, page: ConnectPage, pam_sshd: SshServer
) -> None:
    box = _question(qtbot, page)
    cancel = box.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Cancel)
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    _wait_check(qtbot, page)
    message = page.view.message.text()
    assert "login question ('Password:') was cancelled, so no answer was sent" in message
    assert "Press Check connection to be asked again" in message
    assert _rows(page)[0][:2] == ("Connection", "Failed")
    assert not page.state.connected
    # Nothing was sent, so no failed attempt was counted against the account.
    assert "Failed keyboard-interactive" not in pam_sshd.log.read_text(errors="replace")


def test_cancelling_the_check_while_the_question_is_open_ends_the_worker(
    qtbot: QtBot, page: ConnectPage
) -> None:
    box = _question(qtbot, page)
    job = page.cancel_check()
    assert job is not None
    assert not box.isVisible() and page.question_box is None
    assert page.view.check.isEnabled()
    qtbot.waitUntil(lambda: not job.is_running(), timeout=30_000)  # not held by the question
    assert "Cancelled" in page.view.message.text()
    assert not page.state.connected


@pytest.mark.usefixtures("no_keys")
def test_closing_the_window_while_the_question_is_open_ends_the_worker(
    qtbot: QtBot, tmp_path: Path, pam_sshd: SshServer, ssh_users: SshUsers
) -> None:
    wizard, connect = open_wizard(qtbot, tmp_path)
    _fill(connect, pam_sshd, ssh_users)
    _question(qtbot, connect)
    job = connect.task
    assert job is not None
    started = time.monotonic()
    wizard.done(0)  # waits for the worker: the open question must not hold it
    assert not job.is_running()
    assert time.monotonic() - started < 15  # generous: the machine is shared; ~0.1 s alone
    assert connect.question_box is None and wizard.state.connection is None


def test_a_question_ends_with_its_answer_a_refusal_or_the_checks_cancel() -> None:
    asked: list[LoginQuestion] = []
    cancelled = threading.Event()
    ask = ask_in_window(asked.append, cancelled)
    answering = threading.Thread(target=lambda: _answer_when_asked(asked, "123456"))
    answering.start()
    assert ask("Verification code: ", True) == "123456"
    answering.join()
    assert asked[0].echo and asked[0].settled

    refused = LoginQuestion("Password: ", False)
    refused.refuse()
    refused.answer("too late")  # the first word counts
    with pytest.raises(QuestionRefused, match="no answer was sent"):
        refused.wait()

    cancelled.set()  # the whole check was cancelled: the SSH thread stops waiting
    with pytest.raises(CheckCancelled):
        ask("Password: ", False)
    with pytest.raises(CheckCancelled):
        LoginQuestion("Password: ", False, cancelled).wait()
    with pytest.raises(CheckCancelled):  # nobody answered in time
        LoginQuestion("Password: ", False).wait(timeout=0)


def _answer_when_asked(asked: list[LoginQuestion], answer: str) -> None:
    deadline = time.monotonic() + 60
    while not asked and time.monotonic() < deadline:
        time.sleep(0.01)
    asked[0].answer(answer)
