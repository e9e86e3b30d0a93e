"""The Preview page on the real MySQL 9.7: a value SET PERSIST keeps is the person's choice.

Over SSH to the booted sid host: with innodb_flush_log_at_trx_commit persisted, the page
shows the choice, the preview holds RESET PERSIST, and picking the other answer builds the
preview again with SET PERSIST_ONLY. Without a persisted value the choice stays hidden.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.domain.target import ConnectOptions, parse_target
from app.inspect.inspection import inspect
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.budget import current_share
from app.remote.connect import open_transport
from app.ui.hostworker import HostWorker
from app.ui.pages.preview import PreviewPage
from app.ui.state import WizardState
from tests.hosts.debian_hosts import DebianHost

TRX = "innodb_flush_log_at_trx_commit"


@pytest.fixture
def sid(debian_hosts: dict[str, DebianHost]) -> Iterator[DebianHost]:
    host = debian_hosts["sid"]
    yield host
    host.sql("RESET PERSIST")
    (host.datadir / "mysqld-auto.cnf").unlink(missing_ok=True)  # the booted host had none
    assert not host.differences()


def _state(host: DebianHost, tmp_path: Path) -> WizardState:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(host.known_hosts_line())
    target = parse_target(
        host.target, ConnectOptions(identity=str(host.client_key), known_hosts=str(known_hosts))
    )
    result = DoctorResult()
    steps = list(
        run_doctor(target, Secrets(), result, opener=open_transport, own_known_hosts=tmp_path)
    )
    assert result.ok, [s.line() for s in steps]
    assert result.transport and result.instance and result.session
    facts = inspect(
        result.transport, result.instances, result.instance, result.session, sample_seconds=0
    )
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
    return WizardState(target=target, facts=facts, plan=plan, host=HostWorker(result))


def _built(qtbot: QtBot, page: PreviewPage) -> str:
    qtbot.waitUntil(lambda: page.state.preview is not None, timeout=120_000)
    return page.commands.toPlainText()


def test_the_choice_shows_only_for_persisted_values_and_rebuilds_the_preview(
    qtbot: QtBot, sid: DebianHost, tmp_path: Path
) -> None:
    state = _state(sid, tmp_path)
    page = PreviewPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()
    assert f"SET GLOBAL {TRX} = 2" in _built(qtbot, page)
    assert page.persisted_box.isHidden()  # nothing persisted yet

    sid.sql(f"SET PERSIST {TRX} = 1")
    qtbot.waitUntil(page.refresh_button.isEnabled)  # as a person sees it: enabled once done
    page.refresh_button.click()
    commands = _built(qtbot, page)
    assert f"RESET PERSIST IF EXISTS {TRX}" in commands, commands
    assert page.persisted_box.isVisible() and page.persisted_box.currentData() == "reset"
    assert "mysqld-auto.cnf" in page.diffs.toPlainText()  # the note beside the drop-in

    page.persisted_box.setCurrentIndex(page.persisted_box.findData("persist"))
    commands = _built(qtbot, page)
    assert f"SET PERSIST_ONLY {TRX} = 2" in commands, commands
    assert state.persisted == "persist"
    assert state.connection is not None
    state.connection.close()
