"""File operations on the target: atomic replacement, reading back, checksums.

Standard library only, Python 3.7+: this module runs on the target.
"""

from __future__ import annotations

import grp
import hashlib
import json
import os
import pwd
import tempfile
from typing import Any

from .values import active_value


def sha256(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def fsync_dir(path: str) -> None:
    """Make a rename in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, mode: int | None, owner: str) -> None:
    """Replace ``path`` with ``data``: temp file in the same directory, fsync, rename, fsync dir.

    The temp name starts with a dot and never ends in ``.cnf`` (``!includedir`` reads only
    ``*.cnf``). A symlink is written through (its target is replaced), never replaced
    itself. Owner and mode are set on the temp file before the rename, so the file never
    appears with the wrong ones.
    """
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    old: os.stat_result | None
    try:
        old = os.stat(real)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(real) + ".", suffix=".innotune-tmp", dir=directory
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        uid, gid = -1, -1
        if owner:
            user, _, group = owner.partition(":")
            uid = pwd.getpwnam(user).pw_uid if user else -1
            gid = grp.getgrnam(group).gr_gid if group else -1
        elif old is not None:
            uid, gid = old.st_uid, old.st_gid
        os.chown(tmp, uid, gid)
        if mode is None:
            mode = (old.st_mode & 0o7777) if old is not None else 0o644
        os.chmod(tmp, mode)
        os.rename(tmp, real)
        fsync_dir(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_or_none(path: str) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def reads(path: str) -> list[str] | None:
    """The value a sysfs/procfs file holds now (split on blanks), None when unreadable."""
    try:
        with open(path) as fh:
            return active_value(fh.read()).split()
    except OSError:
        return None


def mode_owner(path: str) -> tuple[str, str]:
    """``("0644", "user:group")`` of ``path`` (names, else numbers)."""
    st = os.stat(path)
    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return "%04o" % (st.st_mode & 0o7777), f"{user}:{group}"


def load_json(path: str) -> Any:
    """The JSON document in ``path``; None when it is missing or damaged."""
    data = read_or_none(path)
    try:
        return json.loads(data.decode("utf-8")) if data else None
    except ValueError:
        return None


def remove_leftovers(path: str) -> list[str]:
    """Remove the temp files a job killed mid-write left beside ``path``; their names.

    They never end in ``.cnf`` (so no server ever read them), but they are clutter.
    """
    real = os.path.realpath(path)
    directory, name = os.path.split(real)
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for entry in entries:
        if entry.startswith("." + name + ".") and entry.endswith(".innotune-tmp"):
            try:
                os.unlink(os.path.join(directory, entry))
                removed.append(entry)
            except OSError:
                pass
    return removed
