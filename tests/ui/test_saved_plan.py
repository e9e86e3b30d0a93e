"""A plan saved by `innotune plan --out` is reviewed offline: Trade-offs, Preview, Done."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QSlider
from pytestqt.qtbot import QtBot

from app.domain.plan import Plan
from app.ui.pages.preview import PreviewPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.wizard import MainWizard
from tests.ui.wizards import open_wizard

HOSTS = Path(__file__).parents[1] / "fixtures/hosts"
FACTS = HOSTS / "practice-debian12/facts.json"
OTHER_FACTS = HOSTS / "practice-mariadb-10.11/facts.json"
ROOT = Path(__file__).parents[2]


def _saved_plan(folder: Path) -> Path:
    """A plan made by the command line at crash loss "os", its facts saved beside it."""
    folder.mkdir()
    subprocess.run(
        [sys.executable, "-m", "app", "plan", "--facts", str(FACTS), "--crash-loss", "os"]
        + ["--save-facts", str(folder / "facts.json"), "--out", str(folder / "plan.json")],
        check=True,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    return folder / "plan.json"


def _review(qtbot: QtBot, wizard: MainWizard, saved: Plan) -> None:
    """From Connect: the plan's sliders on Trade-offs, its changes on Preview, then Done."""
    wizard.next()
    tradeoffs = wizard.currentPage()
    assert isinstance(tradeoffs, TradeoffsPage)
    crash = tradeoffs.sections["crash_loss"].control
    assert isinstance(crash, QSlider) and crash.value() == 1  # "os", as saved
    assert wizard.state.positions == saved.positions
    assert wizard.state.plan is not None
    assert [c.id for c in wizard.state.plan.changes] == [c.id for c in saved.changes]
    assert "saved plan" in tradeoffs.summary.text() and "nothing can be applied" in (
        tradeoffs.summary.text()
    )
    wizard.next()
    preview = wizard.currentPage()
    assert isinstance(preview, PreviewPage)
    qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)
    rows = {
        preview.values.item(r, 1).text(): preview.values.item(r, 3).text()
        for r in range(preview.values.rowCount())
    }
    assert rows.get("innodb_flush_log_at_trx_commit") == "2"
    wizard.next()
    assert wizard.currentPage().title() == "Done"  # no Apply page offline


def test_a_saved_plan_with_its_facts_beside_it(qtbot: QtBot, tmp_path: Path) -> None:
    path = _saved_plan(tmp_path / "saved")
    saved = Plan.from_json(path.read_text())
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.saved.open_saved_file(path)
    assert wizard.state.mode == "offline" and wizard.state.connection is None
    assert connect.isComplete()
    text = connect.view.message.text()
    assert "Opened the plan plan.json" in text and "Nothing can be applied" in text
    _review(qtbot, wizard, saved)
    wizard.done(0)


def test_a_plan_alone_asks_for_its_own_facts(qtbot: QtBot, tmp_path: Path) -> None:
    made = _saved_plan(tmp_path / "saved")
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    path = Path(shutil.copy(made, alone / "plan.json"))
    saved = Plan.from_json(path.read_text())
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.saved.open_saved_file(path)
    assert not connect.isComplete() and "choose the facts file" in connect.view.message.text()
    connect.saved.open_facts_file(OTHER_FACTS)  # facts of another host: refused for this plan
    assert not connect.isComplete() and "other facts" in connect.view.message.text()
    connect.saved.open_facts_file(FACTS)  # the file the plan was made from (same checksum)
    assert connect.isComplete() and "with its facts" in connect.view.message.text()
    _review(qtbot, wizard, saved)
    wizard.done(0)
