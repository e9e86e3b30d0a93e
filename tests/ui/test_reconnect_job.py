"""An apply left running on the target is offered at start-up, and a reconnect shows it.

A real job on a private server: the wizard applies with a confirmation deadline, so the
job is still waiting on the target when that wizard is dropped. A new wizard finds the
record on this computer, offers the reconnect, connects, and shows the job on the Apply
page, where it can still be kept. Once seen to finish, it is offered no more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QSlider
from pytestqt.qtbot import QtBot

from app.practice.server import PrivateServer
from app.ui import jobrecords
from app.ui.pages.apply import ApplyPage
from app.ui.pages.inspect import InspectPage
from app.ui.pages.tradeoffs import TradeoffsPage
from tests.hosts.util import need_root
from tests.ui.wizards import open_wizard


def _trx(server: PrivateServer) -> str:
    return server.query("SELECT @@innodb_flush_log_at_trx_commit").split()[-1]


def _apply_and_drop(qtbot: QtBot, tmp_path: Path, server: PrivateServer) -> str:
    """Connect, inspect, crash loss "os", preview, apply with a deadline; drop the wizard."""
    wizard, connect = open_wizard(qtbot, tmp_path)
    assert not connect.view.banner.isVisible()
    v = connect.view
    v.local.setChecked(True)
    v.instance.setText(str(server.socket_path))
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(0)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
    wizard.next()  # the Recommendation
    wizard.next()
    tradeoffs = wizard.currentPage()
    assert isinstance(tradeoffs, TradeoffsPage)
    for shared in ("fit_os", "fit_disks"):  # this machine's kernel and disks are not ours
        box = tradeoffs.sections[shared].control
        assert isinstance(box, QCheckBox)
        box.setChecked(False)
    crash = tradeoffs.sections["crash_loss"].control
    assert isinstance(crash, QSlider)
    crash.setValue(1)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentPage().isComplete(), timeout=120_000)
    wizard.next()
    apply = wizard.currentPage()
    assert isinstance(apply, ApplyPage)
    apply.confirm_spin.setValue(900)  # the job waits on the target for a Keep
    apply.consent.setChecked(True)
    qtbot.mouseClick(apply.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: apply.status is not None and apply.status.state == "awaiting-confirm",
        timeout=180_000,
    )
    job_id = apply.status.job_id  # type: ignore[union-attr]
    wizard.done(0)  # dropped while the job still runs on the target
    return job_id


def test_an_apply_not_seen_to_finish_is_offered_and_shown_after_a_reconnect(
    qtbot: QtBot,
    tmp_path: Path,
    private_server: PrivateServer,
    own_apply_jobs: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    job_id = _apply_and_drop(qtbot, tmp_path, private_server)
    assert job_id in own_apply_jobs and _trx(private_server) == "2"
    [record] = jobrecords.unfinished(jobrecords.records_dir())
    assert record.job_id == job_id and record.state == "awaiting-confirm"
    assert record.profile["instance"] == str(private_server.socket_path)
    assert not any("password" in key for key in record.profile)

    # A new wizard offers it at start-up; Reconnect connects and shows it on the Apply page.
    wizard, connect = open_wizard(qtbot, tmp_path)
    v = connect.view
    assert v.banner.isVisible() and v.reconnect.isVisible()
    text = v.banner.text()
    assert "An apply on" in text and record.target in text and "not seen to finish" in text
    assert record.started.replace("T", " ") in text
    qtbot.mouseClick(v.reconnect, Qt.MouseButton.LeftButton)
    apply = wizard.pages["Apply"]
    assert isinstance(apply, ApplyPage)
    qtbot.waitUntil(lambda: wizard.currentPage() is apply, timeout=120_000)
    qtbot.waitUntil(
        lambda: apply.status is not None and apply.status.job_id == job_id, timeout=120_000
    )
    assert apply.status is not None and apply.status.state == "awaiting-confirm"
    assert "start" in apply.journal.toPlainText()  # the job's journal from its first step
    qtbot.waitUntil(apply.keep_button.isEnabled, timeout=60_000)

    # Kept: the job ends, and the record says it was seen to finish.
    qtbot.mouseClick(apply.keep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: apply.status is not None and apply.status.state == "applied", timeout=180_000
    )
    assert _trx(private_server) == "2"
    assert not jobrecords.unfinished(jobrecords.records_dir())
    assert not v.banner.isVisible()
    wizard.done(0)

    wizard, connect = open_wizard(qtbot, tmp_path)
    assert not connect.view.banner.isVisible()
    wizard.done(0)
