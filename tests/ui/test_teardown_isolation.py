"""A UI test that fails at teardown never fails the next test (tests/ui/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The first test's window is deleted while pytest-qt runs the pending events at teardown, as
# a finished wizard deletes itself: its deletion is queued as the teardown starts.
HOOK = """
import pytest
import shiboken6
from PySide6.QtCore import QTimer


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    for window in getattr(item.module, "KEPT", []):
        QTimer.singleShot(0, lambda w=window: shiboken6.isValid(w) and shiboken6.delete(w))
    return (yield)
"""

TESTS = """
import shiboken6
from PySide6.QtWidgets import QWidget

KEPT = []


def test_a_window_deleted_at_teardown(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    KEPT.append(window)


def test_the_next_one(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    assert not [w for w in KEPT if shiboken6.isValid(w)]
"""


def test_a_window_deleted_at_teardown_fails_neither_test(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(HOOK)
    (tmp_path / "test_inner.py").write_text(TESTS)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += ["-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path)]
    argv += ["-p", "tests.ui.conftest", str(tmp_path / "test_inner.py")]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout, out.stdout
