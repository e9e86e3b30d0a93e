"""The session's log is one click (or Ctrl+L) away on every page, with secrets masked."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWizard
from pytestqt.qtbot import QtBot

from app.domain.redact import MASK, register_secret
from app.logsetup import setup_logging
from app.practice.server import free_port
from app.ui.logview import LOG_LINK, LogDialog
from app.ui.pages.inspect import InspectPage
from app.ui.wizard import MainWizard
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"
PLANTED = "planted-Secret-4711"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """The log file as the program sets it up; the handler is removed afterwards."""
    root = logging.getLogger()
    before = list(root.handlers)
    path = setup_logging(tmp_path / "logs")
    logging.getLogger("innotune.test").info("a line from before the wizard opened")
    yield path
    for handler in root.handlers:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def _dialog(wizard: MainWizard) -> LogDialog:
    dialog = wizard.log_dialog
    assert isinstance(dialog, LogDialog) and dialog.isVisible()
    return dialog


def test_the_log_button_shows_this_session_with_the_secret_masked(
    qtbot: QtBot, tmp_path: Path, log_file: Path
) -> None:
    wizard, connect = open_wizard(qtbot, tmp_path)
    register_secret(PLANTED)
    logging.getLogger("innotune.test").warning("login with %s refused", PLANTED)
    assert PLANTED not in log_file.read_text()

    # Reachable from every page a person can open: the same button, named, taken by Tab,
    # and Ctrl+L. Offline review walks Connect, Trade-offs, Preview and Done.
    button = wizard.button(QWizard.WizardButton.CustomButton3)
    connect.saved.open_facts_file(FACTS)
    seen = []
    while True:
        assert button.isVisible() and button.isEnabled(), wizard.currentPage().title()
        assert button.accessibleName() and button.focusPolicy() & Qt.FocusPolicy.TabFocus
        seen.append(wizard.currentPage().title())
        if wizard.currentPage().title() == "Done":
            break
        if wizard.currentPage().title() == "Preview":
            qtbot.waitUntil(wizard.currentPage().isComplete, timeout=60_000)
        wizard.next()
    assert seen == ["Connect", "Trade-offs", "Preview", "Done"]
    qtbot.keyClick(wizard, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    dialog = _dialog(wizard)
    text = dialog.text.toPlainText()
    assert f"login with {MASK} refused" in text and PLANTED not in text
    assert "before the wizard opened" not in text  # this session only
    bar = dialog.text.verticalScrollBar()
    assert bar.value() == bar.maximum()  # scrolled to the newest line
    qtbot.mouseClick(dialog.copy, Qt.MouseButton.LeftButton)
    assert f"login with {MASK} refused" in QGuiApplication.clipboard().text()
    assert dialog.open_folder.isEnabled() and "&" in dialog.open_folder.text()
    dialog.accept()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert _dialog(wizard) is dialog
    wizard.done(0)


def test_an_error_on_the_connect_page_links_to_the_details(
    qtbot: QtBot, tmp_path: Path, log_file: Path
) -> None:
    wizard, connect = open_wizard(qtbot, tmp_path)
    v = connect.view
    v.ssh.setChecked(True)
    v.host.setText("127.0.0.1")
    v.port.setValue(free_port())  # nothing listens: the connection is refused
    v.login_password.setText(PLANTED)
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: LOG_LINK in v.message.text(), timeout=60_000)
    assert "Details" in v.message.text()
    v.message.linkActivated.emit(LOG_LINK)
    text = _dialog(wizard).text.toPlainText()
    assert "doctor" in text and "connect" in text  # the failed step, as logged
    assert PLANTED not in text
    wizard.done(0)


def test_an_error_on_the_inspect_page_links_to_the_details(
    qtbot: QtBot, tmp_path: Path, log_file: Path
) -> None:
    wizard, _connect = open_wizard(qtbot, tmp_path)
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.start()  # nothing is connected: the worker says so
    qtbot.waitUntil(lambda: LOG_LINK in inspect.status.text(), timeout=60_000)
    assert "Not connected" in inspect.status.text()
    inspect.status.linkActivated.emit(LOG_LINK)
    assert "task inspect failed" in _dialog(wizard).text.toPlainText()
    qtbot.waitUntil(inspect.again.isEnabled)
    wizard.done(0)
