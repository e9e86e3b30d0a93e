"""With no server program installed, the practice server says exactly what to install."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.cli import run_cli
from app.commands import practice as practice_command
from app.practice.binaries import INSTALL_HINT
from app.practice.practice import NoServerBinaries, PracticeServer


def nothing_installed() -> None:
    return None


def test_start_names_the_packages_to_install(tmp_path: Path) -> None:
    practice = PracticeServer(tmp_path / "p", find=nothing_installed)
    with pytest.raises(NoServerBinaries) as info:
        practice.start()
    assert str(info.value) == INSTALL_HINT
    assert "mariadb-server-core mariadb-client-core" in str(info.value)
    assert not practice.status().running


def test_cli_action_raises_the_hint_and_status_needs_no_binaries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(action="start", dir=str(tmp_path / "p"))
    with pytest.raises(NoServerBinaries, match="sudo apt-get install mariadb-server-core"):
        practice_command.run(args, find=nothing_installed)
    # status, stop need no server program: they only look at /proc and the files.
    for action in ("status", "stop"):
        args = argparse.Namespace(action=action, dir=str(tmp_path / "p"))
        assert practice_command.run(args, find=nothing_installed) == 0
    assert "not set up yet" in capsys.readouterr().out
    assert run_cli(["practice", "status", "--dir", str(tmp_path / "p")]) == 0


def test_too_long_a_socket_path_is_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="longer than the 107 bytes"):
        PracticeServer(tmp_path / ("d" * 100))
