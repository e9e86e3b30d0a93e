"""udev rules that keep the sysfs queue settings across reboots and device renumbering.

One file per device, ``/etc/udev/rules.d/99-innotune-<id>.rules``, matching the device by
a stable attribute from the facts (``BlockDevice.stable_id`` / ``stable_id_source``):
its WWID, serial, dm UUID or, for a loop device, its backing file. Never by the kernel
name (``sdb`` can become ``sdc`` on the next boot; reliability E.32). Without a stable
attribute no rule is written and that is reported: the live value lasts until reboot.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from app.describe.actions import (
    Action,
    ApplyError,
    Command,
    FileWrite,
    Host,
    read_file_or_none,
)
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change

RULES_DIR = "/etc/udev/rules.d"

# stable_id_source (the /sys file under /sys/block/<dev>/) → how udev matches it. ATTR{}
# reads the device's own attribute; ATTRS{} walks up to the parent that has it (the SCSI
# device holds wwid/serial for sdX).
MATCH_KEYS = {
    "wwid": "ATTR{wwid}",
    "device/wwid": "ATTRS{wwid}",
    "serial": "ATTR{serial}",
    "device/serial": "ATTRS{serial}",
    "dm/uuid": "ENV{DM_UUID}",
    "loop/backing_file": "ATTR{loop/backing_file}",
}

# udev match values are globs (* ? [ ] and | for alternatives) and plain strings have no
# escapes: an identifier with any other character is not matched rather than mis-matched.
SAFE_ID_CHARS = "A-Za-z0-9 _.:/+=,@-"
_SAFE_ID = re.compile(f"^[{SAFE_ID_CHARS}]+$")
_ATTR_VALUE = re.compile(r"^[A-Za-z0-9_.-]+$")
_ASSIGN = re.compile(r'ATTR\{(queue/[a-z0-9_]+)\}="([^"]*)"')

# The scheduler first: nr_requests limits depend on the scheduler in force.
_ORDER = ("queue/scheduler",)


def find_device(facts: HostFacts, name: str) -> BlockDevice | None:
    """The device called ``name`` on any write path in the facts."""
    for path in facts.os.write_paths:
        for device in path.devices:
            if device.name == name:
                return device
    return None


def rule_path(device: BlockDevice) -> str:
    """``/etc/udev/rules.d/99-innotune-<slug>.rules``, named after the stable identifier.

    The exports name the file the same way on each host at run time
    (:data:`app.export.disks.FIND_DISKS`), so an exported rule and the job's are one file.
    """
    ident = device.stable_id or device.name
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ident).strip("-")[-24:] or "device"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:8]
    return f"{RULES_DIR}/99-innotune-{slug}-{digest}.rules"


def match_clause(device: BlockDevice) -> str:
    """The rule's match on the stable attribute, e.g. ``ATTR{wwid}=="naa.5000..."``.

    Raises:
        ApplyError: no stable identifier, or one udev cannot match literally.
    """
    key = MATCH_KEYS.get(device.stable_id_source or "")
    if key is None or not device.stable_id:
        raise ApplyError(
            f"{device.name} has no stable identifier (WWID, serial, dm UUID or backing file); "
            "InnoTune does not write a udev rule matching by name, which can change at boot.",
            "The live value lasts until the next reboot; set it again after a reboot.",
        )
    if not _SAFE_ID.match(device.stable_id):
        raise ApplyError(
            f"{device.name}: its identifier {device.stable_id!r} holds characters a udev rule "
            "cannot match literally; no rule written.",
            "The live value lasts until the next reboot.",
        )
    return f'{key}=="{device.stable_id}"'


def assignments(settings: dict[str, str]) -> str:
    """``ATTR{queue/scheduler}="none", ATTR{...}="..."``: the scheduler first."""
    ordered = sorted(settings, key=lambda k: (k not in _ORDER, k))
    return ", ".join(f'ATTR{{{key}}}="{settings[key]}"' for key in ordered)


#: The start of every rule line: a whole disk being added or changed.
RULE_HEAD = 'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", '


def rule_text(device: BlockDevice, settings: dict[str, str], planned_as: str) -> bytes:
    """The whole rule file for one device."""
    assigns = assignments(settings)
    source = device.stable_id_source or "?"
    return (
        "# Written by InnoTune: queue settings for one database disk.\n"
        f"# Matches the device by its {source} (it was {planned_as} when planned), never by\n"
        "# its kernel name, which can change between boots.\n"
        f"{RULE_HEAD}{match_clause(device)}, {assigns}\n"
    ).encode()


def reload_commands(device_name: str) -> tuple[Command, ...]:
    """Reload the rules and replay a change event for the block devices."""
    return (
        Command(("udevadm", "control", "--reload-rules"), "make udev read the new rule"),
        Command(
            (
                "udevadm",
                "trigger",
                "--type=devices",
                "--action=change",
                "--subsystem-match=block",
                f"--sysname-match={device_name}",
            ),
            f"replay a change event for {device_name} so the rule applies now",
        ),
    )


def _rules_dir_missing(host: Host) -> str | None:
    """Why no rule can be written when the host has no rules directory (None: it has one)."""
    if host.live:
        assert host.transport is not None
        there = host.transport.run(["test", "-d", RULES_DIR], sudo=host.sudo).ok
    else:
        there = host.facts.os.machine.capabilities.udev_rules_dir is not False
    if there:
        return None
    return (
        f"{RULES_DIR} does not exist on this host (no udev), so no rule keeps the queue "
        "settings: they are set live and last until the next reboot."
    )


def describe(changes: Sequence[Change], host: Host) -> list[Action]:
    """The rule file per device for the sysfs changes (and the reload) the job writes.

    The job runs the reload commands after it wrote the file; when they fail (no running
    udevd: containers, some chroots) that is a warning: the rule applies at the next boot
    and the live value was set through sysfs.

    Returns:
        One Action per device; a device without a stable identifier gets an Action with
        ``unsupported`` set and nothing to run.
    """
    by_device: dict[str, list[Change]] = {}
    for change in changes:
        # A change planned as live only (no udev on the host) gets no rule.
        if change.target == "sysfs" and change.device and change.kept:
            by_device.setdefault(change.device, []).append(change)
    actions = []
    missing = _rules_dir_missing(host) if by_device else None
    for name, items in by_device.items():
        ids = tuple(c.id for c in items)
        device = find_device(host.facts, name)
        if device is None:
            device = BlockDevice(name=name, kind="disk")
        if missing:
            # Writing into a directory that does not exist would fail the whole apply.
            actions.append(Action("udev", ids, f"no udev rule for {name}", warnings=(missing,)))
            continue
        try:
            match_clause(device)
        except ApplyError as exc:
            actions.append(Action("udev", ids, f"no udev rule for {name}", unsupported=(str(exc),)))
            continue
        for change in items:
            if not _ATTR_VALUE.match(change.proposed):
                raise ApplyError(f"{change.id}: InnoTune does not write {change.proposed!r}.")
        path = rule_path(device)
        before = read_file_or_none(host, path) if host.live else None
        settings = {}
        if before is not None:
            settings = dict(_ASSIGN.findall(before.decode("utf-8", "replace")))
        settings.update({c.key: c.proposed for c in items})
        after = rule_text(device, settings, name)
        note = "" if host.live else "shown as new: without a live host it could not be read"
        write = FileWrite(
            path, before, after, "0644", "root:root", "udev", note=note, read=host.live
        )
        action = Action(
            "udev",
            ids,
            f"keep {', '.join(sorted(settings))} for {name} across reboots in {path}",
            files=(write,) if after != before else (),
            commands=reload_commands(name),
        )
        actions.append(action)
    return actions
