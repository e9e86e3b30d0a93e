"""Block-device queue settings in sysfs: ``/sys/block/<dev>/queue/<attr>``.

Described here, written by the job on the target (it writes the file and reads it back).
Live only; :mod:`app.describe.udev` writes the rule that makes them survive a reboot.
A file that is missing or read-only is "not supported on this host" and reported, never
skipped silently (house style: missing is not silent).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from app.describe.actions import Action, ApplyError, Host, ValueChange
from app.domain.plan import Change
from app.domain.words import sentence
from app.targetjob.values import active_value

_DEVICE = re.compile(r"^[A-Za-z0-9_.:!+-]+$")
_ATTR = re.compile(r"^queue/[a-z0-9_]+$")
_VALUE = re.compile(r"^[A-Za-z0-9_.-]+$")

# F<mode>\0<content> for a file, M for a missing one.
_PROBE = (
    'if [ -f "$1" ]; then printf "F%s\\000" "$(stat -c %a -- "$1")"; cat -- "$1"; else printf M; fi'
)


def sysfs_path(change: Change) -> str:
    """``/sys/block/<dev>/queue/<attr>``, with the device and attribute names checked."""
    device = change.device or ""
    if not _DEVICE.match(device) or not _ATTR.match(change.key):
        raise ApplyError(f"Not a block-device queue setting: {change.key} on {device!r}.")
    return f"/sys/block/{device}/{change.key}"


def _probe(host: Host, path: str) -> tuple[str | None, str | None]:
    """(content, mode) of a sysfs file, (None, None) when it does not exist."""
    assert host.transport is not None
    result = host.transport.run(["sh", "-c", _PROBE, "sh", path], sudo=host.sudo)
    if not result.ok:
        raise ApplyError(sentence(f"Cannot read {path}: {result.err.strip()}"))
    if result.stdout.startswith(b"M"):
        return None, None
    head, _, body = result.stdout[1:].partition(b"\0")
    return body.decode("utf-8", "replace"), head.decode()


def describe(changes: Sequence[Change], host: Host) -> list[Action]:
    """One Action per queue attribute the job writes (current → new).

    An Action has ``unsupported`` set (and nothing to run) when the file is missing or
    read-only on this host, or the value is not one the device offers.

    Raises:
        ApplyError: a device, attribute or value InnoTune does not write.
    """
    return [_one(change, host) for change in changes if change.target == "sysfs"]


def _one(change: Change, host: Host) -> Action:
    path = sysfs_path(change)
    if not _VALUE.match(change.proposed):
        raise ApplyError(f"{change.id}: InnoTune does not write the value {change.proposed!r}.")
    base = Action("sysfs", (change.id,), f"{path}: not supported on this host")
    device = next(
        (d for p in host.facts.os.write_paths for d in p.devices if d.name == change.device), None
    )
    if device is not None and device.queue_writable is False:
        ro = host.facts.os.machine.capabilities.sysfs_read_only
        seen = "/sys is mounted read-only" if ro else "root may not write it"
        return dataclasses.replace(
            base, unsupported=(f"{path} is read-only ({seen}): not supported on this host.",)
        )
    persistent = (
        "udev rule (see the persistence files)"
        if change.kept
        else "not kept: it lasts until the next reboot (no udev on this host)"
    )
    if not host.live:
        value = ValueChange(
            "sysfs",
            change.key,
            change.current,
            change.proposed,
            True,
            persistent,
            change.device,
            path,
        )
        return Action(
            "sysfs",
            (change.id,),
            f"{path}: {change.current} → {change.proposed} (from facts)",
            values=(value,),
        )
    content, mode = _probe(host, path)
    if content is None:
        return dataclasses.replace(
            base, unsupported=(f"{path} does not exist: not supported on this host.",)
        )
    if mode is not None and not int(mode, 8) & 0o222:
        return dataclasses.replace(
            base, unsupported=(f"{path} is read-only: not supported on this host.",)
        )
    current = active_value(content)
    if (
        "[" in content
        and change.proposed not in content.replace("[", " ").replace("]", " ").split()
    ):
        return dataclasses.replace(
            base,
            unsupported=(
                f"{path}: {change.proposed} is not offered here ({content.strip()}): not "
                "supported on this host.",
            ),
        )
    value = ValueChange(
        "sysfs", change.key, current, change.proposed, True, persistent, change.device, path
    )
    return Action("sysfs", (change.id,), f"{path}: {current} → {change.proposed}", values=(value,))
