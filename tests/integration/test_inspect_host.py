"""Host facts on the real hosts, checked against independent tools.

lsblk -J, findmnt -J, free -b and nproc read the same kernel through other code; the
loop device gets unusual values first (scheduler, read_ahead_kb, nr_requests, the
rotational flag) so a hard-coded answer cannot pass.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.domain.errors import CommandError
from app.domain.facts import BlockDevice, OsFacts, WritePath, from_json, to_json
from app.domain.target import ConnectOptions, parse_target
from app.inspect.diskprobe import parse_probe_output, probe_argv, probe_disk
from app.inspect.host import HOST_SCRIPT, NotLinuxError, gather_host
from app.inspect.host_output import bracketed
from app.inspect.host_parse import parse_host_output
from app.remote.local import LocalTransport
from app.remote.ssh import SshTransport
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import need, sh


def lsblk() -> dict[str, dict[str, Any]]:
    out = sh(
        "lsblk", "-J", "-l", "-b", "-o",
        "NAME,KNAME,PKNAME,TYPE,ROTA,SCHED,RA,RQ-SIZE,MODEL,MAJ:MIN,TRAN,SIZE",
    )  # fmt: skip
    return {d["kname"]: d for d in json.loads(out)["blockdevices"]}


def findmnt(directory: str) -> dict[str, Any]:
    out = sh("findmnt", "-J", "-T", directory, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS,MAJ:MIN")
    found: dict[str, Any] = json.loads(out)["filesystems"][0]
    return found


def free_b() -> dict[str, int]:
    totals = {}
    for line in sh("free", "-b").splitlines():
        parts = line.split()
        if parts and parts[0] in ("Mem:", "Swap:"):
            totals[parts[0].rstrip(":")] = int(parts[1])
    return totals


def check_against_lsblk(path: WritePath) -> None:
    """Every device on the path agrees with lsblk on what both of them show."""
    table = lsblk()
    for dev in path.devices:
        row = table[dev.name]
        assert dev.maj_min == row["maj:min"]
        assert dev.size_bytes == row["size"]
        if dev.kind == "partition":
            assert dev.lower == (row["pkname"],)
            continue
        assert dev.rotational == row["rota"]
        assert dev.scheduler == row["sched"]
        assert dev.read_ahead_kb == row["ra"]
        assert dev.nr_requests == row["rq-size"]
        assert dev.model == row["model"]
        if row["tran"] is not None:  # lsblk names no bus for virtio-blk and loop
            assert dev.transport == row["tran"]


def check_against_findmnt(path: WritePath) -> None:
    fm = findmnt(path.directory)
    assert path.mount_point == fm["target"]
    assert path.fs_type == fm["fstype"]
    assert path.source == fm["source"]
    assert set(fm["options"].split(",")) == set(path.mount_options) | set(path.super_options)


@pytest.fixture(scope="module")
def local_facts() -> OsFacts:
    return gather_host(LocalTransport(), ["/var/lib", "/tmp"])


def test_machine_facts_match_free_and_nproc(local_facts: OsFacts) -> None:
    m = local_facts.machine
    assert local_facts.commands_run == 1
    assert m.cpu_threads == int(sh("nproc", "--all").strip())
    totals = free_b()
    assert m.mem_total_bytes == totals["Mem"]
    assert m.swap_total_bytes == totals["Swap"]
    assert m.kernel == os.uname().release and m.architecture == os.uname().machine
    assert m.swappiness == int(Path("/proc/sys/vm/swappiness").read_text())
    assert m.dirty_ratio == int(Path("/proc/sys/vm/dirty_ratio").read_text())
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists():
        assert m.thp_enabled == bracketed(thp.read_text())[0]
    if shutil.which("systemd-detect-virt"):
        vm = subprocess.run(["systemd-detect-virt", "--vm"], capture_output=True, text=True)
        assert m.virtualization == vm.stdout.strip()


def test_root_write_path_matches_findmnt_and_lsblk(local_facts: OsFacts) -> None:
    for path in local_facts.write_paths:
        check_against_findmnt(path)
        check_against_lsblk(path)
        assert path.physical, "a physical device at the bottom of the chain"
        free = shutil.disk_usage(path.directory)
        assert path.total_bytes is not None and abs(path.total_bytes - free.total) < 1 << 20
    assert from_json(OsFacts, to_json(local_facts)) == local_facts


# -- the loop device, with unusual values ------------------------------------------------


@pytest.fixture
def unusual_loop(loopfs: LoopFs) -> Iterator[dict[str, str]]:
    """Set a scheduler, read-ahead, queue depth and rotational flag nobody uses; restore."""
    q = loopfs.queue
    names = ("scheduler", "nr_requests", "read_ahead_kb", "rotational")
    saved = {n: (q / n).read_text().strip() for n in names}
    current, available = bracketed(saved["scheduler"])
    wanted = next(s for s in ("bfq", "kyber", "mq-deadline", "none") if s in available)
    if wanted == current:
        wanted = next(s for s in available if s != current)
    try:
        (q / "scheduler").write_text(wanted)  # first: a new scheduler resets nr_requests
        try:
            (q / "nr_requests").write_text("37")
        except OSError:
            pass  # some schedulers refuse it; whatever the kernel kept is checked below
        (q / "read_ahead_kb").write_text("384")
        (q / "rotational").write_text("0" if saved["rotational"] == "1" else "1")
        yield {n: (q / n).read_text().strip() for n in names}
    finally:
        (q / "scheduler").write_text(bracketed(saved["scheduler"])[0] or "none")
        for name in ("nr_requests", "read_ahead_kb", "rotational"):
            try:
                (q / name).write_text(saved[name])
            except OSError:
                pass
        assert {n: (q / n).read_text().strip() for n in names} == saved


def test_loop_device_facts_follow_unusual_values(
    loopfs: LoopFs, unusual_loop: dict[str, str]
) -> None:
    assert unusual_loop["read_ahead_kb"] == "384"
    datadir = loopfs.mountpoint / "inspect-datadir"
    datadir.mkdir(exist_ok=True)
    try:
        facts = gather_host(LocalTransport(), [str(datadir)])
        path = facts.write_paths[0]
        check_against_findmnt(path)
        check_against_lsblk(path)
    finally:
        datadir.rmdir()
    assert path.mount_point == str(loopfs.mountpoint)
    assert path.fs_type == "ext4" and path.option("noatime") == ""
    assert path.device == loopfs.name
    (dev,) = path.devices
    assert dev.kind == "loop" and dev.transport == "loop"
    assert dev.scheduler == bracketed(unusual_loop["scheduler"])[0]
    assert dev.read_ahead_kb == 384
    assert dev.nr_requests == int(unusual_loop["nr_requests"])
    assert dev.rotational is (unusual_loop["rotational"] == "1")
    assert dev.stable_id == str(loopfs.image) and dev.stable_id_source == "loop/backing_file"


def test_a_symlinked_directory_with_a_space_resolves_to_its_real_filesystem(
    loopfs: LoopFs, tmp_path: Path
) -> None:
    link = tmp_path / "my datadir"
    link.symlink_to(loopfs.mountpoint)
    facts = gather_host(LocalTransport(), [str(link)])
    path = facts.write_paths[0]
    assert path.directory == str(link) and path.real_path == str(loopfs.mountpoint)
    assert path.device == loopfs.name and path.mount_point == str(loopfs.mountpoint)


def test_a_filesystem_without_a_block_device_is_unknown_not_guessed() -> None:
    need(Path("/dev/shm").is_mount(), "/dev/shm is not a separate mount here")
    path = gather_host(LocalTransport(), ["/dev/shm"]).write_paths[0]
    assert path.fs_type == findmnt("/dev/shm")["fstype"] == "tmpfs"
    assert path.devices == () and path.device is None
    assert "/dev/shm: block devices" in [u.what for u in path.unknown]


# -- other shells, other tools ----------------------------------------------------------


def _busybox_path(tmp_path: Path, leave_out: tuple[str, ...] = ()) -> str:
    bb = shutil.which("busybox")
    need(bb is not None, "busybox is not installed")
    assert bb is not None
    bindir = tmp_path / "busybox-bin"
    bindir.mkdir()
    applets = sh(bb, "--list").split()
    for applet in applets:
        if applet not in leave_out:
            (bindir / applet).symlink_to(bb)
    return str(bindir)


def _run_with_path(path: str, directories: list[str]) -> OsFacts:
    """The host script under the first `sh` on ``path`` (BusyBox's when path is its applets)."""
    result = LocalTransport().run(
        ["env", f"PATH={path}", "sh", "-c", HOST_SCRIPT, "innotune-inspect", *directories]
    )
    return parse_host_output(result.out, directories)


def _comparable(facts: OsFacts) -> tuple[Any, ...]:
    m = facts.machine
    paths = [
        (p.mount_point, p.fs_type, p.source, p.device, tuple(_dev_key(d) for d in p.devices))
        for p in facts.write_paths
    ]
    return (
        m.cpu_model, m.cpu_cores, m.cpu_threads, m.mem_total_bytes, m.swap_total_bytes,
        m.thp_enabled, m.thp_defrag, m.swappiness, m.dirty_ratio, m.kernel, m.distribution,
        paths,
    )  # fmt: skip


def _dev_key(d: BlockDevice) -> tuple[Any, ...]:
    return (d.name, d.kind, d.rotational, d.scheduler, d.read_ahead_kb, d.nr_requests, d.lower)


def test_busybox_shell_and_applets_give_the_same_facts(
    tmp_path: Path, local_facts: OsFacts
) -> None:
    facts = _run_with_path(_busybox_path(tmp_path), ["/var/lib", "/tmp"])
    assert _comparable(facts) == _comparable(local_facts)
    assert facts.write_paths[0].total_bytes is not None
    assert facts.machine.big_processes, "BusyBox awk lists the processes"


def test_without_grep_and_awk_the_builtin_fallbacks_still_read_sysfs(
    tmp_path: Path, local_facts: OsFacts
) -> None:
    path = _busybox_path(tmp_path, leave_out=("grep", "egrep", "fgrep", "awk"))
    facts = _run_with_path(path, ["/var/lib", "/tmp"])
    assert _comparable(facts) == _comparable(local_facts)
    # The hypervisor flag is counted from the full /proc/cpuinfo instead.
    if local_facts.machine.virtualization not in (None, "none"):
        assert facts.machine.virtualization is not None


def test_a_non_linux_uname_is_refused_as_linux_only(tmp_path: Path) -> None:
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    uname = fake / "uname"
    uname.write_text("#!/bin/sh\ncase $1 in -s) echo FreeBSD ;; *) echo 14.1 ;; esac\n")
    uname.chmod(0o755)
    with pytest.raises(NotLinuxError, match="Linux only"):
        _run_with_path(f"{fake}:{os.environ['PATH']}", ["/tmp"])


# -- over SSH ---------------------------------------------------------------------------


@pytest.mark.parametrize("user", ["root", "innotune-np"])
def test_gathering_over_ssh_matches_local(
    sshd: SshServer,
    ssh_users: SshUsers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    local_facts: OsFacts,
    user: str,
) -> None:
    """As root and as an unprivileged login (no sudo): everything read is world-readable."""
    monkeypatch.setenv("HOME", str(tmp_path))
    known = tmp_path / "known_hosts"
    known.write_text(sshd.known_hosts_line())
    target = parse_target(
        f"{user}@{sshd.host}:{sshd.port}", ConnectOptions(identity=str(sshd.client_key))
    )
    transport = SshTransport(target, own_known_hosts=known)
    try:
        facts = gather_host(transport, ["/var/lib", "/tmp"])
    finally:
        transport.close()
    assert facts.commands_run == 1
    assert _comparable(facts) == _comparable(local_facts)
    assert facts.machine.unknown == local_facts.machine.unknown


# -- the disk probe -------------------------------------------------------------------------


def _leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".innotune-probe-")]


@pytest.mark.parametrize("method", ["python3", "dd"])
def test_disk_probe_on_the_loop_filesystem(loopfs: LoopFs, method: str) -> None:
    probe = probe_disk(LocalTransport(), str(loopfs.mountpoint), seconds=0.5, mib=8, method=method)
    assert probe.method == method
    assert probe.sync_writes_per_s is not None and probe.sync_writes_per_s > 0
    assert probe.seq_write_mb_s is not None and probe.seq_write_mb_s > 0
    # Bounded, not timed: 0.5 s of sync writes plus 8 MiB; a loaded machine may take longer.
    assert 8 * 2**20 <= probe.bytes_written and probe.seconds < 30
    assert probe.unknown == ()
    assert _leftovers(loopfs.mountpoint) == []


@pytest.mark.parametrize("pages", ["fio", "python3"])
def test_disk_probe_measures_page_writes_at_a_queue_depth(loopfs: LoopFs, pages: str) -> None:
    """io_capacity's measure: parallel O_DIRECT 16 KiB writes, by fio or python3 threads.

    The loop device's ext4 takes O_DIRECT, so neither falls back to O_DSYNC; the rate is a
    real one (above what a single writer waiting for each flush gets is not asserted: on a
    loop file over a page cache both can be fast), and nothing is left behind.
    """
    probe = probe_disk(
        LocalTransport(), str(loopfs.mountpoint), seconds=0.5, mib=4, pages=pages, depth=4
    )
    assert probe.page_method == ("fio" if pages == "fio" else "python3 O_DIRECT")
    assert probe.page_queue_depth == 4
    assert probe.page_writes_per_s is not None and probe.page_writes_per_s > 0
    assert probe.unknown == ()
    assert _leftovers(loopfs.mountpoint) == []


def test_disk_probe_in_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot create a file"):
        probe_disk(LocalTransport(), str(tmp_path / "nope"), seconds=0.2, mib=1)


def test_disk_probe_cleans_up_when_killed(tmp_path: Path) -> None:
    argv = probe_argv(str(tmp_path), 5.0, 64, "dd")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 5
    while not _leftovers(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _leftovers(tmp_path), "the probe started writing"
    os.kill(proc.pid, signal.SIGTERM)  # the shell (its trap), not its dd child
    proc.communicate(timeout=30)
    assert _leftovers(tmp_path) == []


def test_disk_probe_under_busybox_without_python_reports_why(tmp_path: Path) -> None:
    """BusyBox's dd has no oflag=dsync: the probe says so and leaves nothing behind."""
    work = tmp_path / "work"
    work.mkdir()
    argv = ["env", f"PATH={_busybox_path(tmp_path)}", *probe_argv(str(work), 0.2, 1, "auto")]
    result = LocalTransport().run(argv)
    probe = parse_probe_output(str(work), result.out)
    assert probe.method == "dd" and probe.sync_writes_per_s is None
    assert "invalid argument 'dsync'" in {u.what: u.why for u in probe.unknown}["disk probe"]
    assert _leftovers(work) == []
