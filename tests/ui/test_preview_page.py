"""The Preview page against a real private server: the drop-in diff in colour, and saving."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from app.access.doctor import DoctorResult
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.words import count
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.budget import current_share
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.ui.hostworker import HostWorker
from app.ui.pages.preview import PreviewPage
from app.ui.state import WizardState

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-mariadb-10.11/facts.json"


def _state(server: PrivateServer) -> WizardState:
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None
    argv = tuple(server.server_argv())
    instance = ServerInstance(
        pid=server.running_pid() or 0,
        binary=argv[0],
        argv=argv,
        user="mysql" if "--user=mysql" in argv else "root",
        sockets=(str(server.socket_path),),
        defaults_file=str(server.main_cnf),
        datadir=str(server.datadir),
        started_by="manual",
    )
    server_facts = dataclasses.replace(
        facts.server, instance=instance, option_files=(str(server.main_cnf),)
    )
    facts = dataclasses.replace(facts, server=server_facts)
    # Never this machine's own kernel or disks: these facts were recorded on a host with the
    # same disk name (vda), and the Apply-page tests apply the plan for real.
    positions = dataclasses.replace(
        default_positions(facts),
        crash_loss="os",
        fit_os=False,
        fit_disks=False,
        # The pool and redo log as they are: these tests apply for real on a private server.
        memory_share=current_share(facts) or 1,
        redo_minutes=None,
    )
    plan = make_plan(facts, positions, default_catalogue())
    connection = DoctorResult(transport=LocalTransport(), instance=instance, sudo_mode="root")
    return WizardState(facts=facts, plan=plan, host=HostWorker(connection))


def test_preview_page_shows_the_diff_in_colour_and_saves(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(private_server)
    page = PreviewPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    qtbot.waitUntil(lambda: state.preview is not None, timeout=60_000)
    assert page.isComplete()
    drop_in = f"{private_server.include_dir}/99-innotune.cnf"
    text = page.diffs.toPlainText()
    assert f"+++ b{drop_in}" in text
    assert "+innodb_flush_log_at_trx_commit = 2" in text
    assert not Path(drop_in).exists()  # a preview writes nothing

    block = page.diffs.document().findBlock(text.index("+innodb_flush_log_at_trx_commit"))
    colours = {r.format.foreground().color().name() for r in block.layout().formats()}
    assert colours == {"#1a7f37"}  # added lines in green

    shown = {
        page.values.item(r, 1).text(): page.values.item(r, 3).text()
        for r in range(page.values.rowCount())
    }
    assert shown["innodb_flush_log_at_trx_commit"] == "2"
    assert "SET GLOBAL innodb_flush_log_at_trx_commit = 2;" in page.commands.toPlainText()
    assert state.plan is not None
    assert {c.path: c.sha256 for c in state.plan.file_checksums}[drop_in] is None

    target = tmp_path / "saved-preview.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    page.save_button.click()
    assert state.preview is not None
    assert target.read_text() == state.preview.text()
    assert "+innodb_flush_log_at_trx_commit = 2" in target.read_text()
    state.connection.close()  # type: ignore[union-attr]


def test_a_change_while_the_preview_builds_is_not_lost(
    qtbot: QtBot, private_server: PrivateServer
) -> None:
    """A new plan (or persisted choice) while a preview builds: the preview shown is the
    newest one's, built once the running task has ended; the stale result is set aside."""
    state = _state(private_server)
    page = PreviewPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    assert page.task is not None and page.task.is_running()
    assert state.facts is not None and state.plan is not None
    positions = dataclasses.replace(state.plan.positions, crash_loss="any")
    state.plan = make_plan(state.facts, positions, default_catalogue())
    page.start()  # while the first one still builds
    qtbot.waitUntil(lambda: state.preview is not None, timeout=60_000)
    text = page.diffs.toPlainText()
    assert "+innodb_flush_log_at_trx_commit = 0" in text, text
    assert "+innodb_flush_log_at_trx_commit = 2" not in text
    qtbot.waitUntil(page.refresh_button.isEnabled)


def test_ticking_the_restart_shows_what_apply_does(
    qtbot: QtBot, private_server: PrivateServer
) -> None:
    """Restart ticked: no SET GLOBAL the restart applies, the restart command listed, and the
    plan's warnings on the Warnings tab (issue 26: Preview said "0 command(s)" and
    "No warnings." while Apply restarted with systemctl and Trade-offs warned)."""
    state = _state(private_server)
    assert state.facts is not None and state.facts.server is not None and state.plan is not None
    # As a server under systemd (the preview only names the restart; nothing runs).
    server = dataclasses.replace(
        state.facts.server,
        instance=dataclasses.replace(
            state.facts.server.instance, started_by="systemd", service="mariadb.service"
        ),
    )
    state.facts = dataclasses.replace(state.facts, server=server)
    assert state.plan.warnings  # the MyISAM table of the recorded facts
    page = PreviewPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    qtbot.waitUntil(lambda: state.preview is not None, timeout=60_000)
    assert state.preview is not None and not state.preview.restart_needed
    live = page.commands.toPlainText()
    assert "SET GLOBAL innodb_flush_log_at_trx_commit = 2;" in live
    assert "systemctl" not in live
    for warning in state.plan.warnings:
        assert warning in page.warnings.toPlainText()
    assert "No warnings." not in page.warnings.toPlainText()

    page.restart_box.setChecked(True)
    ticked = page.commands.toPlainText()
    assert "SET GLOBAL innodb_flush_log_at_trx_commit" not in ticked
    assert "not set live, the restart applies them from the option files" in ticked
    assert "systemctl restart mariadb.service" in ticked
    effective = page.effective_preview()
    assert effective is not None and effective.restart is not None
    assert count(len(effective.commands), "command") in page.status.text()
    assert len(effective.commands) >= 1

    page.restart_box.setChecked(False)
    assert page.commands.toPlainText() == live
    state.connection.close()  # type: ignore[union-attr]
