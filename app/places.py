"""Where InnoTune keeps its files on this computer, without Qt.

The same directories Qt's ``QStandardPaths.AppDataLocation`` names for organisation and
application "InnoTune" (the wizard sets both), found with the standard library alone, so a
headless command never loads Qt (~0.3 s) just to learn a path:

- Linux and other Unix: ``$XDG_DATA_HOME/InnoTune/InnoTune``, where a relative or empty
  ``XDG_DATA_HOME`` counts as unset and means ``$HOME/.local/share`` (an empty ``HOME`` is
  ``/``, as Qt reads it);
- macOS: ``~/Library/Application Support/InnoTune/InnoTune``;
- Windows: ``%APPDATA%/InnoTune/InnoTune`` (the roaming profile).

``tests/ui/test_platform_places.py`` checks the answer against QStandardPaths itself.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from app import APP_NAME
from app.domain.errors import InnoTuneError


def _home() -> Path:
    # Qt's QDir::homePath(): $HOME, or the root directory when it is empty or unset.
    return Path(os.environ.get("HOME") or "/")


def app_data_dir() -> Path:
    """InnoTune's data directory, e.g. ~/.local/share/InnoTune/InnoTune."""
    if sys.platform == "win32":
        roaming = os.environ.get("APPDATA", "")
        if not roaming:
            raise InnoTuneError("No APPDATA folder is set for this user.", "Set APPDATA.")
        return Path(roaming) / APP_NAME / APP_NAME
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / APP_NAME / APP_NAME
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if data_home.startswith("/") else _home() / ".local" / "share"
    return base / APP_NAME / APP_NAME


def default_practice_dir() -> Path:
    """The practice server's base directory: <data directory>/practice."""
    return app_data_dir() / "practice"


def local_snapshot_dir(label: str) -> Path:
    """This computer's copies of a host's snapshots: <data directory>/snapshots/<host>."""
    safe = re.sub(r"[^A-Za-z0-9_.@:-]+", "_", label).strip("._") or "host"
    return app_data_dir() / "snapshots" / safe


def known_hosts_file() -> Path:
    """InnoTune's own known-hosts file: <data directory>/known_hosts, on every platform.

    Earlier versions kept it in the XDG place (``~/.local/share/InnoTune/known_hosts``); a
    file there is copied over once, so hosts trusted before stay trusted.
    """
    from app.remote.hostkeys import default_own_file

    path = app_data_dir() / "known_hosts"
    legacy = default_own_file()
    if not path.exists() and legacy.is_file() and legacy != path:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(legacy, path)
    return path
