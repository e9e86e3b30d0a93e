"""The Exercises window from the wizard: one exercise run for real on a practice server.

XDG_DATA_HOME points into the test's directory, so the practice server the window starts
is a fresh one there, never the user's.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard
from pytestqt.qtbot import QtBot

from app.exercises.model import ExerciseCancelled, ExerciseResult, load_texts
from app.exercises.powercut import recorded
from app.practice.binaries import find_binaries
from app.practice.practice import PracticeServer
from app.practice.server import PrivateServer
from app.ui.exercises import ExercisesDialog, scratch_lab
from app.ui.wizard import MainWizard
from tests.hosts.util import need


@pytest.fixture
def practice_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    need(find_binaries() is not None, "no MariaDB/MySQL server programs installed")
    # Short: the socket path under it must fit the 107 bytes of a Unix socket address.
    home = Path(tempfile.mkdtemp(prefix="itx-"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    from app.places import default_practice_dir

    base = default_practice_dir()
    try:
        yield base
    finally:
        PracticeServer(base).stop()
        shutil.rmtree(home, ignore_errors=True)


def test_every_exercise_has_a_tab_with_its_introduction(qtbot: QtBot) -> None:
    dialog = ExercisesDialog()
    qtbot.addWidget(dialog)
    titles = [dialog.chooser.item(i).text() for i in range(dialog.chooser.count())]
    assert titles == [t.title for t in load_texts()]
    assert len(titles) >= 5
    for panel in dialog.panels.values():
        assert panel.intro.text() and panel.start_button.isEnabled()


def test_restart_exercise_runs_from_the_wizard_and_shows_its_result(
    qtbot: QtBot, practice_home: Path
) -> None:
    wizard = MainWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    assert wizard.button(QWizard.WizardButton.CustomButton2).text() == "&Exercises"
    wizard.customButtonClicked.emit(QWizard.WizardButton.CustomButton2.value)
    dialog = wizard.exercises_dialog
    assert isinstance(dialog, ExercisesDialog) and dialog.isVisible()
    panel = dialog.panels["restart"]
    dialog.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.finished, timeout=240_000) as finished:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        assert not panel.start_button.isEnabled()
    result = finished.args[0]
    assert isinstance(result, ExerciseResult), result
    qtbot.waitUntil(panel.start_button.isEnabled)
    # Live progress came from the worker, then the table, the chart and the explanation.
    assert "Starting the practice server" in panel.progress.toPlainText()
    assert "Clients could not log in" in panel.progress.toPlainText()
    assert panel.table.rowCount() == 4
    assert panel.table.item(2, 0).text().startswith("client-visible downtime")
    assert panel.chart.series_names() == ["seconds"]
    assert "Clients could not log in for" in panel.happened.text()
    assert not panel.recorded.isVisible()
    assert (practice_home / "data").is_dir()  # it ran on the practice server under the test's home
    dialog.close()


def test_stop_ends_an_exercise_after_its_current_step(qtbot: QtBot) -> None:
    """Stop during the first crash level: that level finishes, the next ones never start."""
    need(find_binaries() is not None, "no MariaDB/MySQL server programs installed")
    base = Path(tempfile.mkdtemp(prefix="itx-"))
    try:
        dialog = ExercisesDialog(
            lab_factory=scratch_lab(base / "server", base), scale={"crash": {"seconds": 1.0}}
        )
        qtbot.addWidget(dialog)
        panel = dialog.panels["crash"]
        with qtbot.waitSignal(panel.finished, timeout=120_000) as finished:
            panel.start_button.click()
            qtbot.waitUntil(lambda: "writing for" in panel.progress.toPlainText(), timeout=60_000)
            panel.stop_button.click()
        assert isinstance(finished.args[0], ExerciseCancelled)
        assert panel.happened.text().startswith("Stopped.")
        assert "trx_commit=2" not in panel.progress.toPlainText()
        qtbot.waitUntil(panel.start_button.isEnabled)
    finally:
        PrivateServer(base / "server").stop()
        shutil.rmtree(base, ignore_errors=True)


def test_a_rerun_clears_the_last_result_at_once_and_the_axis_ticks_are_round(
    qtbot: QtBot,
) -> None:
    need(find_binaries() is not None, "no MariaDB/MySQL server programs installed")
    base = Path(tempfile.mkdtemp(prefix="itx-"))
    try:
        dialog = ExercisesDialog(
            lab_factory=scratch_lab(base / "server", base),
            scale={"restart": {"dirty_seconds": 1.0}},
        )
        qtbot.addWidget(dialog)
        panel = dialog.panels["restart"]
        assert panel.intro.text().endswith("It takes about 5 s.")
        panel.show_result(recorded())  # a last result on screen: commits in the thousands
        assert panel.table.rowCount() == 2 and panel.chart.series_names()
        labels = panel.chart.axis_labels()
        assert labels and all(re.fullmatch(r"\d+", x) for x in labels), labels
        assert len({int(x) % (int(labels[1]) or 1) for x in labels}) == 1  # one round step
        with qtbot.waitSignal(panel.finished, timeout=240_000) as finished:
            panel.start_button.click()
            # At once: none of the last run's numbers while the new ones are measured.
            assert panel.table.isHidden() and panel.table.rowCount() == 0
            assert panel.chart.isHidden() and panel.chart.series_names() == []
        assert isinstance(finished.args[0], ExerciseResult), finished.args[0]
        assert panel.table.rowCount() == 4 and not panel.table.isHidden()
        assert all(re.fullmatch(r"\d+\.\d{1,2}", x) for x in panel.chart.axis_labels())
        qtbot.waitUntil(panel.start_button.isEnabled)
    finally:
        PrivateServer(base / "server").stop()
        shutil.rmtree(base, ignore_errors=True)
