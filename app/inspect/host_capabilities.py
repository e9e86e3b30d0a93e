"""What the host lets InnoTune change, from the host script's ``capabilities`` section.

No I/O here. A write test (``test -w``) is exact only when the script ran as root: root is
refused on a read-only mount and in a user namespace whose root is not the machine's, but
another user is refused everywhere. Without root, a read-only mount (mountinfo) still says
"no"; anything else stays unknown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from app.domain.facts import Capabilities, OsFacts
from app.inspect.host_block_devices import SYS_BLOCK
from app.inspect.host_mounts import Mount, mount_for
from app.inspect.host_output import Sections, key_values

KERNEL_DIR = "/proc/sys/vm/"
#: The uid a user namespace shows for a file whose owner it does not map (the machine's root).
OVERFLOW_UID = "65534"


def _read_only(path: str, mounts: Sequence[Mount]) -> bool | None:
    mount = mount_for(path, mounts)
    if mount is None:
        return None
    return "ro" in mount.options or "ro" in mount.super_options


def _yes(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get((value or "").strip())


def parse_capabilities(
    sections: Sections, mounts: Sequence[Mount]
) -> tuple[Capabilities, dict[str, bool]]:
    """The host's capabilities, and whether each block device's queue files are writable.

    Returns:
        The capabilities (all unknown when the script printed no such section) and a map
        from device name to True (every queue file writable) or False (any refused).
    """
    lines = sections.get("capabilities")
    if lines is None:
        return Capabilities(), {}
    kv = key_values(lines)
    uid = kv.get("uid", "").strip()
    as_root = uid == "0" if uid else None
    tested: dict[str, bool] = {}
    owners: dict[str, str] = {}
    for line in lines:
        verdict, _, path = line.partition(" ")
        if verdict in ("w", "ro") and path.startswith("/"):
            tested[path] = verdict == "w"
        elif verdict == "owner":
            owner, _, path = path.partition(" ")
            owners[path] = owner
    kernel, seen = _kernel(tested, owners, mounts, as_root)
    sysfs_ro = _read_only("/sys/class/block", mounts) if mounts else None
    queues: dict[str, bool] = {}
    for path, writable in tested.items():
        if not path.startswith(SYS_BLOCK):
            continue
        name = path[len(SYS_BLOCK) :].partition("/")[0]
        if sysfs_ro:
            writable = False
        elif not as_root and not writable:
            continue  # not root: a refusal says nothing
        queues[name] = queues.get(name, True) and writable
    caps = Capabilities(
        kernel_settings=kernel,
        kernel_settings_seen=seen,
        sysfs_read_only=sysfs_ro,
        udev_running=_yes(kv.get("udev-control")),
        udev_rules_dir=_yes(kv.get("udev-rules-dir")),
        udevadm=_yes(kv.get("udevadm")),
        as_root=as_root,
    )
    return caps, queues


def _kernel(
    tested: dict[str, bool],
    owners: dict[str, str],
    mounts: Sequence[Mount],
    as_root: bool | None,
) -> tuple[bool | None, str]:
    """Whether root may write the vm settings, and what was seen, in words."""
    if mounts and _read_only(KERNEL_DIR.rstrip("/"), mounts):
        return False, "/proc/sys is mounted read-only"
    if any(owner == OVERFLOW_UID for owner in owners.values()):
        return False, (
            "/proc/sys belongs to a user this host does not map (a user namespace, whose root "
            "is not the machine's)"
        )
    vm = {p: w for p, w in tested.items() if p.startswith(KERNEL_DIR)}
    if not vm or not as_root:
        return None, ""
    if all(vm.values()):
        return True, "root may write /proc/sys/vm"
    refused = sorted(p for p, w in vm.items() if not w)
    return False, f"root may not write {', '.join(refused)}"


def with_capabilities(facts: OsFacts, caps: Capabilities, queues: dict[str, bool]) -> OsFacts:
    """``facts`` with the capabilities recorded on the machine and on each device."""
    paths = tuple(
        dataclasses.replace(
            path,
            devices=tuple(
                dataclasses.replace(d, queue_writable=queues[d.name]) if d.name in queues else d
                for d in path.devices
            ),
        )
        for path in facts.write_paths
    )
    machine = dataclasses.replace(facts.machine, capabilities=caps)
    return dataclasses.replace(facts, machine=machine, write_paths=paths)
