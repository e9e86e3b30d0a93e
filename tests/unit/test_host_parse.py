"""The host parsers against recorded outputs (see each fixture's SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.facts import OsFacts, WritePath, from_json, to_json
from app.inspect.host_block_devices import RawDevice, hw_raid_hint, parse_block_devices
from app.inspect.host_machine import parse_processes
from app.inspect.host_mounts import parse_mountinfo
from app.inspect.host_output import bracketed
from app.inspect.host_parse import HostParseError, NotLinuxError, parse_host_output

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def fixture(name: str) -> str:
    return (HOSTS / name / "host.txt").read_text()


def whats(unknown: object) -> list[str]:
    return [u.what for u in unknown]  # type: ignore[attr-defined]


# -- NVMe (util-linux simple-nvme, a real desktop) ---------------------------------------


def test_nvme_partition_resolves_to_the_nvme_disk() -> None:
    facts = parse_host_output(
        fixture("nvme-desktop"), ["/home/mysql", "/var/lib/mysql", "/home/archive/binlog"]
    )
    home = facts.write_paths[0]
    assert home.mount_point == "/home"
    assert home.device == "nvme0n1p2"
    assert [d.name for d in home.devices] == ["nvme0n1p2", "nvme0n1"]
    part, disk = home.devices
    assert part.kind == "partition" and part.lower == ("nvme0n1",)
    assert part.scheduler is None  # queue facts belong to the disk
    assert disk.kind == "disk" and disk.is_physical
    assert disk.transport == "nvme"
    assert disk.rotational is False
    assert disk.model == "KINGSTON SKC1000240G"
    assert disk.scheduler == "none"
    assert disk.nr_requests == 1023
    assert disk.read_ahead_kb == 128
    assert home.physical == (disk,)


def test_same_host_sata_ssd_and_spinning_disk() -> None:
    facts = parse_host_output(
        fixture("nvme-desktop"), ["/home/mysql", "/var/lib/mysql", "/home/archive/binlog"]
    )
    root, archive = facts.write_paths[1], facts.write_paths[2]
    assert root.mount_point == "/" and root.device == "sda4"
    ssd = root.find("sda")
    assert ssd is not None
    assert (ssd.rotational, ssd.transport, ssd.model) == (False, "sata", "KINGSTON SH103S3")
    assert ssd.scheduler == "cfq"
    assert archive.mount_point == "/home/archive"
    hdd = archive.physical[0]
    assert (hdd.name, hdd.rotational, hdd.model) == ("sdb", True, "WDC WD800JD-00MS")


def test_missing_files_are_unknown_with_a_reason_never_a_guess() -> None:
    facts = parse_host_output(fixture("nvme-desktop"), ["/home/mysql"])
    m = facts.machine
    assert m.cpu_model is None and m.mem_total_bytes is None and m.kernel is None
    assert m.swappiness is None and m.thp_enabled is None
    missing = whats(m.unknown)
    for what in ("kernel", "CPU model", "RAM", "swap", "vm.swappiness", "transparent hugepages"):
        assert what in missing
    why = {u.what: u.why for u in m.unknown}
    assert "missing" in why["vm.swappiness"]
    home = facts.write_paths[0]
    assert home.total_bytes is None and "/home/mysql: free space" in whats(home.unknown)
    disk = home.find("nvme0n1")
    assert disk is not None and disk.write_cache is None
    assert "nvme0n1: write_cache" in whats(home.unknown)
    assert "nvme0n1: stable identifier" in whats(home.unknown)


# -- LVM on a spinning disk (insights-core LSBLK_EXT_DATA, a real RHEL host) ----------------


def test_lvm_lv_to_pv_partition_to_rotational_disk() -> None:
    facts = parse_host_output(fixture("lvm-hdd"), ["/var/lib/mysql", "/home/binlog"])
    root = facts.write_paths[0]
    assert root.mount_point == "/" and root.fs_type == "ext4"
    assert root.source == "/dev/mapper/vg_trex-lv_root"
    assert [d.name for d in root.devices] == ["dm-0", "sda2", "sda"]
    lv, pv, disk = root.devices
    assert lv.kind == "dm" and lv.dm_name == "vg_trex-lv_root" and lv.lower == ("sda2",)
    assert pv.kind == "partition" and pv.lower == ("sda",)
    assert disk.kind == "disk" and disk.rotational is True
    assert disk.model == "WDC WD1600JS-75N" and disk.scheduler == "cfq"
    # No vendor or sysfs path in this capture: the bus is unknown, not guessed.
    assert disk.transport is None and "sda: transport" in whats(root.unknown)
    home = facts.write_paths[1]
    assert home.mount_point == "/home" and home.device == "dm-2"
    assert [d.name for d in home.devices] == ["dm-2", "sda2", "sda"]


# -- md RAID1 ---------------------------------------------------------------------------------


def test_md_raid1_with_lvm_over_two_virtio_disks() -> None:
    facts = parse_host_output(fixture("md-raid1-lvm-virtio"), ["/var/lib/mysql", "/boot"])
    root = facts.write_paths[0]
    assert [d.name for d in root.devices] == ["dm-0", "md126", "vda2", "vdb2", "vda", "vdb"]
    md = root.find("md126")
    assert md is not None and md.kind == "md" and md.md_level == "raid1"
    assert md.lower == ("vda2", "vdb2")
    assert {d.name for d in root.physical} == {"vda", "vdb"}
    assert all(d.transport == "virtio" for d in root.physical)
    # Plain lsblk had no queue columns: each is unknown, per device.
    assert all(d.rotational is None for d in root.physical)
    assert {"vda: rotational", "vdb: rotational", "vda: scheduler"} <= set(whats(root.unknown))
    boot = facts.write_paths[1]
    assert boot.device == "md127"
    assert [d.name for d in boot.devices] == ["md127", "vda1", "vdb1", "vda", "vdb"]


def test_md_raid1_of_two_sata_ssds_synthetic() -> None:
    # Synthetic (see SOURCE.md); the md and SSD rules are also shown on real captures above.
    facts = parse_host_output(fixture("md-raid1-sata-ssd-synthetic"), ["/var/lib/mysql"])
    path = facts.write_paths[0]
    assert path.mount_point == "/var/lib/mysql" and path.fs_type == "ext4"
    assert path.option("data") == "ordered" and path.option("noatime") == ""
    assert path.data_mode == "ordered" and path.noatime and not path.barriers_off
    assert path.total_bytes == 229199440 * 1024 and path.free_bytes == 176248360 * 1024
    assert [d.name for d in path.devices] == ["md0", "sda2", "sdb2", "sda", "sdb"]
    md = path.devices[0]
    assert (md.md_level, md.md_raid_disks, md.scheduler) == ("raid1", 2, "none")
    assert md.schedulers_available == ("none",)
    for disk in path.physical:
        assert disk.transport == "sata" and disk.rotational is False
        assert disk.scheduler == "mq-deadline" and disk.schedulers_available == (
            "mq-deadline",
            "none",
        )
        assert disk.nr_requests == 64 and disk.write_cache == "write back"
        assert disk.stable_id is not None and disk.stable_id.startswith("t10.ATA")
        assert disk.stable_id_source == "device/wwid"
        assert disk.hw_raid_hint is None


# -- hardware RAID and other single facts ---------------------------------------------------


def test_perc_controller_is_flagged_as_hardware_raid() -> None:
    devices = parse_block_devices(fixture("hwraid-perc"))
    sda = devices["sda"]
    assert sda.model == "PERC H710P"
    assert sda.hw_raid_hint is not None and "PERC" in sda.hw_raid_hint
    assert (sda.rotational, sda.scheduler, sda.read_ahead_kb) == (True, "deadline", 4096)


def test_plain_disks_are_not_flagged_as_hardware_raid() -> None:
    for name in ("nvme-desktop", "lvm-hdd"):
        devices = parse_block_devices(fixture(name))
        assert all(d.hw_raid_hint is None for d in devices.values())


def test_this_vm_capture_machine_facts() -> None:
    facts = parse_host_output(fixture("vm-virtio-local"), ["/var/lib/mysql", "/tmp"])
    m = facts.machine
    assert m.distribution == "Debian GNU/Linux 12 (bookworm)"
    assert (m.cpu_cores, m.cpu_threads, m.cpu_sockets) == (2, 2, 1)
    assert m.virtualization == "kvm" and m.container == "docker"
    assert m.thp_enabled == "madvise" and m.swappiness == 60
    assert m.mem_total_bytes == 24684096 * 1024 and m.swap_total_bytes == 0
    assert all(p.name not in ("mysqld", "mariadbd") for p in m.big_processes)
    assert m.unknown == ()
    for path in facts.write_paths:
        assert path.device == "vda"
        assert path.devices[0].transport == "virtio"
        assert path.devices[0].stable_id_source == "serial"


@pytest.mark.parametrize(
    "name",
    [
        "nvme-desktop",
        "lvm-hdd",
        "md-raid1-lvm-virtio",
        "md-raid1-sata-ssd-synthetic",
        "vm-virtio-local",
        "hwraid-perc",
    ],
)
def test_every_fixture_round_trips_through_json(name: str) -> None:
    facts = parse_host_output(fixture(name), ["/var/lib/mysql", "/tmp", "/home/mysql"])
    assert from_json(OsFacts, to_json(facts)) == facts


# -- bad input ----------------------------------------------------------------------------


def test_non_linux_uname_is_a_clear_linux_only_error() -> None:
    with pytest.raises(NotLinuxError) as exc:
        parse_host_output(fixture("not-linux-synthetic"), ["/var/db/mysql"])
    assert "Linux only" in exc.value.problem and "FreeBSD" in exc.value.problem


def test_output_that_is_not_ours_is_a_clear_error() -> None:
    with pytest.raises(HostParseError):
        parse_host_output("sh: 1: Syntax error\n", [])


def test_output_cut_short_marks_paths_and_script_unknown() -> None:
    text = fixture("vm-virtio-local")
    cut = text[: text.index("@@innotune path 0")]
    facts = parse_host_output(cut, ["/var/lib/mysql"])
    assert facts.write_paths[0].mount_point is None
    assert "host script" in whats(facts.unknown)
    assert facts.machine.cpu_threads == 2


def test_unreadable_files_say_permission_denied() -> None:
    # Hand-cut from vm-virtio-local: the swappiness line replaced by the script's marker
    # for a file that exists but cannot be read (labelled: edited real output).
    text = fixture("vm-virtio-local").replace(
        "/proc/sys/vm/swappiness:60", "!unreadable /proc/sys/vm/swappiness"
    )
    facts = parse_host_output(text, [])
    why = {u.what: u.why for u in facts.machine.unknown}
    assert facts.machine.swappiness is None
    assert "permission denied" in why["vm.swappiness"]


def test_bracketed_choices() -> None:
    assert bracketed("always [madvise] never") == ("madvise", ("always", "madvise", "never"))
    assert bracketed("none") == ("none", ("none",))
    assert bracketed("[none] mq-deadline") == ("none", ("none", "mq-deadline"))
    assert bracketed(None) == (None, ())


def test_barrier_options() -> None:
    for opts, off in ((("rw", "nobarrier"), True), (("rw", "barrier=0"), True), (("rw",), False)):
        assert WritePath("/d", super_options=opts).barriers_off is off


def test_mountinfo_unescapes_spaces() -> None:
    mounts = parse_mountinfo(
        ["41 28 9:0 / /srv/my\\040data rw,noatime - xfs /dev/md0 rw,attr2,inode64,noquota"]
    )
    assert mounts[0].mount_point == "/srv/my data"
    assert mounts[0].super_options == ("rw", "attr2", "inode64", "noquota")


def test_processes_leave_out_the_database_servers() -> None:
    procs = parse_processes(["1 100 systemd", "2 900000 mariadbd", "3 5000 java", "4 0 kthreadd"])
    assert [p.name for p in procs] == ["java", "systemd"]
    assert procs[0].rss_bytes == 5000 * 1024


@pytest.mark.parametrize(
    ("vendor", "model", "flagged"),
    [  # hand-written model strings as those controllers and hypervisors present them
        ("DELL", "PERC H730P Mini", True),
        ("HP", "LOGICAL VOLUME", True),
        ("AVAGO", "MR9361-8i", True),
        ("LSI", "MR9260-8i", True),
        ("VMware", "Virtual disk", False),
        ("ATA", "Samsung SSD 860", False),
        ("QEMU", "QEMU HARDDISK", False),
    ],
)
def test_hw_raid_hint_from_model_and_vendor(vendor: str, model: str, flagged: bool) -> None:
    raw = RawDevice("sda", attrs={"device/vendor": vendor, "device/model": model})
    assert (hw_raid_hint(raw, {}) is not None) is flagged


def test_hw_raid_hint_from_the_scsi_driver() -> None:
    link = "../../devices/pci0000:00/0000:00:01.0/0000:02:00.0/host0/target0:2:0/0:2:0:0/block/sda"
    raw = RawDevice("sda", attrs={"device/vendor": "ATA", "device/model": "X"}, link=link)
    hint = hw_raid_hint(raw, {"host0": "megaraid_sas"})
    assert hint is not None and "megaraid_sas" in hint
