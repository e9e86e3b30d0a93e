"""Start-up's long-lived objects are kept out of Python's full garbage collections."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Starts the wizard as `innotune` does and reports once launch_wizard's own zero-timer has
# run: the outer timer is queued before it, so the inner one fires after it.
PROBE = """
import gc, os, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
def report():
    print("frozen", gc.get_freeze_count(), flush=True)
    app.quit()
QTimer.singleShot(0, lambda: QTimer.singleShot(0, report))
from app.ui.launch import launch_wizard
code = launch_wizard()
os._exit(code)  # PySide6 may crash collecting Qt wrappers at interpreter teardown
"""


def test_the_wizard_freezes_what_start_up_made(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    counts = [int(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("frozen")]
    assert counts and counts[0] > 10_000, out.stdout + out.stderr  # the wizard's start-up objects
