"""What the host refuses: a kernel or queue file root may not write, and what keeps it.

A value the host refuses is not applied: it is reported as such, and the file that would
keep it across reboots (a sysctl.d file, a udev rule) is not written, nor its follow-up
command run. Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import os
from typing import Any

from .formats import ValueItem, value_id
from .values import sysctl_path


def write_path(item: ValueItem) -> str:
    """The file the job writes for a sysfs or sysctl value."""
    return str(item.path or "") if item.kind == "sysfs" else sysctl_path(item.key)


def refusal(path: str) -> str | None:
    """Why the host refuses a write to ``path``; None when root may write it.

    Worded as the job words a refused write, so both read the same to a person and to
    ``app.flows.apply.not_taken``.
    """
    if not os.path.exists(path):
        return "%s does not exist: not supported on this host" % path
    if os.access(path, os.W_OK):
        return None
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    how = "Read-only file system" if read_only else "Permission denied"
    return "%s is read-only (%s): not supported on this host" % (path, how)


def refused_values(values: list[ValueItem]) -> dict[str, str]:
    """The sysfs and sysctl values the host refuses: change id -> why."""
    refused: dict[str, str] = {}
    for item in values:
        if item.kind in ("sysfs", "sysctl") and item.value is not None:
            why = refusal(write_path(item))
            if why is not None:
                refused[value_id(item)] = why
    return refused


def keeps_refused(item: Any, refused: dict[str, str]) -> list[str]:
    """The refused changes a persistence file or command covers (it is then left out)."""
    return [c for c in getattr(item, "covers", None) or [] if c in refused]
