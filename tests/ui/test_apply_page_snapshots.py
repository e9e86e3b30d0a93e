"""The Apply page's snapshot list: per instance, with states, newest first, always current.

Two real private servers on this machine: one the wizard is connected to (A), another
(B) with a snapshot of its own. The list shows the snapshot an apply just took without
List snapshots being pressed, and a restore of B's snapshot from A's page asks first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.jobs import history, runner
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.ui.pages.apply import ApplyPage
from tests.hosts.util import need_root
from tests.integration.test_apply import (  # noqa: F401 - autouse fixture
    _remove_new_jobs_and_snapshots,
    drop_in,
    facts_for,
    restart_argv,
    run_job,
)
from tests.ui.test_apply_page import _tree, open_apply_page


def rows(page: ApplyPage) -> list[tuple[str, str | None, str | None]]:
    """(text, snapshot id or None for a heading, state) of every row, top to bottom."""
    found = []
    for i in range(page.snapshots.count()):
        item = page.snapshots.item(i)
        found.append((item.text(), item.data(256), item.data(257)))
    return found


def group(page: ApplyPage, datadir: Path) -> tuple[str, list[tuple[str, str]]]:
    """The heading naming ``datadir`` and its rows' (id, state), in the order shown."""
    shown = rows(page)
    start = next(
        i for i, (text, ident, _s) in enumerate(shown) if ident is None and str(datadir) in text
    )
    mine = []
    for _text, ident, state in shown[start + 1 :]:
        if ident is None:
            break
        mine.append((str(ident), str(state)))
    return shown[start][0], mine


def test_the_list_shows_each_instance_with_states_newest_first_and_the_snapshot_just_taken(
    qtbot: QtBot,
    private_server: PrivateServer,
    private_servers: list[PrivateServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    a = private_server
    b = PrivateServer(tmp_path / "server-b")
    private_servers.append(b)
    b.start()
    local = LocalTransport()
    # A: an earlier change, rolled back. B: a change in force.
    a_facts = facts_for(local, str(a.socket_path))
    earlier = run_job(
        local,
        a_facts,
        [drop_in(a, "[mysqld]\n# earlier\n")],
        tmp_path,
        restart_argv=restart_argv(a),
    )
    assert earlier.state == "applied", earlier.errors
    assert runner.rollback(local, earlier.snapshot_id or "").state == "rolled-back"
    b_etc = _tree(b.base / "etc")
    on_b = run_job(
        local,
        facts_for(local, str(b.socket_path)),
        [drop_in(b, "[mysqld]\n# b\n")],
        tmp_path,
        restart_argv=restart_argv(b),
    )
    assert on_b.state == "applied", on_b.errors
    b_after = _tree(b.base / "etc")
    assert b_after != b_etc

    a_before = _tree(a.base / "etc")
    page = open_apply_page(qtbot, a)
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status is not None and page.status.state == "applied", page.state_label.text()
    just_taken = page.status.snapshot_id
    # Without pressing List snapshots: the new one is there, first under this server.
    qtbot.waitUntil(
        lambda: any(ident == just_taken for _t, ident, _s in rows(page)), timeout=60_000
    )
    assert page.list_button.isEnabled() or page._refreshing
    heading, mine = group(page, a.datadir)
    assert heading.startswith("This server: ") and f"--defaults-file={a.main_cnf}" in heading
    assert mine[:2] == [(just_taken, "applied"), (earlier.snapshot_id, "rolled-back")]
    b_heading, theirs = group(page, b.datadir)
    assert b_heading.startswith("Instance ") and theirs == [(on_b.snapshot_id, "applied")]
    assert "applied" in next(t for t, ident, _s in rows(page) if ident == just_taken)
    assert f"Job {just_taken}: applied." in page.state_label.text()  # the outcome stays shown

    # Rolled back from the page: the list follows by itself.
    qtbot.waitUntil(page.rollback_button.isEnabled, timeout=60_000)
    page.rollback_button.click()
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.mode == "restore", timeout=120_000
    )
    assert page.status.state == "rolled-back", page.state_label.text()
    qtbot.waitUntil(lambda: group(page, a.datadir)[1][0][1] == "rolled-back", timeout=60_000)
    assert _tree(a.base / "etc") == a_before

    # Restoring B's snapshot from A's page asks, and says why; No changes nothing.
    asked: list[history.RollbackChoice] = []

    def answer(choice: history.RollbackChoice | None, _snapshot_id: str = "") -> bool:
        assert choice is not None
        asked.append(choice)
        return False

    monkeypatch.setattr(page, "ask_restore", answer)
    qtbot.waitUntil(page.list_button.isEnabled, timeout=60_000)
    row = next(i for i, (_t, ident, _s) in enumerate(rows(page)) if ident == on_b.snapshot_id)
    page.snapshots.setCurrentRow(row)
    page.restore_button.click()
    assert len(asked) == 1 and "another server instance" in asked[0].caveats[0]
    assert "not restored" in page.state_label.text()
    assert _tree(b.base / "etc") == b_after
    # A heading is not a choice.
    heading_row = next(i for i, (_t, ident, _s) in enumerate(rows(page)) if ident is None)
    assert page.snapshots.item(heading_row).flags() == Qt.ItemFlag.NoItemFlags
    assert history.list_records(local)  # the target's record is readable as the page read it
