"""Facts about a host's machine and the write path of a directory, as plain values.

Every fact that could not be read is ``None`` and has an :class:`Unknown` entry saying
what and why: a missing /sys file means "unknown", never a guess. All values round-trip
through JSON (:func:`to_json` / :func:`from_json`), so a saved inspection can stand in
for a live host.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


# Transports of a disk given to a virtual machine: its rotational flag says nothing of the
# disk behind it.
VIRTUAL_TRANSPORTS = ("virtio", "xen", "virtual")


@dataclass(frozen=True)
class Unknown:
    """A fact that could not be read, and why."""

    what: str
    why: str


@dataclass(frozen=True)
class ProcessMemory:
    """A process and the memory it holds (resident set size)."""

    pid: int
    name: str
    rss_bytes: int


@dataclass(frozen=True)
class Capabilities:
    """What the host lets a root process change, as inspection saw it.

    ``None`` is "not known" (facts saved before InnoTune looked, or a check that could not
    be made); the planner then proposes as before and the job finds out.
    """

    kernel_settings: bool | None = None  # /proc/sys/vm writable by root
    kernel_settings_seen: str = ""  # what was seen, e.g. "/proc/sys is mounted read-only"
    sysfs_read_only: bool | None = None  # /sys is mounted read-only
    udev_running: bool | None = None  # a udev daemon listens (/run/udev/control exists)
    udev_rules_dir: bool | None = None  # /etc/udev/rules.d exists
    udevadm: bool | None = None  # the udevadm command is installed
    as_root: bool | None = None  # the checks ran as root (a write test then is exact)

    @property
    def udev(self) -> bool | None:
        """True when a udev rule would be read; False when nothing would read one."""
        if self.udev_running is False or self.udev_rules_dir is False:
            return False
        if self.udev_running and self.udev_rules_dir:
            return True
        return None

    @property
    def udev_seen(self) -> str:
        """What was missing, in words ("/run/udev/control is missing, so no udev daemon runs")."""
        missing = []
        if self.udev_running is False:
            missing.append("/run/udev/control is missing, so no udev daemon runs")
        if self.udev_rules_dir is False:
            missing.append("/etc/udev/rules.d does not exist")
        return ", and ".join(missing)


@dataclass(frozen=True)
class MachineFacts:
    """The machine: CPU, memory, kernel, virtualisation and the VM tunables."""

    hostname: str | None = None
    kernel: str | None = None
    architecture: str | None = None
    distribution: str | None = None
    cpu_model: str | None = None
    cpu_sockets: int | None = None
    cpu_cores: int | None = None
    cpu_threads: int | None = None
    mem_total_bytes: int | None = None
    mem_available_bytes: int | None = None
    swap_total_bytes: int | None = None
    swap_free_bytes: int | None = None
    virtualization: str | None = None  # e.g. "kvm", "vmware", or "none" for bare metal
    container: str | None = None  # e.g. "docker", "lxc", or "none"
    thp_enabled: str | None = None  # always / madvise / never
    thp_defrag: str | None = None
    swappiness: int | None = None
    dirty_ratio: int | None = None
    dirty_background_ratio: int | None = None
    dirty_bytes: int | None = None
    dirty_background_bytes: int | None = None
    big_processes: tuple[ProcessMemory, ...] = ()  # largest RSS first, mysqld/mariadbd left out
    # mysqld/mariadbd processes (this server and any other on the host, in containers too)
    database_processes: tuple[ProcessMemory, ...] = ()
    unknown: tuple[Unknown, ...] = ()
    capabilities: Capabilities = Capabilities()


@dataclass(frozen=True)
class BlockDevice:
    """One device on a write path: a partition, a dm or md device, a loop or a disk.

    ``lower`` names the devices this one sits on (a partition's disk, an LV's PVs, an
    array's members); physical devices have none. Queue facts (scheduler, rotational,
    ...) belong to whole devices; a partition leaves them ``None`` because its disk has
    them.
    """

    name: str
    kind: str  # partition, dm, md, loop, disk
    maj_min: str | None = None
    size_bytes: int | None = None
    lower: tuple[str, ...] = ()
    rotational: bool | None = None
    model: str | None = None
    vendor: str | None = None
    transport: str | None = None  # nvme, sata, sas, scsi, virtio, xen, mmc, usb, loop, virtual
    scheduler: str | None = None
    schedulers_available: tuple[str, ...] = ()
    nr_requests: int | None = None
    read_ahead_kb: int | None = None
    write_cache: str | None = None  # "write back" / "write through"
    dm_name: str | None = None
    dm_uuid: str | None = None
    dm_target: str | None = None  # lvm, crypt, multipath, partition, other
    md_level: str | None = None
    md_raid_disks: int | None = None
    hw_raid_hint: str | None = None
    stable_id: str | None = None
    stable_id_source: str | None = None  # which /sys file gave stable_id
    scsi_driver: str | None = None
    # Whether root may write its queue files here (False: /sys read-only, a container's).
    queue_writable: bool | None = None

    @property
    def is_physical(self) -> bool:
        """True for a device at the bottom of a chain (nothing below it)."""
        return not self.lower and self.kind in ("disk", "loop")


@dataclass(frozen=True)
class WritePath:
    """Where a directory's writes go: its filesystem and the devices below it."""

    directory: str
    real_path: str | None = None
    mount_point: str | None = None
    fs_type: str | None = None
    source: str | None = None
    mount_options: tuple[str, ...] = ()
    super_options: tuple[str, ...] = ()
    total_bytes: int | None = None
    free_bytes: int | None = None
    device: str | None = None  # the top device (what the filesystem sits on)
    devices: tuple[BlockDevice, ...] = ()  # top first, then downwards, each once
    unknown: tuple[Unknown, ...] = ()

    def find(self, name: str) -> BlockDevice | None:
        """The device called ``name`` on this path, if any."""
        return next((d for d in self.devices if d.name == name), None)

    @property
    def physical(self) -> tuple[BlockDevice, ...]:
        """The physical devices at the bottom of the chain."""
        return tuple(d for d in self.devices if d.is_physical)

    @property
    def data_mode(self) -> str | None:
        """ext4's ``data=`` mode when the mount shows it (kernels hide the default, ordered)."""
        return self.option("data")

    @property
    def barriers_off(self) -> bool:
        """True when the mount turns write barriers (cache flushes) off."""
        return self.option("nobarrier") is not None or self.option("barrier") == "0"

    @property
    def noatime(self) -> bool:
        """True when reads do not update access times."""
        return self.option("noatime") is not None

    def option(self, name: str) -> str | None:
        """A mount or superblock option's value ("" for a flag), or None when absent."""
        for opt in self.mount_options + self.super_options:
            key, _, value = opt.partition("=")
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class OsFacts:
    """Everything the operating system told us: the machine and the write paths asked for."""

    machine: MachineFacts
    write_paths: tuple[WritePath, ...] = ()
    commands_run: int = 0
    unknown: tuple[Unknown, ...] = ()

    def path(self, directory: str) -> WritePath | None:
        """The write path gathered for ``directory``."""
        return next((p for p in self.write_paths if p.directory == directory), None)


@dataclass(frozen=True)
class DiskProbe:
    """A bounded measurement of how fast a filesystem takes synced and sequential writes."""

    directory: str
    method: str  # python3 or dd
    sync_writes_per_s: float | None = None  # synced 4 KiB writes per second
    seq_write_mb_s: float | None = None  # sequential write MB/s (10^6 bytes), fsync included
    bytes_written: int = 0
    seconds: float = 0.0
    unknown: tuple[Unknown, ...] = ()
    # What innodb_io_capacity means: page-size writes per second the disk takes from
    # ``page_queue_depth`` writers at once (O_DIRECT where the filesystem allows it).
    page_writes_per_s: float | None = None
    page_queue_depth: int = 0
    page_method: str = ""  # "fio", "python3 O_DIRECT", "python3 O_DSYNC"


# -- JSON ---------------------------------------------------------------------------------


_FIELDS: dict[type, tuple[tuple[str, Any], ...] | None] = {}


def _fields(cls: type) -> tuple[tuple[str, Any], ...] | None:
    """A dataclass's field names and types (None: not a dataclass), looked up once per class.

    Asked again for each of the facts' thousands of values, ``typing.get_type_hints`` cost
    more than the conversion itself.
    """
    if cls not in _FIELDS:
        hints = typing.get_type_hints(cls) if dataclasses.is_dataclass(cls) else None
        _FIELDS[cls] = (
            tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))
            if hints is not None
            else None
        )
    return _FIELDS[cls]


def to_jsonable(value: Any) -> Any:
    """Turn a facts value (dataclasses, tuples, scalars) into JSON-ready data."""
    if value is None or isinstance(value, str | int | float):
        return value
    fields = _fields(type(value))
    if fields is not None:
        return {name: to_jsonable(getattr(value, name)) for name, _ in fields}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


def from_jsonable(cls: type[T], data: Any) -> T:
    """Rebuild a value of type ``cls`` from :func:`to_jsonable` output.

    Raises:
        ValueError: the data does not fit the type.
    """
    return typing.cast(T, _build(cls, data, cls.__name__))


def _build(tp: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _build(arg, data, where)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(f"{where}: {data!r} fits none of {args}: {'; '.join(errors)}")
    if origin is tuple:
        if not isinstance(data, list | tuple):
            raise ValueError(f"{where}: expected a list, got {data!r}")
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise ValueError(f"{where}: expected {len(args)} items, got {len(data)}")
        pairs = enumerate(zip(args, data, strict=True))
        return tuple(_build(a, v, f"{where}[{i}]") for i, (a, v) in pairs)
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {data!r}")
        return {_build(key_t, k, where): _build(val_t, v, f"{where}.{k}") for k, v in data.items()}
    fields = _fields(tp) if isinstance(tp, type) else None
    if fields is not None:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {data!r}")
        kwargs = {
            name: _build(hint, data[name], f"{where}.{name}")
            for name, hint in fields
            if name in data
        }
        return tp(**kwargs)
    if tp is float:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data)
        raise ValueError(f"{where}: expected a number, got {data!r}")
    if tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        raise ValueError(f"{where}: expected an integer, got {data!r}")
    if tp in (str, bool):
        if isinstance(data, tp):
            return data
        raise ValueError(f"{where}: expected {tp.__name__}, got {data!r}")
    if tp is type(None):
        if data is None:
            return None
        raise ValueError(f"{where}: expected null, got {data!r}")
    raise ValueError(f"{where}: cannot rebuild type {tp!r}")


def to_json(value: Any, *, indent: int | None = 2) -> str:
    """Serialise a facts value to JSON text."""
    return json.dumps(to_jsonable(value), indent=indent, sort_keys=False)


def from_json(cls: type[T], text: str) -> T:
    """Parse JSON text written by :func:`to_json` back into a ``cls`` value."""
    return from_jsonable(cls, json.loads(text))
