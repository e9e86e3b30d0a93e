"""The session log (Log…) holds every step a person starts: apply, restore, benchmark.

Real work on a private server: an apply and its rollback from the Apply page, and a short
benchmark on the host's worker. Each shows up in the log file with its journal steps and
how it ended; a secret said by a task reaches the file masked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.access.doctor import Secrets
from app.domain.redact import MASK, register_secret
from app.logsetup import setup_logging
from app.practice.server import PrivateServer
from app.ui.hostworker import HostWorker, Progress, Task
from app.ui.pages.verify import BenchInputs, run_bench
from tests.hosts.util import need_root
from tests.ui.test_apply_page import open_apply_page
from tests.ui.wizards import open_wizard

PLANTED = "planted-Secret-0815"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """The log file as the program sets it up; the handler is removed afterwards."""
    root = logging.getLogger()
    before = list(root.handlers)
    path = setup_logging(tmp_path / "logs")
    yield path
    for handler in root.handlers:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def _flush() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


def test_apply_and_rollback_steps_are_in_the_session_log(
    qtbot: QtBot,
    private_server: PrivateServer,
    tmp_path: Path,
    log_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    page = open_apply_page(qtbot, private_server)
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status is not None and page.status.state == "applied", page.state_label.text()
    applied = page.status.job_id
    qtbot.waitUntil(page.rollback_button.isEnabled, timeout=60_000)
    page.rollback_button.click()
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.mode == "restore" and page.status.final,
        timeout=120_000,
    )
    assert page.status.state == "rolled-back", page.state_label.text()
    qtbot.waitUntil(lambda: page.task is None or not page.task.is_running(), timeout=60_000)
    _flush()
    text = log_file.read_text()
    assert "apply on " in text and "apply: verify ok" in text
    assert f"apply: finished (job {applied}: applied)" in text
    assert "rollback on " in text and "rolled-back)" in text


def test_a_benchmark_and_what_tasks_say_are_in_the_session_log(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, log_file: Path
) -> None:
    need_root()
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.view.local.setChecked(True)
    connect.view.instance.setText(str(private_server.socket_path))
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    host = wizard.state.host
    assert host is not None and wizard.state.target is not None
    inputs = BenchInputs(
        wizard.state.target,
        Secrets(),
        "before",
        seconds=1,
        threads=1,
        use_sysbench=False,
        rate=None,
    )
    bench = host.submit(Task("benchmark", run_bench, inputs), connect)
    qtbot.waitUntil(lambda: not bench.is_running(), timeout=300_000)

    # A task that says a secret: the log file shows it masked.
    register_secret(PLANTED)

    def says_a_secret(_conn: object, _inputs: object, progress: Progress) -> None:
        progress.say(f"logging in with {PLANTED}")

    worker = HostWorker(name="local")
    told = worker.submit(Task("login", says_a_secret, inputs), connect)
    qtbot.waitUntil(lambda: not told.is_running(), timeout=30_000)
    worker.stop()
    wizard.done(0)
    _flush()
    text = log_file.read_text()
    assert "benchmark on " in text and "benchmark: finished" in text
    assert text.count("benchmark: ") >= 3  # what it ran, step by step, not only its end
    assert PLANTED not in text and f"login: logging in with {MASK}" in text


def test_the_plan_a_person_chose_is_in_the_session_log(qtbot: QtBot, log_file: Path) -> None:
    """Next on Trade-offs logs the plan chosen: its changes and where the sliders stood."""
    from app.domain.hostfacts import HostFacts
    from app.ui.pages.tradeoffs import TradeoffsPage
    from app.ui.state import WizardState

    sid = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7/facts.json"
    state = WizardState(facts=HostFacts.from_json(sid.read_text()))
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    assert state.plan is not None
    assert page.validatePage()
    _flush()
    text = log_file.read_text()
    assert "plan chosen: " in text and "innodb_buffer_pool_size -> " in text, text
    assert "crash_loss='none'" in text
