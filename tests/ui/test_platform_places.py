"""Known hosts live in the platform's data directory (QStandardPaths), like the logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.main import _use_platform_places
from app.remote import hostkeys
from app.ui.paths import app_data_dir, known_hosts_file


def test_known_hosts_in_the_data_directory_with_the_old_file_carried_over(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hostkeys, "_own_file", None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    legacy = tmp_path / "InnoTune" / "known_hosts"  # where earlier versions kept it
    legacy.parent.mkdir()
    legacy.write_text("db.lan ssh-ed25519 AAAA\n")
    path = known_hosts_file()
    assert path == app_data_dir() / "known_hosts" == tmp_path / "InnoTune/InnoTune/known_hosts"
    assert path.read_text() == legacy.read_text()
    legacy.write_text("changed later\n")
    assert known_hosts_file().read_text() == "db.lan ssh-ed25519 AAAA\n"  # copied once only


def test_entry_point_points_the_ssh_layer_at_it(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hostkeys, "_own_file", None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert hostkeys.default_own_file() == tmp_path / "InnoTune" / "known_hosts"
    _use_platform_places()
    assert hostkeys.default_own_file() == tmp_path / "InnoTune" / "InnoTune" / "known_hosts"
    assert hostkeys.HostKeyStore().own_file == hostkeys.default_own_file()
