"""Headless commands never load Qt: its import alone costs ~0.3 s of every start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.practice.server import free_port

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import sys
from app.main import main
code = main(sys.argv[1:])
qt = sorted(m for m in sys.modules if m.split(".")[0] == "PySide6")
print("exit", code, "qt", ",".join(qt) or "none")
"""


def _run(tmp_path: Path, *args: str) -> str:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path))
    env.pop("SSH_AUTH_SOCK", None)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    return done.stdout.strip().splitlines()[-1]


def test_inspect_and_doctor_run_without_qt(tmp_path: Path) -> None:
    port = str(free_port())  # nothing listens: the command fails after its whole start-up
    for command in ("inspect", "doctor"):
        line = _run(tmp_path, command, f"root@127.0.0.1:{port}", "--identity", "/nonexistent")
        assert line.startswith("exit 1") and line.endswith("qt none"), (command, line)
    # The log and known-hosts places were still set up, in the data directory Qt would name.
    assert (tmp_path / "data" / "InnoTune" / "logs" / "innotune.log").exists()


def test_plan_from_facts_runs_without_qt(tmp_path: Path) -> None:
    line = _run(tmp_path, "plan", "--facts", str(tmp_path / "missing.json"))
    assert line.endswith("qt none"), line
