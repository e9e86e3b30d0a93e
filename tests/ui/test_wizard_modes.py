"""The wizard's other ways in: restore a snapshot from the start, review a saved facts file."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.jobs import runner
from app.places import local_snapshot_dir
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.ui.hostworker import Progress
from app.ui.pages.apply import ApplyPage
from app.ui.pages.preview import PreviewInputs, PreviewPage, make_preview
from app.ui.pages.tradeoffs import TradeoffsPage
from tests.hosts.util import need_root
from tests.integration.test_apply import _remove_new_jobs_and_snapshots  # noqa: F401 - autouse
from tests.ui.test_preview_page import _state
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


def test_restore_a_snapshot_straight_from_connect(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    # An earlier apply, made without the wizard: trx_commit 1 → 2.
    state = _state(server)
    assert state.plan is not None and state.facts is not None and state.facts.server is not None
    preview = make_preview(
        state.connection,  # type: ignore[arg-type]
        PreviewInputs(state.plan, state.facts),  # type: ignore[arg-type]
        Progress(lambda _t: None, lambda _o: None),
    )
    transport = LocalTransport()
    done = runner.apply(
        transport,
        preview.actions,
        state.facts.server,
        target_label=transport.label,
        local_dir=local_snapshot_dir(transport.label),
        plan_json=state.plan.to_json(),
    )
    assert state.connection is not None
    state.connection.close()
    assert done.state == "applied" and done.snapshot_id is not None
    assert server.query("SELECT @@innodb_flush_log_at_trx_commit").split()[-1] == "2"

    wizard, connect = open_wizard(qtbot, tmp_path)
    v = connect.view
    v.restore.setChecked(True)
    v.local.setChecked(True)
    v.instance.setText(str(server.socket_path))
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    assert "choose the snapshot" in v.message.text()
    wizard.next()
    apply = wizard.currentPage()
    assert isinstance(apply, ApplyPage)
    assert not apply.apply_button.isVisible() and not apply.consent.isVisible()
    assert "Choose a snapshot" in apply.summary.text()
    qtbot.waitUntil(lambda: apply.snapshots.count() > 0, timeout=60_000)
    ids = [apply.snapshots.item(i).data(256) for i in range(apply.snapshots.count())]
    apply.snapshots.setCurrentRow(ids.index(done.snapshot_id))
    # The list shows on the worker's result; the button once its thread has ended.
    qtbot.waitUntil(apply.restore_button.isEnabled)
    asked: list[object] = []
    apply.ask_restore = lambda choice, _id="": asked.append(choice) or True  # type: ignore[method-assign]
    apply.restore_button.click()
    assert len(asked) == 1  # a restore restarts the server: it asks first
    qtbot.waitUntil(
        lambda: apply.status is not None and apply.status.mode == "restore", timeout=120_000
    )
    assert apply.status is not None and apply.status.state == "rolled-back"
    assert server.query("SELECT @@innodb_flush_log_at_trx_commit").split()[-1] == "1"
    qtbot.waitUntil(apply.isComplete)
    wizard.next()
    assert wizard.currentPage().title() == "Done"
    wizard.back()
    assert wizard.currentPage() is apply
    wizard.done(0)


def test_saved_facts_file_reviewed_offline(qtbot: QtBot, tmp_path: Path) -> None:
    wizard, connect = open_wizard(qtbot, tmp_path)
    assert not connect.isComplete()
    connect.saved.open_facts_file(FACTS)
    assert wizard.state.mode == "offline" and wizard.state.connection is None
    assert connect.isComplete() and "10.11" in connect.view.message.text()
    wizard.next()
    tradeoffs = wizard.currentPage()
    assert isinstance(tradeoffs, TradeoffsPage)
    tradeoffs.sections["crash_loss"].control.setValue(1)  # type: ignore[attr-defined]
    wizard.next()
    preview = wizard.currentPage()
    assert isinstance(preview, PreviewPage)
    qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)
    keys = [preview.values.item(r, 1).text() for r in range(preview.values.rowCount())]
    assert "innodb_flush_log_at_trx_commit" in keys
    wizard.next()
    assert wizard.currentPage().title() == "Done"  # nothing to apply without a server
    wizard.done(0)


def test_a_file_that_is_not_facts_is_refused(qtbot: QtBot, tmp_path: Path) -> None:
    wizard, connect = open_wizard(qtbot, tmp_path)
    bad = tmp_path / "plan.txt"
    bad.write_text("not json")
    connect.saved.open_facts_file(bad)
    assert not connect.isComplete() and "could not be read" in connect.view.message.text()
    wizard.done(0)
