"""Finding the MariaDB or MySQL server binaries on this computer."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

_SEARCH = ("/usr/sbin", "/usr/bin", "/usr/libexec", "/usr/local/mysql/bin", "/usr/local/bin")

INSTALL_HINT = (
    "No MariaDB or MySQL server program was found on this computer. On Debian or Ubuntu "
    "install it without a system service: sudo apt-get install mariadb-server-core "
    "mariadb-client-core (Fedora: sudo dnf install mariadb-server)."
)


@dataclass(frozen=True)
class ServerBinaries:
    """The programs needed to run a private server."""

    server: str
    install_db: str | None
    client: str | None
    flavour: str  # "mariadb" or "mysql"
    version: str


def _which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for folder in _SEARCH:
            candidate = Path(folder) / name
            if candidate.is_file():
                return str(candidate)
    return None


def server_program() -> str | None:
    """The server program's path, found without running it (safe for a quick UI check)."""
    return _which("mariadbd", "mysqld")


def find_binaries() -> ServerBinaries | None:
    """Return the server binaries found here, or None (see :data:`INSTALL_HINT`)."""
    server = server_program()
    if server is None:
        return None
    out = subprocess.run(
        [server, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    match = re.search(r"Ver\s+(\S+)", out)
    version = match.group(1) if match else "unknown"
    flavour = "mariadb" if "mariadb" in out.lower() else "mysql"
    if flavour == "mariadb":
        install_db = _which("mariadb-install-db", "mysql_install_db")
        client = _which("mariadb", "mysql")
    else:
        install_db = None  # MySQL initializes with `mysqld --initialize-insecure`
        client = _which("mysql")
    return ServerBinaries(server, install_db, client, flavour, version)
