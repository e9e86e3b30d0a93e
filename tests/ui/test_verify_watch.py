"""The Verify page on a busy server: its own workload watched (the default), before and after.

A real private server with a steady client of its own (150 commits a second); the page opens,
finds it busy and watches; then a real change set live (innodb_flush_log_at_trx_commit 1 → 2)
and a watch "after" of the same length must read fsyncs per commit as better.
"""

from __future__ import annotations

import getpass
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.domain.target import ConnectOptions, Target
from app.flows import watching
from app.mysql.session import PyMySQLSession
from app.practice.server import PrivateServer
from app.ui.pages.verify import VerifyPage
from tests.hosts.util import need_root
from tests.integration.test_apply import _remove_new_jobs_and_snapshots  # noqa: F401 - autouse
from tests.ui.test_apply_page import open_apply_page
from tests.ui.test_verify_page import connected_state

RATE = 150.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    srv = PrivateServer(tmp_path_factory.mktemp("verify-watch") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


class SteadyClient(threading.Thread):
    """One client committing single-row inserts at a steady rate, until stopped."""

    def __init__(self, server: PrivateServer) -> None:
        super().__init__(name="steady client")
        self.server = server
        self.stop = threading.Event()

    def run(self) -> None:
        session = PyMySQLSession.direct(
            user=getpass.getuser(), socket_path=str(self.server.socket_path)
        )
        try:
            session.query("CREATE DATABASE IF NOT EXISTS steady")
            session.query("CREATE TABLE IF NOT EXISTS steady.t (id SERIAL, v INT)")
            start, n = time.monotonic(), 0
            while not self.stop.is_set():
                self.stop.wait(max(0.0, start + n / RATE - time.monotonic()))
                session.query("INSERT INTO steady.t (v) VALUES (%s)", (n,))
                n += 1
            session.query("DROP DATABASE steady")
        finally:
            session.close()


def test_busy_server_is_watched_and_a_change_reads_better(
    qtbot: QtBot, server: PrivateServer
) -> None:
    state = connected_state(server)
    page = VerifyPage(state)
    qtbot.addWidget(page)
    page.sample_seconds = 1.0
    page.watch_panel.seconds.setValue(8)  # 8 rounds a side decide at once
    page.show()
    client = SteadyClient(server)
    client.start()
    server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    try:
        page.initializePage()
        # Busy: no benchmark is offered first; the watch starts by itself.
        qtbot.waitUntil(lambda: page.watch_panel.running(), timeout=30_000)
        assert "busy" in page.rate_label.text()
        assert "The server is busy, so its own workload is watched" in (
            page.watch_panel.status.text()
        )
        qtbot.waitUntil(lambda: state.watch_before is not None, timeout=30_000)
        qtbot.waitUntil(lambda: not page.running(), timeout=10_000)
        assert "Apply the changes, then watch again" in page.watch_panel.status.text()
        assert page.watch_panel.table.rowCount() > 3
        # The apply, as far as the page knows it: a change in force, set live here.
        server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        state.changes_in_force = "20261129-watch"
        page.watch_panel.seconds.setValue(20)  # "after" takes the length of "before"
        page.watch_panel.watch_button.click()
        assert page.watch_panel.seconds.value() == 8
        qtbot.waitUntil(lambda: state.watch_after is not None, timeout=30_000)
        qtbot.waitUntil(lambda: not page.running(), timeout=10_000)
    finally:
        server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
        client.stop.set()
        client.join(30)
        page.stop()
        assert state.connection is not None
        state.connection.close()
    assert page.watch_panel.verdict("fsyncs_per_commit").startswith("better"), (
        page.watch_panel.status.text()
    )
    status = page.watch_panel.status.text()
    assert "Before:" in status and "After:" in status and "commits/s" in status
    assert "performance_schema is off" in status  # the private MariaDB's default


def test_watch_before_the_apply_and_after_it_on_verify(
    qtbot: QtBot,
    private_server: PrivateServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wizard's way on a busy server: Apply watches first, applies (trx_commit 1 → 2,
    live), and Verify watches as long again by itself and judges."""
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(watching, "WATCH_SECONDS", 7.0)  # 7 rounds a side decide
    client = SteadyClient(private_server)
    client.start()
    try:
        page = open_apply_page(qtbot, private_server)
        socket = str(private_server.socket_path)
        page.state.target = Target("local", options=ConnectOptions(instance=socket))
        page.watch_box.setChecked(True)
        page.consent.setChecked(True)
        page.apply_button.click()
        qtbot.waitUntil(
            lambda: (
                page.state.watch_before is not None
                or page.task is None
                or not page.task.is_running()
            ),
            timeout=30_000,
        )
        assert page.state.watch_before is not None, (
            page.state_label.text(),
            page.journal.toPlainText(),
        )
        # Watched on the unchanged server: nothing was applied before it ended.
        assert page.state.watch_before.settings["innodb_flush_log_at_trx_commit"] == "1"
        qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=60_000)
        assert page.status is not None and page.status.state == "applied"
        # The wizard's state as Verify finds it, connected (the Apply page's test state is
        # built from its facts): the watch before and the changes in force carried over.
        state = connected_state(private_server)
        state.watch_before = page.state.watch_before
        state.changes_in_force = page.state.changes_in_force
        verify = VerifyPage(state)
        qtbot.addWidget(verify)
        verify.sample_seconds = 0.5
        verify.show()
        verify.initializePage()
        qtbot.waitUntil(lambda: state.watch_after is not None, timeout=40_000)
        qtbot.waitUntil(lambda: not verify.running(), timeout=10_000)
        verify.stop()
        assert state.connection is not None
        state.connection.close()
    finally:
        client.stop.set()
        client.join(30)
    assert state.watch_after.seconds == state.watch_before.seconds == 7.0
    assert state.watch_after.settings["innodb_flush_log_at_trx_commit"] == "2"
    assert verify.watch_panel.verdict("fsyncs_per_commit").startswith("better"), (
        verify.watch_panel.status.text()
    )
