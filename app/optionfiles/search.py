"""Which option files the server reads on its own, in which order, and which groups.

Mirrors ``init_default_directories`` in ``mysys/my_default.c``; the server binary's own
list (``--verbose --help``) replaces the built-in guess when it is known.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TopFile:
    """A file the server reads on its own (not through an include).

    ``required`` files (``--defaults-file``, ``--defaults-extra-file``) must exist.
    """

    path: str
    required: bool = False


def server_groups(flavour: str, version: str = "", suffix: str = "") -> list[str]:
    """The option groups the server reads, in the order it lists them.

    Args:
        flavour: ``"mariadb"`` or ``"mysql"``.
        version: e.g. ``"10.11.6"``; the ``X.Y`` part adds the versioned groups.
        suffix: ``--defaults-group-suffix``: every group is also read with it appended.
    """
    xy = ".".join(version.split("-")[0].split(".")[:2]) if version else ""
    if flavour == "mariadb":
        groups = ["mysqld", "server"]
        if xy:
            groups.append(f"mysqld-{xy}")
        groups += ["mariadb"] + ([f"mariadb-{xy}"] if xy else [])
        groups += ["mariadbd"] + ([f"mariadbd-{xy}"] if xy else [])
        groups += ["client-server", "galera"]
    elif flavour == "mysql":
        groups = ["mysqld", "server"] + ([f"mysqld-{xy}"] if xy else [])
    else:
        raise ValueError(f"unknown flavour {flavour!r}")
    if suffix:
        groups += [g + suffix for g in groups]
    return groups


def parse_help_default_files(help_text: str) -> list[str]:
    """The file list from ``mysqld --verbose --help`` ("Default options are read from ...")."""
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Default options are read from the following files"):
            if i + 1 < len(lines):
                return lines[i + 1].split()
    return []


def _add_dir(dirs: list[str], directory: str) -> None:
    # init_default_directories: a directory already listed moves to the end.
    if directory in dirs:
        dirs.remove(directory)
    dirs.append(directory)


def search_order(
    flavour: str,
    *,
    defaults_file: str | None = None,
    extra_file: str | None = None,
    no_defaults: bool = False,
    sysconfdir: str | None = None,
    mysql_home: str | None = None,
    mariadb_home: str | None = None,
    home: str = "~",
    help_files: Sequence[str] | None = None,
    cwd: str = "/",
) -> list[TopFile]:
    """The top-level files the server reads, in order.

    Args:
        flavour: ``"mariadb"`` or ``"mysql"``.
        defaults_file: ``--defaults-file``: only this file is read (it must exist).
        extra_file: ``--defaults-extra-file``: read after the global files, before ~/.my.cnf.
        no_defaults: ``--no-defaults``: nothing is read.
        sysconfdir: the build's SYSCONFDIR. MariaDB builds with one (RPMs) read it
            *instead of* /etc and /etc/mysql; MySQL reads it after them.
        mysql_home: ``$MYSQL_HOME`` of the server process.
        mariadb_home: ``$MARIADB_HOME`` (MariaDB 10.6+; wins over ``$MYSQL_HOME``).
        home: the home directory of the server's user (for ``~/.my.cnf``).
        help_files: the list from ``--verbose --help`` on the target, when known; it
            replaces the built-in guess of the global files.
        cwd: the server's working directory, for relative paths.
    """
    if no_defaults:
        return []
    if defaults_file:
        return [TopFile(posixpath.join(cwd, defaults_file), required=True)]
    dirs: list[str] = []
    if help_files:
        tops = [TopFile(expand_home(f, home)) for f in help_files]
        if extra_file:
            extra = TopFile(posixpath.join(cwd, extra_file), required=True)
            tops = [t for t in tops if t.path != extra.path]
            # The extra file comes just before the per-user file(s) in the home directory.
            at = next((i for i, f in enumerate(help_files) if f.startswith("~")), len(tops))
            tops.insert(at, extra)
        return tops
    if flavour == "mariadb":
        if sysconfdir:
            _add_dir(dirs, sysconfdir)
        else:
            _add_dir(dirs, "/etc")
            _add_dir(dirs, "/etc/mysql")
        env_home = mariadb_home or mysql_home
        if env_home:
            _add_dir(dirs, env_home)
    elif flavour == "mysql":
        _add_dir(dirs, "/etc")
        _add_dir(dirs, "/etc/mysql")
        if sysconfdir:
            _add_dir(dirs, sysconfdir)
        if mysql_home:
            _add_dir(dirs, mysql_home)
    else:
        raise ValueError(f"unknown flavour {flavour!r}")
    result = [TopFile(posixpath.join(d, "my.cnf")) for d in dirs]
    if extra_file:
        result.append(TopFile(posixpath.join(cwd, extra_file), required=True))
    result.append(TopFile(expand_home("~/.my.cnf", home)))
    return result


def expand_home(path: str, home: str) -> str:
    """Expand a leading ``~/`` the way ``fn_format(MY_UNPACK_FILENAME)`` does."""
    if path == "~" or path.startswith("~/"):
        return home.rstrip("/") + path[1:] if home != "~" else path
    return path
