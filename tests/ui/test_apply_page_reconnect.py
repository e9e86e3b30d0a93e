"""After a job restarts the server, the Apply page logs in to the database again."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.access.database import open_session
from app.practice.server import PrivateServer
from app.ui.hostworker import Progress
from app.ui.pages.apply import ApplyPage
from app.ui.pages.preview import PreviewInputs, make_preview
from tests.hosts.util import need_root, short_watch
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    WATCH,
    _remove_new_jobs_and_snapshots,
    drop_in,
    restart_argv,
    tree,
)
from tests.ui.test_preview_page import _state


def test_the_page_reopens_its_database_session_after_a_restart(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    # A short watch after the restart (the page uses the 15 s default): keeps the test short.
    short_watch(monkeypatch, WATCH)
    server = private_server
    before = tree(server.base / "etc")
    state = _state(server)
    conn = state.connection
    assert state.plan is not None and conn is not None and conn.transport and conn.instance
    preview = make_preview(
        state.connection,  # type: ignore[arg-type]
        PreviewInputs(state.plan, state.facts),  # type: ignore[arg-type]
        Progress(lambda _t: None, lambda _o: None),
    )
    restart = drop_in(server, "[mysqld]\ninnodb_log_buffer_size = 33554432\n")
    state.preview = dataclasses.replace(preview, actions=(restart,), restart_needed=True)
    stale = conn.session = open_session(conn.transport, conn.instance)
    page = ApplyPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    page.measure_box.setChecked(False)  # the apply itself, no benchmark around it
    page.restart_edit.setText(shlex.join(restart_argv(server)))
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status is not None and page.status.state == "applied", page.state_label.text()
    assert page.status.restarted
    assert "reconnect: database session reopened" in page.journal.toPlainText()
    fresh = conn.session
    assert fresh is not None and fresh is not stale
    assert fresh.query("SELECT @@innodb_log_buffer_size")[0][0] == "33554432"

    qtbot.waitUntil(page.rollback_button.isEnabled)
    page.rollback_button.click()
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.mode == "restore", timeout=120_000
    )
    assert page.status.state == "rolled-back", page.state_label.text()
    assert conn.session is not None and conn.session is not fresh
    assert conn.session.query("SELECT @@innodb_log_buffer_size")[0][0] == "16777216"
    conn.session.close()
    assert tree(server.base / "etc") == before
