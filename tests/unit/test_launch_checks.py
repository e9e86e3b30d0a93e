"""Before Qt loads its xcb plug-in, missing system libraries are named with their packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.resources import resource_path
from app.ui import launch


def test_missing_libraries_found_by_loading_them() -> None:
    wanted = {"libinnotune-absent.so.0": "innotune-absent0", "libc.so.6": "libc6"}
    assert launch.missing_libraries(wanted) == ["libinnotune-absent.so.0"]
    # This machine has every library the wizard needs (make sysdeps-run installs them).
    assert launch.missing_libraries() == []


def test_message_names_each_library_and_the_package_to_install() -> None:
    text = launch.missing_libraries_message(["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"])
    assert "  - libxcb-cursor.so.0\n  - libxkbcommon-x11.so.0\n" in text
    assert "sudo apt install libxcb-cursor0 libxkbcommon-x11-0\n" in text
    assert "xcb-util-cursor" in text  # the Fedora name of the one most often missing
    assert "innotune --help" in text  # the command line still works


@pytest.mark.parametrize(
    ("env", "xcb"),
    [
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
        ({"QT_QPA_PLATFORM": "xcb"}, True),
        ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, False),
        ({"DISPLAY": ":0"}, True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, False),
    ],
)
def test_the_check_runs_only_where_qt_picks_xcb(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], xcb: bool
) -> None:
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert launch._uses_xcb() is xcb


def test_wizard_refuses_to_start_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(launch, "XCB_LIBRARIES", {"libinnotune-absent.so.0": "innotune-absent0"})
    told: list[str] = []
    monkeypatch.setattr(launch, "_tell_desktop_user", told.append)
    assert launch.launch_wizard() == 3
    err = capsys.readouterr().err
    assert "these system libraries are missing:\n  - libinnotune-absent.so.0\n" in err
    assert "sudo apt install innotune-absent0" in err
    assert told == [err]  # also shown on the desktop when started from a menu


def test_resources_from_source_and_from_a_frozen_bundle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert resource_path("knobs").is_dir()
    assert resource_path("icons", "innotune.svg").is_file()
    monkeypatch.setattr("sys._MEIPASS", str(tmp_path), raising=False)
    assert resource_path("practice", "seed.sql") == tmp_path / "resources" / "practice" / "seed.sql"
