"""The machine's facts from the host script's output: OS, CPU, memory, kernel, virtualization.

No I/O here. What the text lacks becomes ``None`` with an
:class:`~app.domain.facts.Unknown` saying which file was missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.domain.facts import MachineFacts, ProcessMemory, Unknown
from app.inspect.host_output import (
    Sections,
    bracketed,
    key_values,
    leading_int,
    parse_attr_lines,
)

# Processes whose memory is the database's own, not "other" memory to leave room for.
DATABASE_PROCESSES = frozenset({"mysqld", "mariadbd", "mysqld_safe", "mariadbd-safe"})


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


#: The database servers themselves (their start-up wrappers are not servers).
SERVER_PROCESSES = frozenset({"mysqld", "mariadbd"})


def parse_database_processes(lines: Sequence[str]) -> tuple[ProcessMemory, ...]:
    """``pid rss_kib name`` lines → every mysqld/mariadbd process, largest first."""
    procs = []
    for line in lines:
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit():
            continue
        if parts[2].strip() in SERVER_PROCESSES:
            procs.append(ProcessMemory(int(parts[0]), parts[2].strip(), int(parts[1]) * 1024))
    procs.sort(key=lambda p: (-p.rss_bytes, p.pid))
    return tuple(procs)


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
            hyper = leading_int(value)
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
        vm_values[name] = leading_int(files.get(path))
        need(f"vm.{name}", vm_values[name], path)
    for name in ("dirty_bytes", "dirty_background_bytes"):
        path = f"/proc/sys/vm/{name}"
        vm_values[name] = leading_int(files.get(path))
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
        database_processes=parse_database_processes(procs_lines or []),
        unknown=tuple(unknown),
    )
