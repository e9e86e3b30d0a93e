"""Mounts and free space from the host script's output: mountinfo, /proc/mounts, df.

No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo (or /proc/mounts, which lacks maj:min)."""

    mount_point: str
    fs_type: str
    source: str
    options: tuple[str, ...]
    super_options: tuple[str, ...]
    maj_min: str | None


def _unescape(value: str) -> str:
    # The kernel writes space, tab, newline and backslash in paths as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def parse_mountinfo(lines: Sequence[str]) -> list[Mount]:
    """/proc/self/mountinfo lines to mounts, in mount order."""
    mounts = []
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        rest = right.split()
        if not sep or len(fields) < 6 or len(rest) < 2:
            continue
        mounts.append(
            Mount(
                mount_point=_unescape(fields[4]),
                fs_type=rest[0],
                source=_unescape(rest[1]),
                options=tuple(fields[5].split(",")),
                super_options=tuple(rest[2].split(",")) if len(rest) > 2 else (),
                maj_min=fields[2],
            )
        )
    return mounts


def parse_proc_mounts(lines: Sequence[str]) -> list[Mount]:
    """/proc/mounts lines (the fallback when mountinfo is missing)."""
    mounts = []
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        mounts.append(
            Mount(
                mount_point=_unescape(fields[1]),
                fs_type=fields[2],
                source=_unescape(fields[0]),
                options=tuple(fields[3].split(",")),
                super_options=(),
                maj_min=None,
            )
        )
    return mounts


def mount_for(path: str, mounts: Sequence[Mount]) -> Mount | None:
    """The mount that holds ``path``.

    That is the longest mount point that is a prefix of it; when the same point is
    mounted twice, the later mount (the one on top) wins.
    """
    best: Mount | None = None
    for m in mounts:
        mp = m.mount_point.rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/") or mp == "/":
            if best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/"):
                best = m
    return best


def parse_df(lines: Sequence[str]) -> tuple[int | None, int | None]:
    """``df -P -k`` → (total bytes, available bytes)."""
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1].isdigit() and fields[3].isdigit():
            return int(fields[1]) * 1024, int(fields[3]) * 1024
    return None, None
