"""The Apply page's restart option and its Cancel button, against a real private server."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs import runner
from app.practice.server import PrivateServer
from tests.hosts.util import need_root, short_watch
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    WATCH,
    _remove_new_jobs_and_snapshots,
    restart_argv,
    tree,
)
from tests.ui.test_apply_page import open_apply_page

TRX = "SELECT @@innodb_flush_log_at_trx_commit"


def test_restart_box_changes_the_summary_and_needs_a_way_to_restart(
    qtbot: QtBot, private_server: PrivateServer
) -> None:
    need_root()
    page = open_apply_page(qtbot, private_server)
    assert "No restart needed" in page.summary.text()
    assert page.restart_box.isEnabled() and not page.restart_box.isChecked()
    assert page.restart_box.accessibleName()
    assert not page.cancel_button.isEnabled()  # nothing runs yet
    page.restart_box.setChecked(True)
    text = page.summary.text()
    assert "The server will restart." in text and "Estimated downtime: about" in text
    # A private server is started by hand: the page asks for the restart command.
    assert "give the restart command" in text
    page.restart_edit.setText(shlex.join(restart_argv(private_server)))
    assert "give the restart command" not in page.summary.text()
    effective = page.effective_preview()
    assert effective is not None and effective.restart_requested and effective.will_restart
    assert effective.restart is not None and "Restart" in effective.text()
    page.restart_box.setChecked(False)
    assert "No restart needed" in page.summary.text()


def test_cancel_after_the_snapshot_rolls_back_and_leaves_the_server_up(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    short_watch(monkeypatch, WATCH)
    server = private_server
    before = tree(server.base / "etc")
    page = open_apply_page(qtbot, server)
    page.restart_edit.setText(shlex.join(restart_argv(server)))
    page.restart_box.setChecked(True)
    page.consent.setChecked(True)
    page.apply_button.click()
    assert page.task is not None and page.cancel_button.isEnabled()
    assert page.cancel_button.text() == "&Cancel (nothing changed yet)"
    pressed: list[str] = []

    def on_step(item: object) -> None:
        # Cancel as soon as the job reports its first file written (after the snapshot).
        if isinstance(item, runner.JobStep) and item.step == "write" and not pressed:
            pressed.append(page.cancel_button.text())
            page.cancel_button.click()

    page.task.progress.connect(on_step)
    qtbot.waitUntil(lambda: page.task is not None and not page.task.is_running(), timeout=180_000)
    assert pressed == ["&Cancel and roll back"]
    status = page.status
    assert status is not None and status.cancelled, page.state_label.text()
    assert status.state == "rolled-back", page.state_label.text()
    assert "every change was rolled back" in page.state_label.text()
    # The job saw the request (a cancel step), or had ended first and a restore undid it.
    assert "cancel" in page.journal.toPlainText() or status.mode == "restore"
    assert tree(server.base / "etc") == before  # byte-identical
    assert server.running_pid() is not None
    assert server.query(TRX).split()[-1] == "1"
    qtbot.waitUntil(page.apply_button.isEnabled)  # once the worker's thread has ended
    assert not page.cancel_button.isEnabled()
    assert page.cancel_button.text() == "&Cancel and roll back"


def test_cancel_while_waiting_for_a_confirmation_rolls_back_at_once(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    before = tree(server.base / "etc")
    page = open_apply_page(qtbot, server)
    page.confirm_spin.setValue(600)  # a deadline far away: only the cancel can end the wait
    page.consent.setChecked(True)
    page.apply_button.click()
    assert page.task is not None
    at_result: list[bool] = []

    def click_as_the_result_arrives(result: object) -> None:
        # The apply's worker has returned but its thread has not ended yet (its quit waits
        # for this very GUI thread): a click here must not be lost. This is the moment a
        # loaded machine stretches; the test makes it happen every time.
        if isinstance(result, runner.JobStatus):
            at_result.append(page.cancel_button.isEnabled())
            page.cancel_button.click()

    page.task.finished.connect(click_as_the_result_arrives)
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.state == "awaiting-confirm",
        timeout=120_000,
    )
    assert at_result == [False], "Cancel offered while the apply's thread was still ending"
    assert server.query(TRX).split()[-1] == "2"
    qtbot.waitUntil(page.cancel_button.isEnabled, timeout=60_000)
    assert page.cancel_button.text() == "&Cancel and roll back"
    page.cancel_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status.state == "rolled-back" and page.status.cancelled, page.state_label.text()
    assert server.query(TRX).split()[-1] == "1"
    assert tree(server.base / "etc") == before


def test_cancel_at_once_changes_nothing(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    before, pid = tree(server.base / "etc"), server.running_pid()
    page = open_apply_page(qtbot, server)
    page.consent.setChecked(True)
    page.apply_button.click()
    page.cancel_button.click()  # before the job can start on the server, almost always
    assert not page.cancel_button.isEnabled()
    qtbot.waitUntil(page.apply_button.isEnabled, timeout=120_000)
    text = page.state_label.text()
    if page.status is None:  # stopped before the launch: the job and its snapshot are gone
        assert text.startswith("Cancelled before"), text
    else:  # the job had started: it stopped at its first step, or undid what it did
        assert page.status.cancelled and page.status.state in ("refused", "rolled-back"), text
    assert tree(server.base / "etc") == before
    assert server.running_pid() == pid and server.query(TRX).split()[-1] == "1"
