"""The host script's whole output in, OS facts out: the machine and each directory's write path.

A write path joins the directory's mount (:mod:`app.inspect.host_mounts`) to its chain of
block devices (:mod:`app.inspect.host_block_devices`); the machine facts are
:mod:`app.inspect.host_machine`'s. No I/O here. Every value comes from the text; what the
text lacks becomes ``None`` with an :class:`~app.domain.facts.Unknown` saying which file
was missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.errors import InnoTuneError
from app.domain.facts import BlockDevice, OsFacts, Unknown, WritePath
from app.inspect.host_block_devices import (
    RawDevice,
    chain,
    parse_block_raw,
    scsi_drivers,
)
from app.inspect.host_capabilities import parse_capabilities, with_capabilities
from app.inspect.host_machine import parse_machine
from app.inspect.host_mounts import Mount, mount_for, parse_df, parse_mountinfo, parse_proc_mounts
from app.inspect.host_output import key_values, parse_attr_lines, split_sections


class HostParseError(InnoTuneError):
    """The script output is not what the host script prints."""


class NotLinuxError(InnoTuneError):
    """The host is not running Linux; InnoTune reads Linux's /proc and /sys."""


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
    facts = OsFacts(
        machine=machine,
        write_paths=tuple(paths),
        commands_run=commands_run,
        unknown=tuple(unknown),
    )
    caps, queues = parse_capabilities(sections, mounts)
    return with_capabilities(facts, caps, queues)
