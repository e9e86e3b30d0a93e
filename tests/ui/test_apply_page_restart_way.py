"""The Apply page says how the server restarts, and asks before restoring a snapshot.

Facts recorded on the practice server (started by hand), and the same with the instance
found under systemd or a SysV script (as the Debian hosts run it): the restart command box
is asked for only when no service manager runs the server. Restore selected asks first (a
restore may restart the server); No does nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import QListWidgetItem
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.flows import snapshots
from app.jobs.snapshot import SavedValue, Snapshot
from app.ui.pages.apply import ApplyPage
from app.ui.pages.snapshot_list import restore_question
from app.ui.state import WizardState

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _facts(started_by: str = "manual", service: str | None = None) -> HostFacts:
    facts = HostFacts.from_json((HOSTS / "practice-mariadb-10.11" / "facts.json").read_text())
    assert facts.server is not None and facts.server.instance.started_by == "manual"
    instance = dataclasses.replace(facts.server.instance, started_by=started_by, service=service)
    return dataclasses.replace(facts, server=dataclasses.replace(facts.server, instance=instance))


def _page(qtbot: QtBot, facts: HostFacts) -> ApplyPage:
    page = ApplyPage(WizardState(mode="restore", facts=facts))
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    return page


def test_a_server_run_by_systemd_is_restarted_by_it_no_empty_box(qtbot: QtBot) -> None:
    page = _page(qtbot, _facts("systemd", "mariadb.service"))
    assert not page.restart_edit.isVisible()
    assert "systemd restarts the server: systemctl restart mariadb.service" in (
        page.restart_note.text()
    )
    assert not page.restart_edit.hasFocus()


def test_a_sysv_script_is_named_too(qtbot: QtBot) -> None:
    page = _page(qtbot, _facts("sysv", "mysql"))
    assert not page.restart_edit.isVisible()
    assert "its init script restarts the server: /etc/init.d/mysql restart" in (
        page.restart_note.text()
    )


def test_a_server_started_by_hand_asks_for_its_restart_command(qtbot: QtBot) -> None:
    page = _page(qtbot, _facts())
    assert page.restart_edit.isVisible()
    assert "No service manager runs this server" in page.restart_note.text()


def test_restore_selected_asks_first_and_no_changes_nothing(qtbot: QtBot) -> None:
    page = _page(qtbot, _facts("systemd", "mariadb.service"))
    item = QListWidgetItem("20260101-000000-abcdef  applied")
    item.setData(256, "20260101-000000-abcdef")
    page.snapshots.addItem(item)
    page.snapshots.setCurrentItem(item)
    asked: list[tuple[object, str]] = []

    def answer(choice: object, snapshot_id: str = "") -> bool:
        asked.append((choice, snapshot_id))
        return False

    page.ask_restore = answer  # type: ignore[method-assign]
    page._on_restore_clicked()
    assert asked == [(None, "20260101-000000-abcdef")]
    assert page.task is None  # nothing ran: no job, no restart
    assert "was not restored; nothing was changed" in page.state_label.text()


def test_the_restore_question_shows_sizes_in_words(qtbot: QtBot) -> None:
    """The question before a restore reads "back to 128 MiB", never "back to 134217728"."""
    taken = Snapshot(
        id="20260101-000000-abcdef",
        created="2026-01-01T00:00:00Z",
        target="sid",
        instance={"key": "k", "datadir": "/var/lib/mysql"},
        files=(),
        values=(
            SavedValue("variable", "innodb_buffer_pool_size", "134217728"),
            SavedValue("variable", "innodb_flush_log_at_trx_commit", "1"),
        ),
    )
    choice = snapshots.choose_rollback([snapshots.Record(taken, "applied")], "k", taken.id)
    asked = restore_question(choice, taken.id, ["systemctl", "restart", "mysql.service"])
    assert "innodb_buffer_pool_size: back to 128 MiB" in asked, asked
    assert "innodb_flush_log_at_trx_commit: back to 1" in asked, asked
    assert "134217728" not in asked, asked
