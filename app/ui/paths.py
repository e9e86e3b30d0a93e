"""Where InnoTune keeps its files on this computer, as Qt's QStandardPaths says.

QtCore only, and no QApplication needed: the command line uses this too, so the wizard
and ``innotune practice`` always agree on the practice server's directory.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QStandardPaths

from app import APP_NAME
from app.domain.errors import InnoTuneError


def app_data_dir() -> Path:
    """InnoTune's data directory, e.g. ~/.local/share/InnoTune/InnoTune ($XDG_DATA_HOME honoured).

    The organisation and application names are those the wizard sets (launch.py), set here
    for the duration of the lookup so that a bare command-line process gets the same answer.
    """
    saved = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    QCoreApplication.setOrganizationName(APP_NAME)
    QCoreApplication.setApplicationName(APP_NAME)
    try:
        location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    finally:
        QCoreApplication.setOrganizationName(saved[0])
        QCoreApplication.setApplicationName(saved[1])
    if not location:
        raise InnoTuneError(
            "Qt found no writable data directory for InnoTune.", "Set HOME or XDG_DATA_HOME."
        )
    return Path(location)


def default_practice_dir() -> Path:
    """The practice server's base directory: <data directory>/practice."""
    return app_data_dir() / "practice"


def known_hosts_file() -> Path:
    """InnoTune's own known-hosts file: <data directory>/known_hosts, on every platform.

    Earlier versions kept it in the XDG place (``~/.local/share/InnoTune/known_hosts``); a
    file there is copied over once, so hosts trusted before stay trusted.
    """
    import shutil

    from app.remote.hostkeys import default_own_file

    path = app_data_dir() / "known_hosts"
    legacy = default_own_file()
    if not path.exists() and legacy.is_file() and legacy != path:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(legacy, path)
    return path
