"""Choosing the kind of target moves no field under the pointer (issue 37).

The walk saw every field jump up about 34 px when "Another computer over SSH" was chosen:
the practice server's note was hidden. Each kind now has its note in the same place, with
room kept for the tallest.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.ui.wizards import open_wizard


def test_choosing_ssh_or_this_computer_moves_no_field(qtbot: QtBot, tmp_path: Path) -> None:
    wizard, page = open_wizard(qtbot, tmp_path)
    view = page.view
    fields = (view.host, view.user, view.mysql_user, view.check, view.steps)

    def places() -> list[QPoint]:
        QApplication.processEvents()  # laid out as it is shown
        return [w.mapTo(wizard, QPoint(0, 0)) for w in fields]

    qtbot.waitUntil(view.practice_note.isVisible)
    first = places()
    assert view.practice.isChecked() and "private MariaDB" in view.practice_note.text()
    for button, says in ((view.ssh, "over SSH"), (view.local, "on this computer")):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert button.isChecked() and says in view.practice_note.text()
        assert places() == first, button.text()
    qtbot.mouseClick(view.practice, Qt.MouseButton.LeftButton)
    assert places() == first
