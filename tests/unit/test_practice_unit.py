"""The practice server without running one: missing programs, the TARGET, the endpoint."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pytest

from app.cli import run_cli
from app.commands import practice as practice_command
from app.domain.target import ConnectOptions, parse_target
from app.practice.binaries import INSTALL_HINT
from app.practice.practice import NoServerBinaries, PracticeServer, resolve_target
from app.practice.server import ServerError


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
    practice = PracticeServer(tmp_path / ("d" * 100))
    assert not practice.status().running  # looking is fine; starting is what cannot work
    with pytest.raises(ServerError, match="longer than the 107 bytes"):
        practice.start()
    assert not practice.base.exists()


def test_practice_target_is_local_plus_its_socket(tmp_path: Path) -> None:
    options = ConnectOptions(mysql_user="bob", instance="ignored")
    target = resolve_target(parse_target("practice", options), tmp_path / "p")
    assert target.kind == "local"
    assert target.options.instance == str(tmp_path / "p" / "run" / "mysqld.sock")
    assert target.options.mysql_user == "bob"
    assert target == PracticeServer(tmp_path / "p").target(options)
    ssh = parse_target("db1:2222")
    assert resolve_target(ssh, tmp_path / "p") is ssh


def test_restart_command_runs_this_innotune_on_this_directory(tmp_path: Path) -> None:
    endpoint = PracticeServer(tmp_path / "p").endpoint()
    assert shlex.split(endpoint.restart_command) == [
        sys.executable,
        "-m",
        "app",
        "practice",
        "restart",
        "--dir",
        str(tmp_path / "p"),
    ]
