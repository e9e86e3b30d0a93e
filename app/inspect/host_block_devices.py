"""Block devices from the host script's output: /sys/class/block read and interpreted.

Each device's kind, transport, queue settings, RAID hints and stable identifier, and
the chain from a filesystem's device down to the physical disks. No I/O here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.domain.facts import BlockDevice, Unknown
from app.inspect.host_output import (
    Sections,
    bracketed,
    leading_int,
    parse_attr_lines,
    split_sections,
)

SYS_BLOCK = "/sys/class/block/"

# Model/vendor strings and SCSI drivers that mean a hardware RAID controller presents
# the disk: its rotational flag and cache mode describe the controller's volume.
# Not "Virtual disk": that is VMware's model for an ordinary VMDK.
HW_RAID_MODEL = re.compile(
    r"PERC|MegaRAID|Smart\s*Array|LOGICAL\s+VOLUME|ServeRAID|MR\d{4}|RAID|"
    r"AVAGO|Adaptec|\bASR\d|\bAAC\b|3ware|Areca|ARC-\d",
    re.IGNORECASE,
)
HW_RAID_VENDORS = frozenset({"LSI", "AVAGO", "BROADCOM", "ADAPTEC", "AMCC", "ARECA"})
HW_RAID_DRIVERS = {
    "megaraid_sas": "LSI/Broadcom MegaRAID (megaraid_sas)",
    "megaraid": "LSI MegaRAID (megaraid)",
    "hpsa": "HP/HPE Smart Array (hpsa)",
    "cciss": "HP Smart Array (cciss)",
    "smartpqi": "Microchip/HPE SmartRAID (smartpqi)",
    "aacraid": "Adaptec RAID (aacraid)",
    "arcmsr": "Areca RAID (arcmsr)",
    "3w-9xxx": "3ware RAID (3w-9xxx)",
    "3w-sas": "3ware RAID (3w-sas)",
    "ips": "IBM ServeRAID (ips)",
}


@dataclass
class RawDevice:
    """What /sys says about one block device, before interpretation."""

    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    unreadable: set[str] = field(default_factory=set)
    slaves: list[str] = field(default_factory=list)
    parent: str | None = None  # for a partition, its whole disk
    link: str | None = None  # the /sys/class/block symlink target


def parse_block_raw(sections: Sections) -> dict[str, RawDevice]:
    """The block-links and block-attrs sections to raw devices by kernel name."""
    devices: dict[str, RawDevice] = {}

    def dev(name: str) -> RawDevice:
        return devices.setdefault(name, RawDevice(name))

    for line in sections.lines("block-links"):
        m = re.search(r"\s(\S+) -> (\S+)$", line)
        if m:
            dev(m.group(1)).link = m.group(2)
    attr_lines = [ln for ln in sections.lines("block-attrs") if not ln.startswith("slave:")]
    values, unreadable = parse_attr_lines(attr_lines)
    for path, value in values.items():
        if path.startswith(SYS_BLOCK):
            name, _, attr = path[len(SYS_BLOCK) :].partition("/")
            dev(name).attrs[attr] = value.strip()
            continue
        m = re.match(r"/sys/block/([^/]+)/([^/]+)/partition$", path)
        if m:
            part = dev(m.group(2))
            part.parent = m.group(1)
            part.attrs.setdefault("partition", value.strip())
    for path in unreadable:
        if path.startswith(SYS_BLOCK):
            name, _, attr = path[len(SYS_BLOCK) :].partition("/")
            dev(name).unreadable.add(attr)
    for line in sections.lines("block-attrs"):
        if line.startswith("slave:"):
            m = re.match(r"slave:" + re.escape(SYS_BLOCK) + r"([^/]+)/slaves/([^/]+)$", line)
            if m and m.group(2) != "*":
                dev(m.group(1)).slaves.append(m.group(2))
    for raw in devices.values():
        if raw.parent is None and "partition" in raw.attrs and raw.link:
            # …/block/sda/sda1: the directory above a partition is its disk.
            parts = raw.link.rstrip("/").split("/")
            if len(parts) >= 2:
                raw.parent = parts[-2]
        raw.slaves.sort()
    return devices


def scsi_drivers(files: dict[str, str]) -> dict[str, str]:
    """``host0`` → its SCSI driver (proc_name), from /sys/class/scsi_host."""
    out = {}
    for path, value in files.items():
        m = re.match(r"/sys/class/scsi_host/(host\d+)/proc_name$", path)
        if m:
            out[m.group(1)] = value.strip()
    return out


def device_kind(raw: RawDevice) -> str:
    """partition, dm, md, loop or disk."""
    if "partition" in raw.attrs or raw.parent:
        return "partition"
    if raw.name.startswith("dm-") or "dm/name" in raw.attrs or "dm/uuid" in raw.attrs:
        return "dm"
    if re.match(r"md\d+$|md_", raw.name) or "md/level" in raw.attrs:
        return "md"
    if raw.name.startswith("loop"):
        return "loop"
    return "disk"


def transport_of(raw: RawDevice) -> str | None:
    """How a whole device is attached, from its sysfs path, name and vendor."""
    name, link = raw.name, raw.link or ""
    vendor = raw.attrs.get("device/vendor", "").strip()
    if name.startswith("loop"):
        return "loop"
    if name.startswith("nvme") or "/nvme" in link:
        fabric = raw.attrs.get("device/transport", "").strip()
        return "nvme" if fabric in ("", "pcie") else f"nvme-{fabric}"
    if "/usb" in link:
        return "usb"
    if re.search(r"/ata\d+/", link):
        return "sata"
    if re.search(r"/end_device-|/port-\d", link):
        return "sas"
    if "/session" in link:
        return "iscsi"
    if "/rport-" in link:
        return "fc"
    if "/virtio" in link or re.match(r"vd[a-z]+$", name):
        return "virtio"
    if "vbd-" in link or name.startswith("xvd"):
        return "xen"
    if "/mmc" in link or name.startswith("mmcblk"):
        return "mmc"
    if vendor == "ATA":
        # libata presents SATA disks to the SCSI layer with the vendor "ATA".
        return "sata"
    if "/devices/virtual/" in link or name.startswith(("zram", "ram", "nbd", "rbd")):
        return "virtual"
    if re.search(r"/host\d+/target", link):
        return "scsi"
    return None


def hw_raid_hint(raw: RawDevice, drivers: dict[str, str]) -> str | None:
    """Why we think a hardware RAID controller presents this disk, or None."""
    model = raw.attrs.get("device/model", "").strip()
    vendor = raw.attrs.get("device/vendor", "").strip()
    m = re.search(r"/(host\d+)/", raw.link or "")
    driver = drivers.get(m.group(1)) if m else None
    if driver in HW_RAID_DRIVERS:
        return f"SCSI driver {HW_RAID_DRIVERS[driver]}"
    if model and HW_RAID_MODEL.search(model):
        return f"model {model!r}" + (f" from vendor {vendor!r}" if vendor else "")
    if vendor.upper() in HW_RAID_VENDORS:
        return f"vendor {vendor!r}"
    return None


def dm_target(uuid: str | None) -> str | None:
    """What owns a device-mapper device, from its uuid prefix."""
    if not uuid:
        return None
    if uuid.startswith("LVM-"):
        return "lvm"
    if uuid.startswith("CRYPT-"):
        return "crypt"
    if uuid.startswith("mpath-"):
        return "multipath"
    if re.match(r"part\d+-", uuid):
        return "partition"
    return "other"


def stable_id(raw: RawDevice, kind: str) -> tuple[str | None, str | None]:
    """An identifier a udev rule can match on, and the /sys file it came from."""
    a = raw.attrs
    for key in ("wwid", "device/wwid", "serial", "device/serial"):
        value = a.get(key, "").strip()
        if value:
            return value, key
    if kind == "dm" and a.get("dm/uuid"):
        return a["dm/uuid"], "dm/uuid"
    if kind == "loop" and a.get("loop/backing_file"):
        return a["loop/backing_file"], "loop/backing_file"
    return None, None


QUEUE_FACTS = (
    ("rotational", "queue/rotational"),
    ("scheduler", "queue/scheduler"),
    ("nr_requests", "queue/nr_requests"),
    ("read_ahead_kb", "queue/read_ahead_kb"),
    ("write_cache", "queue/write_cache"),
)


def describe_device(
    raw: RawDevice, drivers: dict[str, str], devices: dict[str, RawDevice]
) -> tuple[BlockDevice, list[Unknown]]:
    """Interpret one raw device; list the facts that could not be read."""
    unknown: list[Unknown] = []
    a = raw.attrs
    kind = device_kind(raw)

    def missing(attr: str, what: str) -> None:
        why = (
            f"{SYS_BLOCK}{raw.name}/{attr} could not be read (permission denied)"
            if attr in raw.unreadable
            else f"{SYS_BLOCK}{raw.name}/{attr} is missing on this host"
        )
        unknown.append(Unknown(f"{raw.name}: {what}", why))

    lower: tuple[str, ...]
    if kind == "partition":
        lower = (raw.parent,) if raw.parent else ()
        if not raw.parent:
            unknown.append(Unknown(f"{raw.name}: disk", "the partition's disk was not found"))
    else:
        lower = tuple(s for s in raw.slaves if s != raw.name)

    rotational = scheduler = nr_requests = read_ahead = write_cache = None
    available: tuple[str, ...] = ()
    if kind != "partition":
        rot = a.get("queue/rotational")
        rotational = {"1": True, "0": False}.get(rot.strip()) if rot is not None else None
        scheduler, available = bracketed(a.get("queue/scheduler"))
        nr_requests = leading_int(a.get("queue/nr_requests"))
        read_ahead = leading_int(a.get("queue/read_ahead_kb"))
        write_cache = a.get("queue/write_cache") or None
        for (what, attr), value in zip(
            QUEUE_FACTS, (rotational, scheduler, nr_requests, read_ahead, write_cache), strict=True
        ):
            if value is None:
                missing(attr, what)

    transport = None
    model = (a.get("device/model") or "").strip() or None
    vendor = (a.get("device/vendor") or "").strip() or None
    hint = None
    if kind in ("disk", "loop"):
        transport = transport_of(raw)
        if transport is None:
            unknown.append(Unknown(f"{raw.name}: transport", "its sysfs path names no known bus"))
        if model is None and kind == "disk":
            missing("device/model", "model")
        hint = hw_raid_hint(raw, drivers)
    md_level = a.get("md/level") or None
    if kind == "md" and md_level is None:
        missing("md/level", "RAID level")
    if kind == "dm" and not a.get("dm/name"):
        missing("dm/name", "device-mapper name")
    ident, ident_src = stable_id(raw, kind)
    if kind in ("disk", "loop") and ident is None:
        unknown.append(
            Unknown(
                f"{raw.name}: stable identifier",
                "no wwid, serial or backing file in /sys (a udev rule would match by name)",
            )
        )
    m = re.search(r"/(host\d+)/", raw.link or "")
    size = leading_int(a.get("size"))
    device = BlockDevice(
        name=raw.name,
        kind=kind,
        maj_min=a.get("dev") or None,
        size_bytes=size * 512 if size is not None else None,
        lower=lower,
        rotational=rotational,
        model=model,
        vendor=vendor,
        transport=transport,
        scheduler=scheduler,
        schedulers_available=available,
        nr_requests=nr_requests,
        read_ahead_kb=read_ahead,
        write_cache=write_cache,
        dm_name=a.get("dm/name") or None,
        dm_uuid=a.get("dm/uuid") or None,
        dm_target=dm_target(a.get("dm/uuid")),
        md_level=md_level,
        md_raid_disks=leading_int(a.get("md/raid_disks")),
        hw_raid_hint=hint,
        stable_id=ident,
        stable_id_source=ident_src,
        scsi_driver=drivers.get(m.group(1)) if m else None,
    )
    del devices
    return device, unknown


def parse_block_devices(text: str) -> dict[str, BlockDevice]:
    """Every block device the script saw, interpreted (for tests and the UI)."""
    sections = split_sections(text)
    files, _ = parse_attr_lines(sections.lines("files"))
    raws = parse_block_raw(sections)
    drivers = scsi_drivers(files)
    return {name: describe_device(raw, drivers, raws)[0] for name, raw in raws.items()}


def chain(
    top: str, raws: dict[str, RawDevice], drivers: dict[str, str]
) -> tuple[tuple[BlockDevice, ...], list[Unknown]]:
    """The devices from ``top`` down to the physical ones, each once, top first."""
    seen: dict[str, BlockDevice] = {}
    unknown: list[Unknown] = []
    queue = [top]
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        raw = raws.get(name)
        if raw is None:
            unknown.append(Unknown(f"{name}", f"{SYS_BLOCK}{name} is missing on this host"))
            continue
        device, dev_unknown = describe_device(raw, drivers, raws)
        seen[name] = device
        unknown += dev_unknown
        queue.extend(device.lower)
    return tuple(seen.values()), unknown
