"""The practice server's directory comes from QStandardPaths, the same with or without a window."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from app.places import default_practice_dir


def test_default_practice_dir_follows_xdg_and_keeps_the_app_names(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_practice_dir() == tmp_path / "InnoTune" / "InnoTune" / "practice"
    assert (QCoreApplication.organizationName(), QCoreApplication.applicationName()) == names
