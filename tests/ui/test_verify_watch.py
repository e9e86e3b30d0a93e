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

import pytest
from pytestqt.qtbot import QtBot

from app.mysql.session import PyMySQLSession
from app.practice.server import PrivateServer
from app.ui.pages.verify import VerifyPage
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
