"""Facts as text a person reads: the `innotune inspect` summary (pure)."""

from __future__ import annotations

from app.domain.container import Container
from app.domain.facts import (
    VIRTUAL_TRANSPORTS,
    BlockDevice,
    Capabilities,
    MachineFacts,
    WritePath,
)
from app.domain.hostfacts import HostFacts
from app.domain.serverfacts import ErrorLog, ServerFacts
from app.domain.service import ServiceInfo
from app.domain.words import count

STARTED_BY = {
    "systemd": "started by systemd",
    "sysv": "started by a SysV init script",
    "mysqld_safe": "started through mysqld_safe",
    "manual": "started by hand",
    "container": "in a container",
    "unknown": "started somehow unknown",
}


def size(n: int | float | None) -> str:
    """Bytes in binary units, or "unknown"."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def _known(value: object, suffix: str = "") -> str:
    return "unknown" if value is None else f"{value}{suffix}"


def machine_lines(m: MachineFacts) -> list[str]:
    """The machine: OS, CPU, memory, kernel settings, other big processes."""
    virt = m.virtualization or "unknown"
    lines = [
        f"System: {m.distribution or 'unknown distribution'}, kernel {m.kernel or 'unknown'}, "
        f"virtualisation {virt}, container {m.container or 'unknown'}",
        f"CPU: {m.cpu_model or 'unknown model'}, {_known(m.cpu_cores)} cores, "
        f"{_known(m.cpu_threads)} threads",
        f"Memory: {size(m.mem_total_bytes)} RAM ({size(m.mem_available_bytes)} available), "
        f"swap {size(m.swap_total_bytes)}",
        f"Kernel: swappiness {_known(m.swappiness)}, dirty_ratio {_known(m.dirty_ratio)}, "
        f"dirty_background_ratio {_known(m.dirty_background_ratio)}, "
        f"transparent hugepages {m.thp_enabled or 'unknown'}",
    ]
    if m.big_processes:
        top = ", ".join(f"{p.name} {size(p.rss_bytes)}" for p in m.big_processes[:5])
        lines.append(f"Other big processes: {top}")
    if m.database_processes:
        servers = ", ".join(
            f"{p.name} (pid {p.pid}) {size(p.rss_bytes)}" for p in m.database_processes
        )
        lines.append(f"Database servers' memory in use: {servers}")
    can = capability_line(m.capabilities)
    if can:
        lines.append(can)
    return lines


def capability_line(c: Capabilities) -> str | None:
    """What the host lets InnoTune change, when inspection could tell."""
    parts = []
    if c.kernel_settings is not None:
        seen = f" ({c.kernel_settings_seen})" if c.kernel_settings_seen else ""
        parts.append(f"kernel settings {'yes' if c.kernel_settings else 'no' + seen}")
    if c.sysfs_read_only:
        parts.append("disk queues no (/sys is mounted read-only)")
    if c.udev is not None:
        parts.append(f"udev rules {'yes' if c.udev else 'no (' + c.udev_seen + ')'}")
    return "Can change: " + "; ".join(parts) if parts else None


def device_text(d: BlockDevice) -> str:
    """One device of a write path on one line."""
    kind = {True: "spinning", False: "not spinning", None: "whether it spins is not known"}
    parts = [f"{d.name} ({d.kind}"]
    if d.transport:
        parts.append(f", {d.transport}")
    if d.model:
        parts.append(f", {d.model}")
    parts.append(")")
    if d.transport in VIRTUAL_TRANSPORTS:
        # The flag a virtual disk reports says nothing of the disk behind it.
        said = {True: "spinning", False: "not spinning", None: "nothing"}[d.rotational]
        details = [f"a virtual disk (it reports {said}; whether it spins is not known)"]
    else:
        details = [kind[d.rotational]]
    if d.scheduler or d.schedulers_available:
        details.append(
            f"scheduler {d.scheduler or 'unknown'} of {' '.join(d.schedulers_available)}"
        )
    if d.read_ahead_kb is not None:
        details.append(f"read-ahead {d.read_ahead_kb} KiB")
    if d.nr_requests is not None:
        details.append(f"nr_requests {d.nr_requests}")
    if d.write_cache:
        details.append(f"write cache {d.write_cache}")
    if d.md_level:
        details.append(f"md {d.md_level}")
    if d.dm_target:
        details.append(f"device-mapper {d.dm_target}")
    if d.hw_raid_hint:
        details.append(f"hardware RAID? {d.hw_raid_hint}")
    return "".join(parts) + ": " + ", ".join(details)


def path_lines(p: WritePath) -> list[str]:
    """A directory's write path: filesystem, mount options, then each device downwards."""
    opts = ",".join(p.mount_options) or "unknown"
    lines = [
        f"Write path of {p.directory}: {p.fs_type or 'unknown filesystem'} on "
        f"{p.source or 'unknown device'} at {p.mount_point or '?'} ({opts}); "
        f"free {size(p.free_bytes)} of {size(p.total_bytes)}"
    ]
    lines += [f"  → {device_text(d)}" for d in p.devices]
    return lines


def _binlog_users(s: ServerFacts) -> str:
    """Who uses the binary log, as the inspection found it (empty when not asked)."""
    use = s.binlog_use
    if use is None:
        return ""
    parts = [
        f"replicas registered {_known(use.replica_hosts, '')}",
        f"connections reading it {_known(use.dump_threads, '')}",
    ]
    if use.logs is not None:
        parts.append(f"{count(use.logs, 'binary log')} kept, the oldest {use.first_log}")
    return "; " + ", ".join(parts)


def server_lines(s: ServerFacts, window: bool = False) -> list[str]:
    """The chosen server: version, how it runs, write rates, engines, logs, option files.

    Args:
        s: the server's facts.
        window: for the window, which names where the error log is rather than the command
            that reads it.
    """
    inst = s.instance
    lines = [
        f"Server: {s.version} ({s.flavour}), pid {inst.pid}, {STARTED_BY.get(inst.started_by, '')}"
        + (f" ({inst.service})" if inst.service else ""),
        f"  datadir {s.datadir}, uptime {_known(s.uptime_seconds, ' s')}, logged in via "
        f"{s.login_via}",
        f"  binary log {'on' if s.binlog_enabled else 'off'}"
        + (f" (sync_binlog={s.variable('sync_binlog')})" if s.binlog_enabled else "")
        + f"; replica: {'yes' if s.replica else 'no'}"
        + _binlog_users(s),
        f"  innodb_flush_log_at_trx_commit={s.variable('innodb_flush_log_at_trx_commit')}, "
        f"buffer pool {size(int(s.variable('innodb_buffer_pool_size') or 0))}, "
        f"dirty pages {_pct(s.dirty_pages_share)}, redo log {_size_or_unknown(s.redo_bytes())}",
    ]
    r = s.rates
    if r is None:
        lines.append("  write rates: not sampled (a sample of 0 s)")
    else:
        lines.append(
            f"  over {r.seconds:.0f} s: {r.transactions_per_s:.1f} commits/s, "
            f"{r.writes_per_s:.1f} writes/s, redo {size(r.redo_bytes_per_s)}/s, "
            f"{_num(r.pages_written_per_s)} pages written/s, "
            f"{_num(r.data_fsyncs_per_s)} data fsyncs/s, "
            f"buffer-pool hit rate {_pct(r.buffer_pool_hit_rate)}"
        )
    if s.engines:
        eng = "; ".join(
            f"{e.engine} {e.tables} tables {size(e.data_bytes + e.index_bytes)}" for e in s.engines
        )
        lines.append(f"  storage engines (user tables): {eng}")
    else:
        lines.append("  storage engines (user tables): none")
    lines.append(f"  error log: {error_log_words(s.error_log) if window else _log_command(s)}")
    lines.append(f"  {option_file_words(s)}")
    if s.service is not None:
        lines.append(service_line(s.service))
    if inst.container is not None:
        lines += container_lines(inst.container, s)
    return lines


def _log_command(s: ServerFacts) -> str:
    return f"{s.error_log.destination}; read it with: {s.error_log.how_to_read}"


def error_log_words(log: ErrorLog) -> str:
    """Where the error log is, in words (no command)."""
    if log.destination == "file" and log.path:
        return f"the file {log.path}"
    if log.destination == "journal":
        unit = log.how_to_read.split(" -u ", 1)[-1].split()[0] if " -u " in log.how_to_read else ""
        return f"the systemd journal of {unit}" if unit else "the systemd journal"
    if log.destination == "syslog":
        return f"the system log ({log.path})" if log.path else "the system log"
    if log.destination == "stderr":
        return "the standard error of whatever started the server"
    return "not known"


def option_file_words(s: ServerFacts) -> str:
    """The option files that set the server's options, with how many each sets.

    Only files that give the server an option are named; the list the binary searches
    (``mysqld --help``) includes files that do not exist, so it is named as such.
    """
    per_file: dict[str, int] = {}
    for line in s.option_lines:
        per_file[line.file] = per_file.get(line.file, 0) + 1
    if per_file:
        files = ", ".join(f"{f} ({count(n, 'option')})" for f, n in per_file.items())
        return f"option files that set its options: {files}"
    if s.option_files:
        return "option files: none found setting an option; the server looks for " + " ".join(
            s.option_files
        )
    return "option files: unknown"


def _size_or_unknown(value: int | None) -> str:
    return "unknown" if value is None else size(value)


def container_lines(c: Container, s: ServerFacts) -> list[str]:
    """The container: engine, image, compose service, ports, data and where options come from."""
    lines = [f"  {c.engine} container {c.name}, image {c.image}"]
    if c.compose_label:
        lines.append(f"  compose project {c.compose_project or '-'}, service "
                     f"{c.compose_service or '-'}")  # fmt: skip
    lines.append(f"  published ports: {', '.join(c.ports) or 'none'}")
    limit = c.memory_limit_bytes
    lines.append(f"  memory limit: {size(limit) if limit else 'none (the host RAM)'}")
    datadir = (s.datadir or "/var/lib/mysql").rstrip("/")
    data = c.host_path(datadir)
    lines.append(
        f"  data {datadir}: "
        + (f"on the host at {data}" if data else "in the container's own layer (lost with it)")
    )
    for origin in option_origins(c, s.option_files):
        lines.append(f"  options from {origin}")
    return lines


def option_origins(c: Container, option_files: tuple[str, ...]) -> list[str]:
    """Where a containerised server's options come from, one phrase each."""
    found: list[str] = []
    for mount in c.mounts:
        if mount.destination.startswith(("/etc/mysql", "/etc/my.cnf")):
            kind = "a host directory" if mount.kind == "bind" else f"the {mount.kind} {mount.name}"
            access = "" if mount.read_write else ", read-only"
            found.append(f"{kind} {mount.source} mounted on {mount.destination}{access}")
    image = [f for f in option_files if f.startswith("/") and c.host_path(f) is None]
    if image:
        found.append(f"the image's files ({', '.join(image)})")
    args = [a for a in c.command if a.startswith("--")]
    if args:
        found.append(f"the command ({' '.join(args)})")
    if c.env_names:
        found.append(f"environment variables the entrypoint reads ({', '.join(c.env_names)})")
    return found


def service_line(svc: ServiceInfo) -> str:
    """One line on the systemd unit: its state, how long it may take, how much memory it may use."""

    def limit(seconds: float | None) -> str:
        return "no limit" if seconds is None else f"{seconds:g} s"

    memory = (
        "no memory limit"
        if svc.memory_max_bytes is None
        else f"memory limit {size(svc.memory_max_bytes)}"
    )
    return (
        f"  systemd unit {svc.unit} ({svc.active_state or 'state unknown'}): start timeout "
        f"{limit(svc.timeout_start_s)}, stop timeout {limit(svc.timeout_stop_s)}, {memory}"
    )


def _pct(share: float | None) -> str:
    return "unknown" if share is None else f"{share * 100:.1f}%"


def _num(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f}"


def summary(facts: HostFacts) -> str:
    """The whole readable summary."""
    lines = [f"Target: {facts.target} (inspected {facts.collected_at})"]
    lines += machine_lines(facts.os.machine)
    for path in facts.os.write_paths:
        lines += path_lines(path)
    if len(facts.instances) > 1:
        lines.append("Server instances on this host:")
        lines += [f"  {i.label}" for i in facts.instances]
    if facts.server is not None:
        lines += server_lines(facts.server)
    if facts.disk_probe is not None:
        p = facts.disk_probe
        lines.append(
            f"Disk probe in {p.directory}: {_num(p.page_writes_per_s)} page writes/s of 16 KiB "
            f"from {p.page_queue_depth} writers ({p.page_method or 'not measured'}), "
            f"{_num(p.sync_writes_per_s)} synced 4 KiB writes/s, "
            f"{_num(p.seq_write_mb_s)} MB/s sequential ({p.method})"
        )
    unknowns = list(facts.unknown) + list(facts.os.unknown) + list(facts.os.machine.unknown)
    for path in facts.os.write_paths:
        unknowns += list(path.unknown)
    if facts.server is not None:
        unknowns += list(facts.server.unknown)
    if unknowns:
        lines.append("Could not be read:")
        lines += list(dict.fromkeys(f"  {u.what}: {u.why}" for u in unknowns))
    return "\n".join(lines)
