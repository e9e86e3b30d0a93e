"""Errors on the Trade-offs, Preview and Verify pages say what to do, with the log a click away.

Each error is a real one: facts of a server older than InnoTune knows, a private server's
option file the server would refuse, and a benchmark against a server that was stopped.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.logsetup import setup_logging
from app.practice.server import PrivateServer
from app.ui.logview import LOG_LINK, LogDialog
from app.ui.pages.preview import PreviewPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.pages.verify import VerifyPage
from app.ui.state import WizardState
from app.ui.wizard import MainWizard
from tests.ui.test_preview_page import _state as preview_state
from tests.ui.test_verify_page import connected_state
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """The log file as the program sets it up; the handler is removed afterwards."""
    root = logging.getLogger()
    before = list(root.handlers)
    path = setup_logging(tmp_path / "logs")
    yield path
    for handler in root.handlers:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def _open_details(qtbot: QtBot, label_owner: QWidget, text: str) -> str:
    """Follow the error's Details… link; the text of the log dialog it opens."""
    labels = [
        w for w in label_owner.findChildren(QWidget) if LOG_LINK in (w.property("text") or "")
    ]
    assert labels, "no Details… link on the page"
    label = labels[0]
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByKeyboard
    label.linkActivated.emit(LOG_LINK)
    window = label_owner.window()
    dialogs = [d for d in window.findChildren(LogDialog) if d.isVisible()]
    if isinstance(window, LogDialog):  # pragma: no cover - the page is never the dialog
        dialogs.append(window)
    assert dialogs, "the link opened no log dialog"
    shown = dialogs[0].text.toPlainText()
    assert text in shown, shown[-2000:]
    for dialog in dialogs:
        dialog.close()
    return shown


def test_facts_of_a_server_too_old_say_to_upgrade_with_details(
    qtbot: QtBot, tmp_path: Path, log_file: Path
) -> None:
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None
    old = dataclasses.replace(
        facts, server=dataclasses.replace(facts.server, version="10.3.39-MariaDB-0+deb10u1")
    )
    saved = tmp_path / "old-host.json"
    saved.write_text(old.to_json())

    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.saved.open_facts_file(saved)
    wizard.next()
    page = wizard.currentPage()
    assert isinstance(page, TradeoffsPage)
    qtbot.waitUntil(page.error.isVisible, timeout=30_000)
    text = page.error.text()
    assert "older than the versions InnoTune knows" in text
    assert "Upgrade the server" in text and "Details" in text
    assert not page.isComplete() and wizard.state.plan is None
    shown = _open_details(qtbot, page, "no plan for")
    assert "older than the versions InnoTune knows" in shown
    wizard.done(0)


def test_an_option_file_the_server_would_refuse_says_fix_that_line(
    qtbot: QtBot, private_server: PrivateServer, log_file: Path
) -> None:
    state = preview_state(private_server)
    main = private_server.main_cnf
    good = main.read_bytes()
    main.write_bytes(good + b"[mysqld-broken\n")  # no ']': the server stops at this line
    try:
        page = PreviewPage(state)
        qtbot.addWidget(page)
        page.show()
        page.initializePage()
        qtbot.waitUntil(lambda: "refuse" in page.status.text(), timeout=60_000)
        text = page.status.text()
        assert "Wrong group definition" in text and "Fix that line" in text
        assert "Refresh preview" in text and LOG_LINK in text
        assert not page.isComplete()
        shown = _open_details(qtbot, page, f"preview of {state.plan.facts.target} refused")
        assert "Wrong group definition" in shown
    finally:
        main.write_bytes(good)
    # The next step the message names works: with the line fixed, Refresh builds it.
    qtbot.waitUntil(page.refresh_button.isEnabled, timeout=10_000)
    qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.isComplete, timeout=60_000)
    assert "refuse" not in page.status.text() and LOG_LINK not in page.status.text()
    assert state.connection is not None
    state.connection.close()


@pytest.fixture
def unclosed_login_socket() -> Iterator[None]:
    """Collect the socket PyMySQL leaves open when a login fails, after the test.

    PyMySQL 1.2.4 does not close the Unix socket of a connect that failed (connect() loses
    it before setting ``_sock``); its traceback, and so the socket, lives on in the log
    records pytest captures for the test's call phase. Collected here, after that phase,
    not during some later test where its ResourceWarning would be an error.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def test_a_benchmark_of_a_stopped_server_says_to_check_it_runs(
    qtbot: QtBot,
    private_server: PrivateServer,
    log_file: Path,
    caplog: pytest.LogCaptureFixture,
    unclosed_login_socket: None,
) -> None:
    state = connected_state(private_server)
    private_server.stop()
    page = VerifyPage(state)
    qtbot.addWidget(page)
    page.sample_seconds = 0.3
    page.show()
    try:
        page.start_run("before")
        qtbot.waitUntil(lambda: LOG_LINK in page.status.text(), timeout=60_000)
        text = page.status.text()
        assert "Could not reach the server" in text
        assert "Check that the server runs" in text
        assert "could not be measured" in page.rate_label.text()
        shown = _open_details(qtbot, page, "task write rate failed")
        assert "Could not reach the server" in shown
        qtbot.waitUntil(page.run_before.isEnabled, timeout=30_000)
    finally:
        page.stop()
        assert state.connection is not None
        state.connection.close()
        caplog.clear()  # its records hold the failure's traceback: see unclosed_login_socket


def test_facts_without_a_server_say_to_connect_to_one(qtbot: QtBot, log_file: Path) -> None:
    facts = HostFacts.from_json(FACTS.read_text())
    state = WizardState(facts=dataclasses.replace(facts, server=None))
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    assert page.error.isVisible() and not page.isComplete()
    assert "hold no database server" in page.error.text()
    assert "Go Back and connect" in page.error.text()
    _open_details(qtbot, page, "hold no database server")


def test_the_preview_says_whether_the_server_restarts_and_why(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path
) -> None:
    """The restart is chosen where it is shown; the Apply page's box is the same choice."""
    state = preview_state(private_server)  # innodb_flush_log_at_trx_commit: live, no restart
    wizard = MainWizard(state)
    qtbot.addWidget(wizard)
    page, apply = wizard.pages["Preview"], wizard.pages["Apply"]
    assert isinstance(page, PreviewPage)
    page.show()
    page.start()
    qtbot.waitUntil(page.isComplete, timeout=60_000)
    assert "No restart" in page.restart_label.text()
    assert page.restart_box.isEnabled() and not page.restart_box.isChecked()

    page.restart_box.click()  # asked for here: the Apply page's box follows
    assert apply.restart_box.isChecked()  # type: ignore[attr-defined]
    text = page.restart_label.text()
    assert "will restart because you asked for it" in text and "Estimated downtime" in text
    saved = tmp_path / "preview.txt"
    page.save_to(saved)
    assert "a restart was asked for" in saved.read_text()

    apply.restart_box.setChecked(False)  # type: ignore[attr-defined]
    assert not page.restart_box.isChecked() and "No restart" in page.restart_label.text()

    # A change that only a restart makes take effect: the box is ticked and locked.
    assert state.preview is not None
    needed = dataclasses.replace(state.preview, restart_needed=True)
    state.preview = needed
    page._show_restart(needed)
    assert page.restart_box.isChecked() and not page.restart_box.isEnabled()
    assert "The server will restart: " in page.restart_label.text()
    assert state.connection is not None
    state.connection.close()
    wizard.done(0)
