"""Known hosts live in the platform's data directory (QStandardPaths), like the logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.main import _use_platform_places
from app.places import app_data_dir, known_hosts_file
from app.remote import hostkeys


def test_known_hosts_in_the_data_directory_with_the_old_file_carried_over(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hostkeys, "_own_file", None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    legacy = tmp_path / "InnoTune" / "known_hosts"  # where earlier versions kept it
    legacy.parent.mkdir()
    legacy.write_text("db.lan ssh-ed25519 AAAA\n")
    path = known_hosts_file()
    # The XDG place is the data directory itself now: the same file, nothing to copy.
    assert path == app_data_dir() / "known_hosts" == tmp_path / "InnoTune/known_hosts" == legacy
    assert path.read_text() == "db.lan ssh-ed25519 AAAA\n"


def test_entry_point_points_the_ssh_layer_at_it(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hostkeys, "_own_file", None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert hostkeys.default_own_file() == tmp_path / "InnoTune" / "known_hosts"
    _use_platform_places()
    assert hostkeys.default_own_file() == tmp_path / "InnoTune" / "known_hosts"
    assert hostkeys.HostKeyStore().own_file == hostkeys.default_own_file()


@pytest.mark.parametrize(
    ("xdg", "home"),
    [
        ("{tmp}/data", "{tmp}/home"),  # an absolute XDG_DATA_HOME
        (None, "{tmp}/home"),  # unset: $HOME/.local/share
        ("", "{tmp}/home"),  # empty counts as unset
        ("relative/data", "{tmp}/home"),  # relative: ignored, as the XDG spec says
        ("{tmp}/x//y/../z/", "{tmp}/home"),  # kept as written, as Qt keeps it
        (None, ""),  # no HOME at all: the root directory
    ],
)
def test_places_without_qt_are_the_ones_qt_gives(
    qapp: QApplication,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    xdg: str | None,
    home: str,
) -> None:
    """The headless lookup (app/places.py) names exactly QStandardPaths' AppDataLocation."""
    from PySide6.QtCore import QCoreApplication, QStandardPaths

    from app import places

    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg.format(tmp=tmp_path))
    monkeypatch.setenv("HOME", home.format(tmp=tmp_path))
    saved = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    QCoreApplication.setOrganizationName("InnoTune")  # as the wizard sets them (launch.py)
    QCoreApplication.setApplicationName("InnoTune")
    try:
        generic = QStandardPaths.StandardLocation.GenericDataLocation
        qt = QStandardPaths.writableLocation(generic) + "/InnoTune"  # never InnoTune/InnoTune
    finally:
        QCoreApplication.setOrganizationName(saved[0])
        QCoreApplication.setApplicationName(saved[1])
    # Qt spells the root directory's child "//.local"; the same directory on Linux.
    assert places.app_data_dir() == Path(qt.replace("//", "/"))
    assert app_data_dir() == places.app_data_dir()  # the wizard's name for it, the same
