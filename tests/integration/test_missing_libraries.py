"""The wizard started on a host without libxcb-cursor0 says what to install (G.38)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.hosts.hidelib import run_without_library


def test_wizard_names_the_missing_library_and_its_package(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "DISPLAY": ":97",  # never reached: the check comes before Qt
        "QT_QPA_PLATFORM": "xcb",
    }
    innotune = str(Path(sys.executable).parent / "innotune")
    out = run_without_library("libxcb-cursor.so.0", [innotune], env)
    assert out.returncode == 3, out.stderr
    assert "these system libraries are missing:\n  - libxcb-cursor.so.0\n" in out.stderr
    assert "sudo apt install libxcb-cursor0\n" in out.stderr
    assert "Could not load the Qt platform plugin" not in out.stderr  # Qt never got that far
