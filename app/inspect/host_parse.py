"""Pure parsers: the host script's text in, machine and write-path facts out.

No I/O here. Every value comes from the text; what the text lacks becomes ``None``
with an :class:`~app.domain.facts.Unknown` saying which file was missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.domain.errors import InnoTuneError
from app.domain.facts import (
    BlockDevice,
    MachineFacts,
    OsFacts,
    ProcessMemory,
    Unknown,
    WritePath,
)

MARKER = "@@innotune "
SYS_BLOCK = "/sys/class/block/"

# Processes whose memory is the database's own, not "other" memory to leave room for.
DATABASE_PROCESSES = frozenset({"mysqld", "mariadbd", "mysqld_safe", "mariadbd-safe"})

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

VM_VENDORS = (
    ("QEMU", "qemu"),
    ("KVM", "kvm"),
    ("VMware", "vmware"),
    ("innotek", "oracle"),
    ("VirtualBox", "oracle"),
    ("Xen", "xen"),
    ("Amazon EC2", "amazon"),
    ("Google", "google"),
    ("Microsoft Corporation", "microsoft"),
    ("Parallels", "parallels"),
    ("Bochs", "bochs"),
    ("OpenStack", "kvm"),
)


class HostParseError(InnoTuneError):
    """The script output is not what the host script prints."""


class NotLinuxError(InnoTuneError):
    """The host is not running Linux; InnoTune reads Linux's /proc and /sys."""


@dataclass
class Sections:
    """The script output split at its marker lines."""

    parts: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str) -> list[str] | None:
        """The lines of section ``name``, or None when the script never printed it."""
        return self.parts.get(name)

    def lines(self, name: str) -> list[str]:
        """The lines of section ``name`` (empty when missing)."""
        return self.parts.get(name) or []


def split_sections(text: str) -> Sections:
    """Split the host script's output into named sections."""
    sections = Sections()
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(MARKER):
            current = []
            sections.parts[line[len(MARKER) :].strip()] = current
        elif current is not None and line != "":
            current.append(line)
    return sections


def key_values(lines: Sequence[str], sep: str = "=") -> dict[str, str]:
    """``key=value`` lines to a dict (first ``sep`` splits)."""
    out: dict[str, str] = {}
    for line in lines:
        key, found, value = line.partition(sep)
        if found:
            out[key.strip()] = value
    return out


def parse_attr_lines(lines: Sequence[str]) -> tuple[dict[str, str], set[str]]:
    """``path:value`` lines from ``attrs`` to {path: value}, plus the unreadable paths.

    The paths we read never contain ':' (kernel device names do not) but values may
    (``dev`` is ``8:0``), so the path ends at the first ':'.
    """
    values: dict[str, str] = {}
    unreadable: set[str] = set()
    for line in lines:
        if line.startswith("!unreadable "):
            unreadable.add(line[len("!unreadable ") :])
            continue
        path, found, value = line.partition(":")
        if found and path.startswith("/"):
            # A file of several lines keeps its first; none of the files we read has more.
            values.setdefault(path, value)
    return values, unreadable


# -- machine ------------------------------------------------------------------------------


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip().split()[0])
    except (ValueError, IndexError):
        return None


def bracketed(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """``"always [madvise] never"`` → ("madvise", all choices); no brackets → (sole value)."""
    if value is None:
        return None, ()
    words = value.split()
    current = None
    choices = []
    for word in words:
        if word.startswith("[") and word.endswith("]"):
            word = word[1:-1]
            current = word
        choices.append(word)
    if current is None and len(choices) == 1:
        current = choices[0]
    return current, tuple(choices)


def parse_os_release(lines: Sequence[str]) -> str | None:
    """PRETTY_NAME (or NAME VERSION_ID) from /etc/os-release."""
    kv = {k: v.strip().strip('"').strip("'") for k, v in key_values(lines).items()}
    if kv.get("PRETTY_NAME"):
        return kv["PRETTY_NAME"]
    if kv.get("NAME"):
        return " ".join(x for x in (kv["NAME"], kv.get("VERSION_ID", "")) if x)
    return None


def parse_meminfo(lines: Sequence[str]) -> dict[str, int]:
    """/proc/meminfo to bytes (values are in kB = KiB)."""
    out = {}
    for line in lines:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            mult = 1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1
            out[key.strip()] = int(parts[0]) * mult
    return out


def parse_processes(lines: Sequence[str], limit: int = 10) -> tuple[ProcessMemory, ...]:
    """``pid rss_kib name`` lines → the biggest other processes, database servers left out."""
    procs = []
    for line in lines:
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit():
            continue
        name = parts[2].strip()
        if name in DATABASE_PROCESSES:
            continue
        procs.append(ProcessMemory(int(parts[0]), name, int(parts[1]) * 1024))
    procs.sort(key=lambda p: (-p.rss_bytes, p.pid))
    return tuple(p for p in procs[:limit] if p.rss_bytes > 0)


def parse_cpu(
    cpuinfo: Sequence[str], files: dict[str, str]
) -> tuple[str | None, int | None, int | None, int | None, int | None]:
    """CPU model, sockets, cores, threads, and the count of 'hypervisor' flag lines."""
    model = None
    threads = 0
    cpuinfo_pairs: set[tuple[str, str]] = set()
    phys = core = None
    hyper = None
    full_flags = full_hyper = 0
    for line in cpuinfo:
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor" and value.isdigit():
            threads += 1
            phys = core = None
        elif key in ("model name", "Processor", "cpu model", "Hardware") and value and not model:
            model = value
        elif key == "physical id":
            phys = value
        elif key == "core id":
            core = value
        elif key == "hypervisor-flag-lines":
            hyper = _int(value)
        elif key == "flags":
            # Full /proc/cpuinfo (the script had no grep): count the flag lines ourselves.
            full_flags += 1
            full_hyper += "hypervisor" in value.split()
        if phys is not None and core is not None:
            cpuinfo_pairs.add((phys, core))
    if hyper is None and full_flags:
        hyper = full_hyper
    topo: dict[str, dict[str, str]] = {}
    for path, value in files.items():
        m = re.match(
            r"/sys/devices/system/cpu/(cpu\d+)/topology/(core_id|physical_package_id)$", path
        )
        if m:
            topo.setdefault(m.group(1), {})[m.group(2)] = value.strip()
    pairs = {
        (t.get("physical_package_id", "0"), t["core_id"]) for t in topo.values() if "core_id" in t
    }
    if not pairs:
        pairs = cpuinfo_pairs
    cores = len(pairs) or None
    sockets = len({p for p, _ in pairs}) or None
    if not threads:
        threads = len(topo)
    return model, sockets, cores, threads or None, hyper


def detect_virt(
    virt: Sequence[str], files: dict[str, str], hyper_lines: int | None, kernel: str | None
) -> tuple[str | None, str | None, list[Unknown]]:
    """Which hypervisor and which container, from systemd-detect-virt or the hints."""
    unknown: list[Unknown] = []
    kv = key_values(virt)
    vm: str | None = (kv.get("vm") or "").strip() or None
    container: str | None = (kv.get("container") or "").strip() or None
    if vm is None:
        hv_type = files.get("/sys/hypervisor/type", "").strip()
        dmi = " ".join(
            files.get(f"/sys/class/dmi/id/{k}", "").strip() for k in ("sys_vendor", "product_name")
        )
        for needle, name in VM_VENDORS:
            if needle.lower() in dmi.lower():
                vm = name
                break
        if vm is None and hv_type:
            vm = hv_type
        if vm is None and hyper_lines:
            vm = "unknown hypervisor"
        if vm is None and hyper_lines == 0:
            vm = "none"
        if vm is None:
            unknown.append(
                Unknown(
                    "virtualization",
                    "no systemd-detect-virt, no DMI vendor and no CPU flags could be read",
                )
            )
    if container is None:
        found = {line.split("=", 1)[1] for line in virt if line.startswith("file=")}
        env = [line.split("=", 2)[-1] for line in virt if line.startswith("env-container=")]
        cgroups = " ".join(line for line in virt if line.startswith("cgroup="))
        if env:
            container = env[0].strip()
        elif "/.dockerenv" in found:
            container = "docker"
        elif "/run/.containerenv" in found:
            container = "podman"
        elif "kubepods" in cgroups or "docker" in cgroups or "containerd" in cgroups:
            container = "docker"
        elif "lxc" in cgroups:
            container = "lxc"
        elif "libpod" in cgroups:
            container = "podman"
        elif "/proc/vz" in found:
            container = "openvz"
        elif kernel and "microsoft" in kernel.lower():
            container = "wsl"
        else:
            container = "none"
    return vm, container, unknown


def parse_machine(sections: Sections) -> MachineFacts:
    """The machine facts from the script output."""
    unknown: list[Unknown] = []
    uname = key_values(sections.lines("uname"))
    files, unreadable = parse_attr_lines(sections.lines("files"))

    def need(what: str, value: object, source: str) -> None:
        if value is None:
            why = (
                f"{source} could not be read (permission denied)"
                if source in unreadable
                else f"{source} is missing on this host"
            )
            unknown.append(Unknown(what, why))

    kernel = uname.get("release") or None
    distribution = parse_os_release(sections.lines("os-release"))
    need("kernel", kernel, "uname -r")
    need("distribution", distribution, "/etc/os-release")

    model, sockets, cores, threads, hyper = parse_cpu(sections.lines("cpuinfo"), files)
    need("CPU model", model, "/proc/cpuinfo")
    need("CPU cores", cores, "/sys/devices/system/cpu/cpu*/topology/core_id")
    need("CPU threads", threads, "/proc/cpuinfo")

    mem = parse_meminfo(sections.lines("meminfo"))
    for what, key in (
        ("RAM", "MemTotal"),
        ("available memory", "MemAvailable"),
        ("swap", "SwapTotal"),
        ("free swap", "SwapFree"),
    ):
        need(what, mem.get(key), f"/proc/meminfo {key}")

    thp_path = "/sys/kernel/mm/transparent_hugepage/"
    thp_enabled, _ = bracketed(files.get(thp_path + "enabled"))
    thp_defrag, _ = bracketed(files.get(thp_path + "defrag"))
    need("transparent hugepages", thp_enabled, thp_path + "enabled")
    need("transparent hugepages defrag", thp_defrag, thp_path + "defrag")

    vm_values: dict[str, int | None] = {}
    for name in ("swappiness", "dirty_ratio", "dirty_background_ratio"):
        path = f"/proc/sys/vm/{name}"
        vm_values[name] = _int(files.get(path))
        need(f"vm.{name}", vm_values[name], path)
    for name in ("dirty_bytes", "dirty_background_bytes"):
        path = f"/proc/sys/vm/{name}"
        vm_values[name] = _int(files.get(path))
        need(f"vm.{name}", vm_values[name], path)

    virt, container, virt_unknown = detect_virt(sections.lines("virt"), files, hyper, kernel)
    unknown += virt_unknown

    procs_lines = sections.get("processes")
    big = parse_processes(procs_lines or [])
    if not procs_lines:
        unknown.append(Unknown("other processes' memory", "neither awk nor ps could list them"))

    return MachineFacts(
        hostname=uname.get("nodename") or None,
        kernel=kernel,
        architecture=uname.get("machine") or None,
        distribution=distribution,
        cpu_model=model,
        cpu_sockets=sockets,
        cpu_cores=cores,
        cpu_threads=threads,
        mem_total_bytes=mem.get("MemTotal"),
        mem_available_bytes=mem.get("MemAvailable"),
        swap_total_bytes=mem.get("SwapTotal"),
        swap_free_bytes=mem.get("SwapFree"),
        virtualization=virt,
        container=container,
        thp_enabled=thp_enabled,
        thp_defrag=thp_defrag,
        swappiness=vm_values["swappiness"],
        dirty_ratio=vm_values["dirty_ratio"],
        dirty_background_ratio=vm_values["dirty_background_ratio"],
        dirty_bytes=vm_values["dirty_bytes"],
        dirty_background_bytes=vm_values["dirty_background_bytes"],
        big_processes=big,
        unknown=tuple(unknown),
    )


# -- mounts -------------------------------------------------------------------------------


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


# -- block devices --------------------------------------------------------------------------


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
        nr_requests = _int(a.get("queue/nr_requests"))
        read_ahead = _int(a.get("queue/read_ahead_kb"))
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
    size = _int(a.get("size"))
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
        md_raid_disks=_int(a.get("md/raid_disks")),
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


def _decode_hex_majmin(value: str) -> str | None:
    m = re.fullmatch(r"([0-9a-fA-F]+):([0-9a-fA-F]+)", value.strip())
    return f"{int(m.group(1), 16)}:{int(m.group(2), 16)}" if m else None


def parse_write_path(
    directory: str,
    lines: Sequence[str],
    mounts: Sequence[Mount],
    raws: dict[str, RawDevice],
    drivers: dict[str, str],
    mounts_source: str,
) -> WritePath:
    """One ``path N`` section plus the shared mount and device data → a WritePath."""
    unknown: list[Unknown] = []
    kv = key_values(lines)
    real = kv.get("real") or None
    if real is None:
        return WritePath(
            directory=directory,
            unknown=(
                Unknown(
                    f"{directory}: write path",
                    "the directory does not exist or cannot be entered on the host",
                ),
            ),
        )
    total, free = parse_df(lines)
    if total is None:
        unknown.append(Unknown(f"{directory}: free space", "df -P -k printed no usable line"))
    mount = mount_for(real, mounts)
    if mount is None:
        unknown.append(
            Unknown(f"{directory}: mount", f"{mounts_source} was missing or named no mount")
        )
        return WritePath(
            directory=directory,
            real_path=real,
            total_bytes=total,
            free_bytes=free,
            unknown=tuple(unknown),
        )
    by_dev = {raw.attrs.get("dev"): name for name, raw in raws.items() if raw.attrs.get("dev")}
    top = by_dev.get(mount.maj_min) if mount.maj_min else None
    if top is None and kv.get("srcdev"):
        top = by_dev.get(_decode_hex_majmin(kv["srcdev"]) or "")
    if top is None and mount.source.startswith("/dev/"):
        base = mount.source.rsplit("/", 1)[-1]
        top = base if base in raws else None
        if top is None:
            top = next((n for n, r in raws.items() if r.attrs.get("dm/name") == base), None)
    devices: tuple[BlockDevice, ...] = ()
    if top is None:
        unknown.append(
            Unknown(
                f"{directory}: block devices",
                f"the filesystem ({mount.fs_type} from {mount.source}) is not on a block "
                "device this host shows in /sys/class/block",
            )
        )
    else:
        devices, chain_unknown = chain(top, raws, drivers)
        unknown += chain_unknown
    return WritePath(
        directory=directory,
        real_path=real,
        mount_point=mount.mount_point,
        fs_type=mount.fs_type,
        source=mount.source,
        mount_options=mount.options,
        super_options=mount.super_options,
        total_bytes=total,
        free_bytes=free,
        device=top,
        devices=devices,
        unknown=tuple(unknown),
    )


def parse_host_output(
    text: str, directories: Sequence[str] = (), *, commands_run: int = 1
) -> OsFacts:
    """The whole script output → OsFacts.

    Raises:
        NotLinuxError: uname says the host is not Linux.
        HostParseError: the text is not the host script's output.
    """
    sections = split_sections(text)
    uname = sections.get("uname")
    if uname is None:
        raise HostParseError(
            "The host did not print the inspection script's output.",
            "Check that the login shell can run /bin/sh scripts.",
        )
    sysname = key_values(uname).get("sysname", "").strip()
    if sysname != "Linux":
        raise NotLinuxError(
            f"This host runs {sysname or 'an unknown system'}, and InnoTune is Linux only.",
            "Inspect a Linux host: InnoTune reads Linux's /proc and /sys.",
        )
    machine = parse_machine(sections)
    if sections.get("mountinfo"):
        mounts = parse_mountinfo(sections.lines("mountinfo"))
        mounts_source = "/proc/self/mountinfo"
    else:
        mounts = parse_proc_mounts(sections.lines("mounts"))
        mounts_source = "/proc/mounts"
    files, _ = parse_attr_lines(sections.lines("files"))
    raws = parse_block_raw(sections)
    drivers = scsi_drivers(files)
    paths = []
    for i, directory in enumerate(directories):
        lines = sections.get(f"path {i}")
        if lines is None:
            paths.append(
                WritePath(
                    directory=directory,
                    unknown=(Unknown(f"{directory}: write path", "the script stopped early"),),
                )
            )
            continue
        paths.append(parse_write_path(directory, lines, mounts, raws, drivers, mounts_source))
    unknown: list[Unknown] = []
    if sections.get("end") is None:
        unknown.append(Unknown("host script", "the output ended before its last section"))
    return OsFacts(
        machine=machine,
        write_paths=tuple(paths),
        commands_run=commands_run,
        unknown=tuple(unknown),
    )
