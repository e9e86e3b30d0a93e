"""The wizard as the UI tests open it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWizard
from pytestqt.qtbot import QtBot

from app.ui.pages.connect import ConnectPage
from app.ui.wizard import MainWizard


def open_wizard(qtbot: QtBot, tmp_path: Path) -> tuple[MainWizard, ConnectPage]:
    """A shown wizard on its Connect page, its profiles kept in a throwaway settings file
    (never the user's own), with the Cancel button a user sees."""
    wizard = MainWizard()
    wizard.setOption(QWizard.WizardOption.NoCancelButton, False)
    qtbot.addWidget(wizard)
    wizard.show()
    connect = wizard.currentPage()
    assert isinstance(connect, ConnectPage)
    connect.settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    return wizard, connect
