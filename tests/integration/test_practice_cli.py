"""`innotune practice ...` end to end, in a fresh process, with the data directory from Qt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.practice.practice import PracticeServer
from tests.integration.test_practice import assert_nothing_left

REPO = Path(__file__).resolve().parents[2]


def innotune(xdg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(xdg))
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=REPO,
    )


def fields(out: str) -> dict[str, str]:
    rows = [ln.split(None, 1) for ln in out.splitlines() if ln.startswith("  ")]
    return {k: v for k, v in rows}


def test_cli_start_status_restart_stop_reset(tmp_path_factory: pytest.TempPathFactory) -> None:
    # A short directory: the socket path under it must stay within 107 bytes.
    xdg = tmp_path_factory.mktemp("x")
    base = xdg / "InnoTune" / "practice"  # QStandardPaths honours XDG_DATA_HOME
    try:
        status = innotune(xdg, "practice", "status")
        assert status.returncode == 0, status.stderr
        assert "not set up yet" in status.stdout

        start = innotune(xdg, "practice", "start")
        assert start.returncode == 0, start.stderr
        assert start.stdout.startswith("Practice server running.")
        assert "Creating the practice server's data directory" in start.stderr
        assert "Loading the practice database ..." in start.stderr
        shown = fields(start.stdout)
        assert shown["socket"] == str(base / "run" / "mysqld.sock")
        assert shown["datadir"] == str(base / "data")
        assert shown["options"] == str(base / "etc" / "my.cnf")
        assert shown["database"] == "practice"
        pid = int(shown["pid"])
        assert Path(f"/proc/{pid}").exists()

        again = innotune(xdg, "practice", "start")
        assert "adopted a server left running" in again.stdout
        assert fields(again.stdout)["pid"] == str(pid)

        restart = innotune(xdg, "practice", "restart")
        assert restart.returncode == 0, restart.stderr
        assert fields(restart.stdout)["pid"] != str(pid)

        stop = innotune(xdg, "practice", "stop")
        assert stop.returncode == 0, stop.stderr
        assert "no server process of it is left" in stop.stdout
        assert_nothing_left(PracticeServer(base))
        assert "Practice server stopped." in innotune(xdg, "practice", "status").stdout

        reset = innotune(xdg, "practice", "reset")
        assert reset.returncode == 0, reset.stderr
        assert "reset" in reset.stdout and fields(reset.stdout)["database"] == "practice"
        stop = innotune(xdg, "practice", "stop")
        assert stop.returncode == 0, stop.stderr
    finally:
        PracticeServer(base).stop()
    assert_nothing_left(PracticeServer(base))


def test_cli_rejects_an_unknown_action(tmp_path: Path) -> None:
    bad = innotune(tmp_path, "practice", "bogus")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
