"""The playbook over SSH against two booted Debian hosts whose datadirs lie on different kinds of
device (issue 29 item 4): trixie's datadir moved onto a loop device inside the host, bullseye's
left on the host's overlay root. The plan is made from trixie's facts with a disk queue
setting for its loop device: each host finds its own datadir's disk when the play runs;
trixie's loop disk gets the setting (its /sys is read-only inside the host, so the live write
is reported as not supported, and the udev rule is written, matching the loop device's
backing file), bullseye gets none, and the play says which for both.

Run with ``INNOTUNE_TEST_HOSTS=bullseye,trixie`` to boot only those two.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.describe.udev import rule_path
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.flows.export import export_playbook
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from tests.hosts.debian_hosts import DebianHost, put_back_if_changed
from tests.integration.test_export import extra, run_playbook
from tests.integration.test_lifecycle import innotune, ok

DATADIR = "/var/lib/mysql"


@dataclasses.dataclass
class LoopDatadir:
    """A host's datadir moved onto a loop device made on this machine."""

    host: DebianHost
    image: Path
    device: str  # /dev/loopN, the same node inside the host

    @property
    def name(self) -> str:
        """loopN."""
        return self.device.rsplit("/", 1)[1]


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def two_hosts(debian_hosts: dict[str, DebianHost]) -> tuple[DebianHost, DebianHost]:
    need = [n for n in ("trixie", "bullseye") if n not in debian_hosts]
    if need:
        pytest.skip(f"needs the booted {', '.join(need)} (INNOTUNE_TEST_HOSTS)")
    return debian_hosts["trixie"], debian_hosts["bullseye"]


@pytest.fixture
def loop_datadir(two_hosts: tuple[DebianHost, DebianHost], tmp_path: Path) -> Iterator[LoopDatadir]:
    """trixie's datadir copied onto an ext4 loop device and mounted over it, inside the host."""
    host = two_hosts[0]
    image = tmp_path / "datadir.img"
    with image.open("wb") as fh:
        fh.truncate(1024 * 1024 * 1024)  # sparse
    _sh("mkfs.ext4", "-q", "-F", str(image))
    device = _sh("losetup", "--find", "--show", str(image)).strip()
    minor = str(int(device.removeprefix("/dev/loop")))
    mounted = False
    try:
        host.run("sh", "-c", f'[ -b "$1" ] || mknod "$1" b 7 {minor}', "sh", device)
        host.run("systemctl", "stop", host.service, timeout=180)
        host.run("mkdir", "-p", "/mnt/innotune-loop")
        host.run("mount", device, "/mnt/innotune-loop")
        host.run("cp", "-a", f"{DATADIR}/.", "/mnt/innotune-loop/")
        host.run("umount", "/mnt/innotune-loop")
        host.run("mount", device, DATADIR)
        mounted = True
        host.run("systemctl", "start", host.service, timeout=180)
        host.wait_for_server()
        source = host.run("findmnt", "-n", "-o", "SOURCE", "-T", DATADIR).strip()
        assert source == device, source
        yield LoopDatadir(host, image, device)
    finally:
        host.run("systemctl", "stop", host.service, check=False, timeout=180)
        if mounted:
            host.run("umount", DATADIR, check=False)
        host.run("rm", "-f", device, check=False)
        host.run("systemctl", "start", host.service, check=False, timeout=180)
        host.wait_for_server()
        _sh("losetup", "-d", device)


def facts_of(host: DebianHost, tmp_path: Path) -> HostFacts:
    """The host inspected over SSH by the CLI (no sampling to speak of)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    cli, target = innotune(host, tmp_path)
    return HostFacts.from_json(ok(cli("inspect", *target, "--json", "--sample", "1")))


def loop_plan(facts: HostFacts, loop: LoopDatadir) -> Plan:
    """innodb_io_capacity (dynamic: live, no restart) and the loop disk's read-ahead."""
    plan = make_plan(facts, default_positions(facts), default_catalogue())
    read_ahead = (Path("/sys/block") / loop.name / "queue/read_ahead_kb").read_text().strip()
    changes = (
        extra("innodb_io_capacity", "dynamic", "1234", "200"),
        extra(
            "queue/read_ahead_kb",
            "sysfs",
            "96" if read_ahead != "96" else "112",
            read_ahead,
            device=loop.name,
        ),
    )
    return dataclasses.replace(plan, changes=changes)


def inventory_line(name: str, host: DebianHost, known_hosts: Path, version: str) -> str:
    ssh_args = f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes"
    port = host.target.rsplit(":", 1)[1]
    return (
        f"{name} ansible_host=127.0.0.1 ansible_port={port} ansible_user=root "
        f"ansible_ssh_private_key_file={host.client_key} "
        f"ansible_ssh_common_args={shlex.quote(ssh_args)} "
        "ansible_python_interpreter=/usr/bin/python3 "
        # The plan was made on trixie's server; bullseye's was checked by hand for this test.
        f"innotune_server_version={version}\n"
    )


def says(out: str, host: str) -> list[str]:
    """The messages of the "Say which disk queue settings" task for one host."""
    section = out.split("TASK [innotune : Say which disk queue settings this host gets]")[1]
    section = section.split("TASK [")[0]
    return re.findall(rf'ok: \[{host}\] => \(item=[^)]*\) => {{\s*"msg": "(.*?)"\n', section)


def test_the_playbook_finds_each_hosts_datadir_disk_at_run_time(
    two_hosts: tuple[DebianHost, DebianHost],
    loop_datadir: LoopDatadir,
    tmp_path: Path,
) -> None:
    trixie, bullseye = two_hosts
    facts = facts_of(trixie, tmp_path / "trixie")
    devices = {d.name: d for p in facts.os.write_paths for d in p.devices}
    loop = devices.get(loop_datadir.name)
    assert loop is not None and loop.kind == "loop", devices  # the inspection saw the loop
    plan = loop_plan(facts, loop_datadir)
    play = tmp_path / "play"
    export_playbook(plan, play, facts)
    known = tmp_path / "known_hosts"
    known.write_text(trixie.known_hosts_line() + bullseye.known_hosts_line())
    rules = tmp_path / "rules"
    for host in (trixie, bullseye):
        host.run("mkdir", "-p", str(rules))
    (play / "hosts.ini").write_text(
        "[innotune]\n"
        + inventory_line("trixie", trixie, known, facts.server.version.split("-")[0])  # type: ignore[union-attr]
        + inventory_line(
            "bullseye", bullseye, known, bullseye.sql("SELECT VERSION()").split("-")[0]
        )
        + f"[innotune:vars]\ninnotune_udev_dir={rules}\n"
    )
    before = {h.name: h.sql("SELECT @@innodb_io_capacity") for h in two_hosts}
    try:
        out, (_, changed, _, failed) = run_playbook(play, "--check", "--diff")
        assert failed == 0 and changed > 0, out
        assert out.count("+innodb_io_capacity = 1234") == 2, out  # each host's drop-in diff
        assert not trixie.differences() and not bullseye.differences(), "--check wrote a file"
        assert {h.name: h.sql("SELECT @@innodb_io_capacity") for h in two_hosts} == before

        out, (_, changed, _, failed) = run_playbook(play)
        assert failed == 0 and changed > 0, out
        backing = str(loop_datadir.image)
        rule = Path(rule_path(BlockDevice(loop_datadir.name, "loop", stable_id=backing))).name
        [trixie_says] = says(out, "trixie")
        assert trixie_says.startswith(f"{loop_datadir.name} is a loop device: it gets "), out
        assert f"queue/read_ahead_kb={plan.changes[1].proposed}, kept in {rule}" in trixie_says
        [bullseye_says] = says(out, "bullseye")
        assert bullseye_says == (
            f"no disk queue settings on this host: the datadir {DATADIR}/ lies on overlay, not "
            "on a block device"
        ), out
        # /sys is read-only inside the hosts: the live write is reported, never an error.
        assert (
            f"/sys/block/{loop_datadir.name}/queue/read_ahead_kb is read-only: not supported "
            "on this host" in out
        ), out
        written = trixie.run("cat", f"{rules}/{rule}")
        assert f'ATTR{{loop/backing_file}}=="{backing}"' in written, written
        assert f'ATTR{{queue/read_ahead_kb}}="{plan.changes[1].proposed}"' in written
        assert "KERNEL==" not in written
        assert bullseye.run("ls", "-A", str(rules)).strip() == ""  # no rule where no disk fits
        for host in two_hosts:
            assert host.sql("SELECT @@innodb_io_capacity") == "1234", host.name

        out, (_, changed, _, failed) = run_playbook(play)
        assert changed == 0 and failed == 0, out
    finally:
        for host in two_hosts:
            host.run("rm", "-rf", str(rules), check=False)
            host.put_back()  # a playbook has no rollback; put the host back as found
            host.sql(f"SET GLOBAL innodb_io_capacity = {before[host.name]}")
            assert not put_back_if_changed(host)
