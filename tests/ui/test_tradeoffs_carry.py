"""Choices survive going Back and inspecting again (issue 26, item 4)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QSlider
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.domain.serverfacts import BinlogUse
from app.planner.values import GIB
from app.practice.server import PrivateServer
from app.ui.pages.connect import ConnectPage
from app.ui.pages.inspect import InspectPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


def _with_ram(facts: HostFacts, ram: int) -> HostFacts:
    machine = dataclasses.replace(facts.os.machine, mem_total_bytes=ram, big_processes=())
    return dataclasses.replace(facts, os=dataclasses.replace(facts.os, machine=machine))


def _slider(page: TradeoffsPage, key: str) -> QSlider:
    control = page.sections[key].control
    assert isinstance(control, QSlider)
    return control


def _box(page: TradeoffsPage, key: str) -> QCheckBox:
    control = page.sections[key].control
    assert isinstance(control, QCheckBox)
    return control


def test_a_changed_fact_is_named_and_a_moved_slider_stays(qtbot: QtBot) -> None:
    """Two recorded facts sets through the page: the RAM doubled between the inspections."""
    base = HostFacts.from_json(FACTS.read_text())
    old, new = _with_ram(base, 8 * GIB), _with_ram(base, 16 * GIB)
    state = WizardState(facts=old)
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    page.show()
    assert not page.since.isVisible()
    _slider(page, "redo").setValue(3)  # "Smooth writing"
    _box(page, "fit_os").setChecked(False)
    state.facts = new
    page.initializePage()
    assert _slider(page, "redo").value() == 3
    assert not _box(page, "fit_os").isChecked()
    assert state.positions is not None and state.positions.fit_os is False
    text = page.since.text()
    assert page.since.isVisible()
    assert "Since the last inspection the RAM changed from 8 GiB to 16 GiB" in text
    assert "the recommended buffer pool is now" in text
    assert "The slider follows the new recommendation." in text
    assert "stays where you put it" in page.sections["redo"].start.text()


def state_plan_lacks(plan: object, change_id: str) -> bool:
    """The plan in force leaves the change out (it is listed unticked)."""
    return plan is not None and all(c.id != change_id for c in plan.changes)  # type: ignore[attr-defined]


def _connect(qtbot: QtBot, connect: ConnectPage, server: PrivateServer) -> None:
    connect.view.local.setChecked(True)
    connect.view.instance.setText(str(server.socket_path))
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: (
            connect.task is not None
            and not connect.task.is_running()
            and connect.view.check.isEnabled()
        ),
        timeout=120_000,
    )
    assert connect.isComplete(), connect.view.message.text()


def test_back_and_inspect_again_keeps_the_choices_and_names_the_change(
    qtbot: QtBot, tmp_path: Path, private_server: PrivateServer
) -> None:
    """The real flow on a private server: move, untick, Back, Inspect again, Next."""
    wizard, connect = open_wizard(qtbot, tmp_path)
    _connect(qtbot, connect, private_server)
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(0)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
    qtbot.waitUntil(inspect.isComplete, timeout=60_000)
    wizard.next()  # the Recommendation, then the trade-offs to adjust
    wizard.next()
    page = wizard.currentPage()
    assert isinstance(page, TradeoffsPage)
    qtbot.waitUntil(lambda: wizard.state.plan is not None, timeout=30_000)
    memory = _slider(page, "memory")
    moved = 3 if memory.value() != 3 else 4
    memory.setValue(moved)
    _box(page, "fit_disks").setChecked(False)
    crash = _slider(page, "crash_loss")
    assert crash.value() == 0  # "Nothing": the private server runs trx_commit 1
    # A private MariaDB runs without a binary log: slider 7 is locked and says why.
    binlog = page.sections["binlog"]
    assert not binlog.control.isEnabled()
    assert binlog.control.isHidden()
    assert binlog.value_label.text().startswith("The binary log is off on this server")
    # One change turned down on its own (its row unticked), as a person does.
    rows = page.sections["fit_os"]._checkable or page.sections["redo"]._checkable
    assert rows, "no change to turn down on this host"
    turned_down, row = next(iter(rows.items()))
    row.setCheckState(0, Qt.CheckState.Unchecked)
    chosen = wizard.state.positions
    assert chosen is not None and chosen.memory_share == moved and not chosen.fit_disks
    assert turned_down in chosen.rejected

    # A fact changes on the server between the inspections.
    private_server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    wizard.back()
    wizard.back()
    assert wizard.currentPage() is inspect
    qtbot.waitUntil(inspect.again.isEnabled, timeout=60_000)
    first = wizard.state.facts
    qtbot.mouseClick(inspect.again, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: wizard.state.facts is not None and wizard.state.facts is not first,
        timeout=120_000,
    )
    qtbot.waitUntil(inspect.isComplete, timeout=60_000)
    wizard.next()
    wizard.next()
    assert wizard.currentPage() is page
    qtbot.waitUntil(lambda: wizard.state.plan is not None, timeout=30_000)

    assert memory.value() == moved
    assert not _box(page, "fit_disks").isChecked()
    pos = wizard.state.positions
    assert pos is not None and pos.memory_share == moved and not pos.fit_disks
    assert pos.crash_loss == "os" and crash.value() == 1  # untouched: follows the server
    assert turned_down in pos.rejected
    assert state_plan_lacks(wizard.state.plan, turned_down)
    again = {**page.sections["fit_os"]._checkable, **page.sections["redo"]._checkable}
    assert again[turned_down].checkState(0) == Qt.CheckState.Unchecked
    text = page.since.text()
    assert page.since.isVisible(), text
    assert "innodb_flush_log_at_trx_commit changed from 1 to 2" in text
    assert "slider 1 now starts where the server is" in text
    assert "The slider follows the server" in text
    assert "stays where you put it" in page.sections["memory"].start.text()
    wizard.done(0)


def _binlog_facts(**server: object) -> HostFacts:
    base = HostFacts.from_json(FACTS.read_text())
    assert base.server is not None
    return dataclasses.replace(base, server=dataclasses.replace(base.server, **server))


def test_the_binary_log_choice_is_locked_with_its_reason(qtbot: QtBot) -> None:
    """Slider 7: off already, or used by a replica, the box is disabled and says why."""
    state = WizardState(facts=_binlog_facts(binlog_enabled=False))
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    page.show()
    section = page.sections["binlog"]
    assert section.title() == "7. Keep the binary log?"
    # Off already: no "Keep" box ticked beside it (issue 37), the fact said plainly.
    assert section.control.isHidden()
    assert section.value_label.text().startswith("The binary log is off on this server")
    assert "InnoTune never turns it on" in section.sentence.text()

    used = BinlogUse(replica_hosts=1, dump_threads=1)
    state.facts = _binlog_facts(binlog_enabled=True, binlog_use=used, replicas_connected=1)
    page.initializePage()
    assert not section.control.isEnabled() and not section.control.isHidden()
    assert section.value_label.text() == (
        "Locked: 1 replica is connected and 1 connection reads it now."
    )

    free = BinlogUse(replica_hosts=0, dump_threads=0)
    state.facts = _binlog_facts(binlog_enabled=True, binlog_use=free, replicas_connected=0)
    page.initializePage()
    assert section.control.isEnabled() and _box(page, "binlog").isChecked()
    assert state.plan is not None and state.plan.change("log_bin") is None
    _box(page, "binlog").setChecked(False)
    change = state.plan.change("log_bin")
    assert change is not None and change.proposed == "OFF" and state.plan.restart_needed
    assert "3,795" in change.reason
    assert "goes off at the restart" in section.sentence.text()
