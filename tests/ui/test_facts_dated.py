"""Facts are dated: after an apply (and a rollback) that restarted the server, Back to Inspect
shows the old facts marked out of date; reading them again shows the new pid and uptime.

The whole wizard against a private MariaDB on this computer: Connect, Inspect, Trade-offs
(one change: innodb_flush_log_at_trx_commit), Preview, Apply with a restart, then Back.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QSlider
from pytestqt.qtbot import QtBot

from app.jobs import runner
from app.practice.server import PrivateServer
from app.ui.pages.apply import ApplyPage
from app.ui.pages.inspect import InspectPage
from app.ui.pages.preview import PreviewPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.wizard import MainWizard
from tests.hosts.util import need_root
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    WATCH,
    _remove_new_jobs_and_snapshots,
    restart_argv,
)
from tests.ui.wizards import open_wizard

CLOCK = re.compile(r"^Read at \d\d:\d\d:\d\d, (just now|\d+ seconds? ago)\.$")


def _server_text(inspect: InspectPage) -> str:
    box = inspect.findChild(QGroupBox, "facts_server")
    assert box is not None
    label = box.findChild(QLabel)
    assert label is not None
    return label.text()


def _uptime(server: PrivateServer) -> int:
    return int(server.query("SHOW GLOBAL STATUS LIKE 'Uptime'").split()[-1])


def _job_done(qtbot: QtBot, page: ApplyPage) -> None:
    qtbot.waitUntil(lambda: page.task is not None and not page.task.is_running(), timeout=120_000)
    qtbot.waitUntil(page.list_button.isEnabled, timeout=60_000)  # its snapshot list read again


def _back_to(wizard: MainWizard, page: object) -> None:
    for _ in wizard.pages:
        if wizard.currentPage() is page:
            return
        wizard.back()
    assert wizard.currentPage() is page


def test_back_to_inspect_after_a_restart_marks_the_old_facts_and_reads_the_new_ones(
    qtbot: QtBot, tmp_path: Path, private_server: PrivateServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    # A short watch after the restart. The flow passes its own watch_seconds, so a
    # functools.partial default would be overridden: the keyword is replaced instead.
    real = runner.apply
    monkeypatch.setattr(runner, "apply", lambda *a, **k: real(*a, **{**k, "watch_seconds": WATCH}))
    server = private_server
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.view.local.setChecked(True)
    connect.view.instance.setText(str(server.socket_path))
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)

    # Inspect: the facts say when they were read.
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(0)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
    first = wizard.state.facts
    assert first is not None and first.server is not None
    old_pid = first.server.instance.pid
    assert old_pid == server.running_pid()
    assert f"pid {old_pid}" in _server_text(inspect)
    assert CLOCK.match(inspect.dated.text()), inspect.dated.text()
    assert not inspect.dated.old

    # Trade-offs (past the Recommendation): one live change only (commits confirmed by the
    # OS cache).
    wizard.next()
    wizard.next()
    tradeoffs = wizard.currentPage()
    assert isinstance(tradeoffs, TradeoffsPage)
    assert tradeoffs.dated.text().startswith("Planned from facts read at ")
    crash = tradeoffs.sections["crash_loss"].control
    assert isinstance(crash, QSlider)
    crash.setValue(1)
    for section in tradeoffs.sections.values():
        if isinstance(section.control, QCheckBox) and section.declared.key.startswith("fit_"):
            section.control.setChecked(False)
    for section in tradeoffs.sections.values():
        for change_id, item in list(section._checkable.items()):
            if "innodb_flush_log_at_trx_commit" not in change_id:
                item.setCheckState(0, Qt.CheckState.Unchecked)
    plan = wizard.state.plan
    assert plan is not None
    assert [c.key for c in plan.changes if c.target != "advice"] == [
        "innodb_flush_log_at_trx_commit"
    ]

    wizard.next()
    assert isinstance(wizard.currentPage(), PreviewPage)
    qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)

    # Apply, restarting the server (a new process, a new pid).
    wizard.next()
    apply = wizard.currentPage()
    assert isinstance(apply, ApplyPage)
    apply.measure_box.setChecked(False)
    apply.restart_box.setChecked(True)
    apply.restart_edit.setText(shlex.join(restart_argv(server)))
    apply.consent.setChecked(True)
    apply.apply_button.click()
    _job_done(qtbot, apply)
    assert apply.status is not None and apply.status.state == "applied", apply.state_label.text()
    assert apply.status.restarted
    snapshot = apply.status.snapshot_id
    new_pid = server.running_pid()
    assert new_pid is not None and new_pid != old_pid
    # The connection names the new server process from the reconnect on.
    connection = wizard.state.connection
    assert connection is not None and connection.instance is not None
    assert connection.instance.pid == new_pid

    # Back to Inspect: the first facts, marked out of date, on every page that shows them.
    wizard.back()
    preview = wizard.currentPage()
    assert isinstance(preview, PreviewPage)
    assert "before the apply at" in preview.dated.text() and preview.dated.old
    wizard.back()
    assert tradeoffs.dated.old and "restarted the server" in tradeoffs.dated.text()
    assert "the “Now” values this plan starts from are out of date" in tradeoffs.dated.text()
    wizard.back()
    assert wizard.currentPage() is wizard.pages["Recommendation"]
    wizard.back()
    assert wizard.currentPage() is inspect
    assert wizard.state.facts is first and f"pid {old_pid}" in _server_text(inspect)
    note = inspect.dated.text()
    assert inspect.dated.old
    assert "before the apply at" in note and "restarted the server" in note, note
    assert "the pid, uptime and values shown are out of date" in note
    assert '<a href="again">Read them again</a>' in note
    assert "Next reads the server again first" in inspect.status.text()

    # Next reads them again first (the trade-offs plan from them), then goes on by itself:
    # the new pid and uptime, dated now, nothing marked.
    wizard.next()
    assert wizard.currentPage() is inspect and inspect.task is not None
    rec = wizard.pages["Recommendation"]
    qtbot.waitUntil(lambda: wizard.currentPage() is rec, timeout=60_000)
    facts = wizard.state.facts
    assert facts is not None and facts.server is not None and facts is not first
    assert facts.server.instance.pid == new_pid
    assert f"pid {new_pid}" in _server_text(inspect)
    uptime = facts.server.uptime_seconds
    assert uptime is not None and uptime <= _uptime(server)
    assert f"uptime {uptime} s" in _server_text(inspect)
    assert facts.server.variable("innodb_flush_log_at_trx_commit") == "2"
    assert CLOCK.match(inspect.dated.text()) and not inspect.dated.old
    qtbot.waitUntil(lambda: not inspect.task.is_running())  # type: ignore[union-attr]
    wizard.next()
    assert wizard.currentPage() is tradeoffs
    assert not tradeoffs.dated.old and "before" not in tradeoffs.dated.text()

    # Roll back (it restarts too), then Back to Trade-offs: marked again, and its link goes
    # back to Inspect and reads the server again.
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)
    wizard.next()
    assert wizard.currentPage() is apply
    # Planned from the changed server, the plan is a new one (its change is in force): the
    # page starts afresh, and the apply is rolled back from the snapshot list.
    qtbot.waitUntil(apply.list_button.isEnabled, timeout=60_000)
    apply.list_button.click()
    qtbot.waitUntil(lambda: apply.snapshots.count() > 0 and not apply._busy(), timeout=60_000)
    ids = [apply.snapshots.item(i).data(256) for i in range(apply.snapshots.count())]
    apply.snapshots.setCurrentRow(ids.index(snapshot))
    qtbot.waitUntil(apply.restore_button.isEnabled, timeout=60_000)
    apply.ask_restore = lambda choice, _id="": True  # type: ignore[method-assign]
    apply.restore_button.click()
    qtbot.waitUntil(
        lambda: apply.status is not None and apply.status.mode == "restore", timeout=120_000
    )
    _job_done(qtbot, apply)
    assert apply.status.state == "rolled-back", apply.state_label.text()
    assert apply.status.restarted
    third_pid = server.running_pid()
    assert third_pid not in (None, old_pid, new_pid)
    _back_to(wizard, tradeoffs)
    assert tradeoffs.dated.old and "before the rollback at" in tradeoffs.dated.text()
    tradeoffs.dated.linkActivated.emit("again")
    assert wizard.currentPage() is inspect and wizard.state.facts is None
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=60_000)
    facts = wizard.state.facts
    assert facts is not None and facts.server is not None
    assert facts.server.instance.pid == third_pid
    assert f"pid {third_pid}" in _server_text(inspect)
    assert facts.server.variable("innodb_flush_log_at_trx_commit") == "1"
    assert CLOCK.match(inspect.dated.text()) and not inspect.dated.old
    qtbot.waitUntil(lambda: not inspect.task.is_running())  # type: ignore[union-attr]
    wizard.done(0)
