"""The default path, clicked as a new user would: launch to a verified change in at most 8 clicks.

On the practice server (the Connect page's default), with no typing: Check, Next (Inspect),
Next (the Recommendation), the consent box, Apply this, then Next to Verify once the apply
and its "Measure before and after" (ticked by default on a quiet server) are done. Every
click is a real mouse click through one helper that counts it. The change is read back from
the running server, and the Verify page shows a verdict per run; Back then retraces the path,
and the preview is one click away from the Recommendation.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QWizard
from pytestqt.qtbot import QtBot

from app.flows.measure import MeasureOptions
from app.practice.practice import PracticeServer
from app.ui.pages import apply as apply_module
from app.ui.pages.apply import ApplyPage
from app.ui.pages.recommend import RecommendPage
from app.ui.pages.verify import VERDICT, VerifyPage
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
)
from tests.ui.wizards import open_wizard
from tests.verdicts import STARTS

MOST_CLICKS = 8


class Clicks:
    """Real mouse clicks on enabled, visible buttons, counted."""

    def __init__(self, qtbot: QtBot) -> None:
        self.qtbot = qtbot
        self.count = 0

    def click(self, button: QAbstractButton) -> None:
        assert button.isVisible() and button.isEnabled(), button.text()
        # A check box takes clicks on its box and words only, not across its whole width.
        pos = QPoint(8, button.height() // 2) if isinstance(button, QCheckBox) else QPoint()
        self.qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=pos)
        self.count += 1


def test_default_path_on_the_practice_server_in_at_most_8_clicks(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))

    # Shorter benchmarks than a person's (their length is the benchmark tests' business): the
    # path and its clicks are the same.
    def short(**kwargs: Any) -> MeasureOptions:
        return MeasureOptions(**{**kwargs, "seconds": 1.0})

    monkeypatch.setattr(apply_module, "MeasureOptions", short)
    started = time.monotonic()
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.practice_dir = tmp_path / "practice"
    clicks = Clicks(qtbot)
    next_button = wizard.button(QWizard.WizardButton.NextButton)
    try:
        assert connect.view.practice.isChecked()  # the default: nothing to choose or type
        clicks.click(connect.view.check)
        qtbot.waitUntil(connect.isComplete, timeout=120_000)

        inspect = wizard.pages["Inspect"]
        inspect.sample.setValue(1)  # a short sample keeps the test short; not a click
        clicks.click(next_button)
        assert wizard.currentPage() is inspect
        qtbot.waitUntil(inspect.isComplete, timeout=120_000)

        clicks.click(next_button)
        rec = wizard.currentPage()
        assert isinstance(rec, RecommendPage)
        assert rec.recommendation is not None and rec.recommendation.changes
        text = rec.text.text()
        assert "For the practice server" in text and "What it risks:</b> Nothing" in text, text
        plan = wizard.state.plan
        assert plan is not None
        change = next(c for c in plan.changes if c.target == "dynamic")
        assert not rec.apply_button.isEnabled()  # no consent yet
        clicks.click(rec.consent)
        assert rec.consent.isChecked() and wizard.state.consented()
        qtbot.waitUntil(rec.apply_button.isEnabled, timeout=60_000)  # the preview is built
        clicks.click(rec.apply_button)
        applying = time.monotonic()

        apply = wizard.currentPage()
        assert isinstance(apply, ApplyPage)
        assert apply.measure_box.isChecked()  # on by default: the practice server is quiet
        assert apply.task is not None  # Apply this started the apply
        qtbot.waitUntil(lambda: not apply.task.is_running(), timeout=300_000)  # type: ignore[union-attr]
        qtbot.waitUntil(apply.isComplete, timeout=60_000)
        assert apply.status is not None and apply.status.state == "applied", (
            apply.state_label.text()
        )
        assert not apply.consent.isChecked()  # a consent is for one apply
        assert not apply.apply_button.isEnabled()

        # In force: the running server's own value.
        practice = PracticeServer(tmp_path / "practice")
        live = practice.server.query(f"SELECT @@GLOBAL.{change.key}").split()[-1]
        assert live == change.proposed, (change.key, live, change.proposed)

        clicks.click(next_button)
        verify = wizard.currentPage()
        assert isinstance(verify, VerifyPage)
        rows = verify.table.rowCount()
        assert rows > 0
        verdicts = [verify.table.item(row, VERDICT).text() for row in range(rows)]
        assert all(v.startswith(STARTS) for v in verdicts), verdicts

        assert clicks.count <= MOST_CLICKS, clicks.count

        # Back retraces the path taken: Apply, then the Recommendation, whose consent went
        # with the apply it was given for.
        wizard.back()
        assert wizard.currentPage() is apply
        wizard.back()
        assert wizard.currentPage() is rec
        assert not rec.consent.isChecked() and not rec.apply_button.isEnabled()
        # The preview is one click away, and Back comes back here.
        rec.preview_button.click()
        assert wizard.currentPage() is wizard.pages["Preview"]
        wizard.back()
        assert wizard.currentPage() is rec
        print(
            f"\ndefault path: {clicks.count} clicks, {time.monotonic() - started:.1f} s "
            f"({time.monotonic() - applying:.1f} s from Apply this)"
        )
        wizard.done(0)
    finally:
        PracticeServer(tmp_path / "practice").stop()
