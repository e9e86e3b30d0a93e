"""The Apply page against a real private server: apply from the wizard, then roll back."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.practice.server import PrivateServer
from app.ui.hostworker import Progress
from app.ui.logview import LOG_LINK
from app.ui.pages.apply import ApplyPage
from app.ui.pages.preview import PreviewInputs, make_preview
from tests.hosts.util import need_root
from tests.integration.test_apply import _remove_new_jobs_and_snapshots  # noqa: F401 - autouse
from tests.ui.test_preview_page import _state


def _tree(directory: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def open_apply_page(qtbot: QtBot, server: PrivateServer) -> ApplyPage:
    """The Apply page for a plan on ``server``, its preview built as the Preview page does."""
    state = _state(server)
    assert state.plan is not None
    state.preview = make_preview(
        state.connection,  # type: ignore[arg-type]
        PreviewInputs(state.plan, state.facts),  # type: ignore[arg-type]
        Progress(lambda _t: None, lambda _o: None),
    )
    page = ApplyPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    # These tests are about the apply itself: no benchmark around it (the whole-flow test
    # measures before and after).
    page.measure_box.setChecked(False)
    return page


def test_apply_then_roll_back_from_the_page(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    before = _tree(server.base / "etc")
    page = open_apply_page(qtbot, server)
    assert "No restart needed" in page.summary.text()
    assert not page.apply_button.isEnabled()  # nothing happens without consent
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status is not None and page.status.state == "applied", page.state_label.text()
    assert "✓ verify" in page.journal.toPlainText()
    assert server.query("SELECT @@innodb_flush_log_at_trx_commit").split()[-1] == "2"
    # Verify's "before" now would measure the changed server: the wizard knows the changes
    # are in force.
    assert page.state.changes_in_force == page.status.snapshot_id is not None
    # Complete once the worker's thread has ended (and while the list is read again after it).
    qtbot.waitUntil(page.isComplete)
    # Applied: the same plan is not offered again, and the consent given for it is used up.
    assert not page.consent.isChecked()
    page.consent.setChecked(True)
    assert not page.apply_button.isEnabled()
    # Nothing failed: no server log lines (a start-up's notes would only alarm).
    assert "Server log" not in page.state_label.text(), page.state_label.text()

    qtbot.waitUntil(page.rollback_button.isEnabled)
    page.rollback_button.click()
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.mode == "restore", timeout=120_000
    )
    assert page.status.state == "rolled-back", page.state_label.text()
    assert server.query("SELECT @@innodb_flush_log_at_trx_commit").split()[-1] == "1"
    assert page.state.changes_in_force is None
    assert _tree(server.base / "etc") == before
    # A restore that worked reads as success, not as "rolled-back".
    shown = page.state_label.text()
    assert shown.startswith(f"Restored snapshot {page.status.snapshot_id}: the old settings"), shown
    assert "rolled-back" not in shown and LOG_LINK not in shown, shown
    # Rolled back: the plan may be applied again.
    qtbot.waitUntil(page.apply_button.isEnabled)

    qtbot.waitUntil(page.list_button.isEnabled)
    page.list_button.click()
    qtbot.waitUntil(lambda: page.snapshots.count() > 0, timeout=30_000)
    # Other test sessions on this host add snapshots of their own at any moment.
    ids = [page.snapshots.item(i).data(256) for i in range(page.snapshots.count())]
    assert page.status.snapshot_id in ids

    # Another plan: the last job's words, its status and the consent go with the old one.
    qtbot.waitUntil(page.list_button.isEnabled)  # the list read to its end
    plan = page.state.plan
    assert plan is not None
    page.state.plan = dataclasses.replace(plan, changes=plan.changes[:0])
    page.initializePage()
    assert page.state_label.text() == "" and page.journal.toPlainText() == ""
    assert page.status is None and not page.consent.isChecked()
    assert not page.rollback_button.isEnabled() and not page.apply_button.isEnabled()
