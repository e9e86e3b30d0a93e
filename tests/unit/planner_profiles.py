"""Host profiles for the planner tests: HostFacts built from recorded real outputs.

Where each part comes from (say it in every profile):

- **Machines and disks**: ``parse_host_output`` / ``parse_block_devices`` over the recorded
  host fixtures in tests/fixtures/hosts/<name>/ (see each SOURCE.md). Most of those captures
  are lsblk conversions without /proc data, so RAM, CPUs, kernel and VM tunables are added by
  hand: those ``MachineFacts`` fields are SYNTHETIC and named in ``synthetic``.
- **Server variables**: MariaDB 10.11 from the real ``mariadbd --verbose --help`` output
  (debian12-mariadb-10.11); MySQL 5.7 / 8.0 from the real upstream ``mysqld --help`` excerpts
  (non-InnoDB variables) plus the catalogue's defaults for that version (InnoDB, which those
  excerpts omit); every other version: the catalogue's defaults plus the per-connection
  buffers of the nearest real output. Values changed on purpose are SYNTHETIC overrides.
- **practice-mariadb-10.11**: a whole real HostFacts (inspect --probe-disk of the practice
  server on this machine).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from app.domain.facts import DiskProbe, MachineFacts, OsFacts, ProcessMemory, WritePath
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.server import ServerVersion
from app.domain.serverfacts import EngineUse, ErrorLog, Rates, ServerFacts, Variable
from app.inspect.host_block_devices import parse_block_devices
from app.inspect.host_parse import parse_host_output
from app.knobs import default_catalogue

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"
GIB = 1024**3
MIB = 1024**2


def help_variables(text: str) -> dict[str, str]:
    """The `Variables (--variable-name=value)` section of --help as {name: value}."""
    _, found, tail = text.partition("Variables (--variable-name=value)")
    assert found
    result: dict[str, str] = {}
    for line in tail.splitlines():
        if not line.strip():
            if result:
                break
            continue
        name, _, value = line.partition(" ")
        result[name.replace("-", "_")] = value.strip()
    return result


def real_help(dirname: str) -> dict[str, str]:
    """The variables a recorded --help output lists (real output)."""
    name = "mariadbd--verbose--help.txt" if "mariadb" in dirname else "mysqld--help.txt"
    return help_variables((HOSTS / dirname / name).read_text())


MARIADB_1011 = real_help("debian12-mariadb-10.11")
MYSQL_HELP = {"5.7": real_help("mysql-5.7"), "8.0": real_help("mysql-8.0")}
PER_CONNECTION = (
    "sort_buffer_size",
    "join_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "thread_stack",
    "net_buffer_length",
    "binlog_cache_size",
    "max_connections",
    "key_buffer_size",
)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def catalogue_defaults(flavour: str, version: str) -> dict[str, str]:
    """Every catalogue server variable this version has, at its catalogue default."""
    cat = default_catalogue()
    sv = ServerVersion.of(flavour, version)
    out: dict[str, str] = {}
    for knob in cat.knobs:
        facts = cat.facts_for(knob.name, sv.family, sv) if knob.is_server_variable else None
        if facts is not None:
            out[knob.name] = _text(facts.default)
    return out


def server_variables(flavour: str, version: str) -> tuple[dict[str, str], str]:
    """The variables a server of this version reports by default, and where they came from."""
    sv = ServerVersion.of(flavour, version)
    values = catalogue_defaults(flavour, version)
    if flavour == "mariadb" and sv.series == (10, 11):
        cat = default_catalogue()
        for name, value in MARIADB_1011.items():
            facts = cat.facts_for(name, "mariadb", sv) if name in cat.names() else None
            if facts is not None and facts.help_default is not None:
                if value == str(facts.help_default):
                    continue  # --help prints a sentinel; SHOW VARIABLES shows the default
            if value != "(No default value)":
                values[name] = value
        return values, "real mariadbd --verbose --help (10.11.19)"
    if flavour == "mysql" and f"{sv.major}.{sv.minor}" in MYSQL_HELP:
        values.update(
            {k: v for k, v in MYSQL_HELP[f"{sv.major}.{sv.minor}"].items() if k in PER_CONNECTION}
        )
        return values, "real mysqld --help excerpt + catalogue defaults (InnoDB)"
    near = MARIADB_1011 if flavour == "mariadb" else MYSQL_HELP["8.0"]
    for name in PER_CONNECTION:
        values.setdefault(name, near[name])
    return values, "catalogue defaults + per-connection buffers of the nearest real output"


def server_facts(
    flavour: str,
    version: str,
    *,
    overrides: dict[str, str] | None = None,
    binlog: bool = False,
    replica: bool = False,
    redo_rate: float | None = None,
    engines: tuple[EngineUse, ...] = (),
    datadir: str = "/var/lib/mysql/",
) -> ServerFacts:
    """A ServerFacts with the version's default variables and the given overrides."""
    values, _ = server_variables(flavour, version)
    values.update(overrides or {})
    pool = values.get("innodb_buffer_pool_size", "")
    if flavour == "mysql" and pool.isdigit() and int(pool) < GIB:
        # MySQL starts with one instance below a 1 GiB pool and reports 1 (the manual).
        values["innodb_buffer_pool_instances"] = "1"
    values["log_bin"] = "ON" if binlog else "OFF"
    suffix = "-MariaDB" if flavour == "mariadb" else ""
    rates = None
    if redo_rate is not None:
        rates = Rates(10.0, 50.0, 40.0, redo_rate, 20.0, 2.0, 5.0, 0.99)
    return ServerFacts(
        instance=ServerInstance(
            pid=4242, binary=f"/usr/sbin/{'mariadbd' if suffix else 'mysqld'}", argv=()
        ),
        version=f"{version}{suffix}",
        version_comment="",
        flavour=flavour,
        variables=tuple(Variable(k, v, "COMPILE-TIME") for k, v in sorted(values.items())),
        status=(),
        rates=rates,
        engines=engines or (EngineUse("InnoDB", 40, 30 * GIB, 6 * GIB),),
        binlog_enabled=binlog,
        replica=replica,
        replicas_connected=0,
        uptime_seconds=86400,
        datadir=datadir,
        dirty_pages_share=0.1,
        error_log=ErrorLog("file", "/var/log/mysql/error.log", "tail"),
        option_files=("/etc/mysql/my.cnf",),
        login_via="socket",
    )


def machine(**kw: object) -> MachineFacts:
    """SYNTHETIC machine facts (the lsblk-based captures have none)."""
    base: dict[str, object] = {
        "hostname": "db1",
        "kernel": "6.1.0-28-amd64",
        "cpu_threads": 16,
        "mem_total_bytes": 64 * GIB,
        "swap_total_bytes": 4 * GIB,
        "swappiness": 60,
        "dirty_ratio": 20,
        "dirty_background_ratio": 10,
        "dirty_bytes": 0,
        "dirty_background_bytes": 0,
        "thp_enabled": "always",
        "big_processes": (ProcessMemory(900, "java", 2 * GIB),),
    }
    base.update(kw)
    return MachineFacts(**base)  # type: ignore[arg-type]


#: The directories each recorded host script was run for, in its order (see test_host_parse).
FIXTURE_DIRECTORIES = {
    "nvme-desktop": ["/home/mysql", "/var/lib/mysql", "/home/archive/binlog"],
    "lvm-hdd": ["/var/lib/mysql", "/home/binlog"],
    "md-raid1-sata-ssd-synthetic": ["/var/lib/mysql"],
    "vm-virtio-local": ["/var/lib/mysql", "/tmp"],
}


def os_from_fixture(name: str, directory: str, m: MachineFacts) -> OsFacts:
    """The recorded host's write path for ``directory`` (real), with ``m`` as its machine."""
    text = (HOSTS / name / "host.txt").read_text()
    parsed = parse_host_output(text, FIXTURE_DIRECTORIES[name])
    path = parsed.path(directory)
    assert path is not None
    return OsFacts(machine=m, write_paths=(path,))


@dataclass(frozen=True)
class Profile:
    """A host + server the planner is tested on."""

    name: str
    facts: HostFacts
    sources: str
    synthetic: tuple[str, ...] = field(default=())


def _facts(name: str, os: OsFacts, server: ServerFacts, probe: float | None) -> HostFacts:
    disk = None
    if probe is not None:
        # SYNTHETIC: the same figure as the page-write rate (fio, 8 writers) and the synced rate.
        disk = DiskProbe(
            server.datadir or "/var/lib/mysql",
            "python3",
            probe,
            500.0,
            32 * MIB,
            2.0,
            page_writes_per_s=probe,
            page_queue_depth=8,
            page_method="fio",
        )
    return HostFacts(
        target=name,
        collected_at="2026-11-22T10:00:00+00:00",
        os=os,
        instances=(server.instance,),
        server=server,
        disk_probe=disk,
    )


def _perc_os() -> OsFacts:
    """The PERC volume (real sysfs values) under a SYNTHETIC xfs mount of /var/lib/mysql."""
    sda = parse_block_devices((HOSTS / "hwraid-perc" / "host.txt").read_text())["sda"]
    path = WritePath(
        directory="/var/lib/mysql",
        mount_point="/var/lib/mysql",
        fs_type="xfs",
        source="/dev/sda",
        mount_options=("rw", "noatime"),
        free_bytes=800 * GIB,
        device="sda",
        devices=(sda,),
    )
    m = machine(kernel="3.10.0-1160.el7.x86_64", mem_total_bytes=128 * GIB, cpu_threads=24)
    return OsFacts(machine=m, write_paths=(path,))


def _zfs_os() -> OsFacts:
    """SYNTHETIC ZFS dataset over the real nvme-desktop NVMe disk."""
    nvme = parse_block_devices((HOSTS / "nvme-desktop" / "host.txt").read_text())["nvme0n1"]
    path = WritePath(
        directory="/var/lib/mysql",
        mount_point="/var/lib/mysql",
        fs_type="zfs",
        source="tank/mysql",
        mount_options=("rw", "noatime"),
        free_bytes=400 * GIB,
        device="nvme0n1",
        devices=(nvme,),
    )
    return OsFacts(machine=machine(), write_paths=(path,))


def profiles() -> list[Profile]:
    """The table of host profiles (at least the eight issue 6 names)."""
    out: list[Profile] = []
    out.append(
        Profile(
            "mysql57-perc-raid-hdd",
            _facts(
                "mysql57-perc-raid-hdd",
                _perc_os(),
                server_facts("mysql", "5.7.44", binlog=True, redo_rate=2 * MIB),
                450.0,
            ),
            "hwraid-perc sda (real sysfs); mysql-5.7 help + catalogue",
            ("machine", "xfs mount of /var/lib/mysql", "disk probe 450/s", "redo rate 2 MiB/s"),
        )
    )
    ssd = os_from_fixture("nvme-desktop", "/var/lib/mysql", machine(kernel=None, hostname="desk"))
    out.append(
        Profile(
            "mysql80-sata-ssd",
            _facts(
                "mysql80-sata-ssd",
                ssd,
                server_facts(
                    "mysql",
                    "8.0.36",
                    binlog=True,
                    overrides={
                        "innodb_flush_neighbors": "1",
                        "innodb_buffer_pool_size": str(8 * GIB),
                    },
                    redo_rate=4 * MIB,
                ),
                5200.0,
            ),
            "nvme-desktop sda (real lsblk); mysql-8.0 help + catalogue",
            ("machine", "flush_neighbors=1 carried over from 5.7", "8 GiB pool", "probe 5200/s"),
        )
    )
    nvme = os_from_fixture(
        "nvme-desktop",
        "/home/mysql",
        machine(kernel="6.8.0-45-generic", mem_total_bytes=128 * GIB, cpu_threads=32),
    )
    out.append(
        Profile(
            "mysql84-nvme",
            _facts(
                "mysql84-nvme",
                nvme,
                server_facts(
                    "mysql", "8.4.3", binlog=True, redo_rate=20 * MIB, datadir="/home/mysql/"
                ),
                60000.0,
            ),
            "nvme-desktop nvme0n1 (real lsblk); catalogue 8.4 defaults",
            ("machine", "probe 60000/s", "redo rate 20 MiB/s"),
        )
    )
    hdd = os_from_fixture(
        "lvm-hdd", "/var/lib/mysql", machine(kernel=None, mem_total_bytes=16 * GIB)
    )
    out.append(
        Profile(
            "mariadb106-lvm-hdd",
            _facts(
                "mariadb106-lvm-hdd",
                hdd,
                server_facts(
                    "mariadb", "10.6.16", overrides={"innodb_flush_log_at_trx_commit": "2"}
                ),
                140.0,
            ),
            "lvm-hdd (real lsblk); catalogue 10.6 defaults",
            ("machine", "trx_commit=2", "probe 140/s"),
        )
    )
    raid1 = os_from_fixture("md-raid1-sata-ssd-synthetic", "/var/lib/mysql", machine())
    out.append(
        Profile(
            "mariadb1011-md-raid1-ssd",
            _facts(
                "mariadb1011-md-raid1-ssd",
                OsFacts(machine=machine(mem_total_bytes=32 * GIB), write_paths=raid1.write_paths),
                server_facts("mariadb", "10.11.19", binlog=True, redo_rate=1 * MIB),
                3000.0,
            ),
            "md-raid1-sata-ssd-synthetic (SYNTHETIC fixture); real 10.11 --help",
            ("machine", "the whole md fixture", "probe 3000/s"),
        )
    )
    out.append(
        Profile(
            "mariadb114-zfs-nvme",
            _facts(
                "mariadb114-zfs-nvme",
                _zfs_os(),
                server_facts("mariadb", "11.4.5", overrides={"innodb_data_file_buffering": "ON"}),
                None,
            ),
            "nvme-desktop nvme0n1 (real) under a SYNTHETIC ZFS mount; catalogue 11.4 defaults",
            ("machine", "zfs mount", "data_file_buffering=ON"),
        )
    )
    vm_real = parse_host_output(
        (HOSTS / "vm-virtio-local" / "host.txt").read_text(), ["/var/lib/mysql"]
    )
    small = dataclasses.replace(
        vm_real.machine, mem_total_bytes=2 * GIB, swap_total_bytes=1 * GIB, big_processes=()
    )
    out.append(
        Profile(
            "mariadb1011-2gb-vm",
            _facts(
                "mariadb1011-2gb-vm",
                OsFacts(machine=small, write_paths=vm_real.write_paths),
                server_facts("mariadb", "10.11.19"),
                None,
            ),
            "vm-virtio-local (real script output) with RAM cut to 2 GiB; real 10.11 --help",
            ("RAM 2 GiB, swap 1 GiB, no other processes",),
        )
    )
    myisam = os_from_fixture(
        "lvm-hdd", "/var/lib/mysql", machine(kernel=None, mem_total_bytes=32 * GIB)
    )
    out.append(
        Profile(
            "mysql57-myisam",
            _facts(
                "mysql57-myisam",
                myisam,
                server_facts(
                    "mysql",
                    "5.7.44",
                    engines=(
                        EngineUse("MyISAM", 12, 3 * GIB, 800 * MIB),
                        EngineUse("InnoDB", 5, 1 * GIB, 200 * MIB),
                    ),
                ),
                None,
            ),
            "lvm-hdd (real lsblk); mysql-5.7 help + catalogue",
            ("machine", "MyISAM engine use"),
        )
    )
    practice = HostFacts.from_json((HOSTS / "practice-mariadb-10.11" / "facts.json").read_text())
    out.append(Profile("practice-mariadb1011", practice, "all real (inspect --probe-disk)"))
    return out


PROFILES = {p.name: p for p in profiles()}
