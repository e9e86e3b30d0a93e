"""The practice server's directory comes from QStandardPaths, the same with or without a window."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from app.places import default_practice_dir


def test_an_earlier_versions_files_move_up_once_and_a_running_practice_server_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    old = tmp_path / "InnoTune" / "InnoTune"
    (old / "practice" / "etc").mkdir(parents=True)
    (old / "practice" / "etc" / "my.cnf").write_text(f"datadir = {old}/practice/data\n")
    (old / "logs").mkdir()
    (old / "logs" / "innotune.log").write_text("log\n")
    (old / "known_hosts").write_text("in use\n")
    (tmp_path / "InnoTune" / "known_hosts").write_text("older\n")  # the XDG place's
    new = tmp_path / "InnoTune"
    assert default_practice_dir() == new / "practice"
    assert not old.exists()
    assert (new / "practice" / "etc" / "my.cnf").read_text() == f"datadir = {new}/practice/data\n"
    assert (new / "logs" / "innotune.log").read_text() == "log\n"
    assert (new / "known_hosts").read_text() == "in use\n"
    assert (new / "known_hosts.before-move").read_text() == "older\n"
    # A practice server of the earlier version that is running is used where it is.
    (old / "practice" / "run").mkdir(parents=True)
    (old / "practice" / "run" / "mysqld.pid").write_text(f"{os.getpid()}\n")
    shutil.rmtree(new / "practice")
    assert default_practice_dir() == old / "practice"
    (old / "practice" / "run" / "mysqld.pid").unlink()  # stopped: moved up next time
    assert default_practice_dir() == new / "practice" and not old.exists()


def test_default_practice_dir_follows_xdg_and_keeps_the_app_names(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_practice_dir() == tmp_path / "InnoTune" / "practice"  # not InnoTune/InnoTune
    assert (QCoreApplication.organizationName(), QCoreApplication.applicationName()) == names
