"""Where InnoTune keeps its files on this computer, without Qt.

Qt's ``QStandardPaths.GenericDataLocation`` with "InnoTune" under it (Qt's own
``AppDataLocation`` would add the organisation name, "InnoTune" again, which the wizard
keeps for its QSettings file), found with the standard library alone, so a headless
command never loads Qt (~0.3 s) just to learn a path:

- Linux and other Unix: ``$XDG_DATA_HOME/InnoTune``, where a relative or empty
  ``XDG_DATA_HOME`` counts as unset and means ``$HOME/.local/share`` (an empty ``HOME`` is
  ``/``, as Qt reads it);
- macOS: ``~/Library/Application Support/InnoTune``;
- Windows: ``%APPDATA%/InnoTune`` (the roaming profile).

Earlier versions named the organisation "InnoTune" too, so their files are under
``InnoTune/InnoTune``: :func:`app_data_dir` moves them up once (a practice server that is
running stays where it is until it is stopped).

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


def _data_dir() -> Path:
    if sys.platform == "win32":
        roaming = os.environ.get("APPDATA", "")
        if not roaming:
            raise InnoTuneError("No APPDATA folder is set for this user.", "Set APPDATA.")
        return Path(roaming) / APP_NAME
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / APP_NAME
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if data_home.startswith("/") else _home() / ".local" / "share"
    return base / APP_NAME


def app_data_dir() -> Path:
    """InnoTune's data directory, e.g. ~/.local/share/InnoTune (earlier files moved up)."""
    path = _data_dir()
    _move_up(path / APP_NAME, path)
    return path


def _practice_runs(practice: Path) -> bool:
    """True while a server process runs from the practice directory ``practice``."""
    try:
        pid = int((practice / "run" / "mysqld.pid").read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False
    return True


def _move_up(old: Path, new: Path) -> None:
    """Move an earlier version's ``InnoTune/InnoTune`` files up into ``InnoTune``.

    A file already in both places (the known-hosts file, once copied up from the XDG
    place) is replaced by the earlier version's, which was the one in use; the other is kept
    beside it as ``<name>.before-move``. A running practice server is left until it stops;
    once moved, the absolute paths in its option files are the new ones.
    """
    if not old.is_dir() or old.is_symlink():
        return
    for child in sorted(old.iterdir()):
        target = new / child.name
        if child.name == "practice" and _practice_runs(child):
            continue
        try:
            if target.exists() and not (target.is_file() and child.is_file()):
                continue  # two directories of one name: leave both for a person to merge
            if target.exists():
                target.replace(target.with_name(f"{target.name}.before-move"))
            child.rename(target)
        except OSError:
            continue
        if child.name == "practice":
            _repath_option_files(target / "etc", str(child), str(target))
    try:
        old.rmdir()
    except OSError:
        pass  # something stayed behind (a running practice server): moved next time


def _repath_option_files(etc: Path, old: str, new: str) -> None:
    """Replace the practice server's old base path with its new one in its option files."""
    for path in etc.rglob("*.cnf"):
        try:
            text = path.read_text(encoding="utf-8")
            if old in text:
                path.write_text(text.replace(old, new), encoding="utf-8")
        except OSError:
            continue


def default_practice_dir() -> Path:
    """The practice server's base directory: <data directory>/practice.

    A practice server of an earlier version still running under ``InnoTune/InnoTune`` is
    used where it is until it stops (then :func:`app_data_dir` moves it up).
    """
    path = app_data_dir()
    earlier = path / APP_NAME / "practice"
    if not (path / "practice").exists() and earlier.is_dir():
        return earlier
    return path / "practice"


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
