"""The exports run for real: ansible-playbook over the test sshd against the Debian MariaDB,
and the shell script against a private instance, applied and rolled back.

Kernel and disk values: vm.swappiness and the loop device's read-ahead (the loopfs fixture),
both put back in ``finally``. The sysctl.d file and udev rules go to the test's directory
(the paths are variables of both exports); /etc/mysql is put back by the fixture.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.access.database import open_session
from app.describe.udev import rule_path
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, Plan
from app.export import playbook_files, shell_script
from app.inspect.inspection import inspect
from app.inspect.instances import choose_instance, find_instances
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = shutil.which("ansible-playbook") or str(REPO / ".venv/bin/ansible-playbook")
RECAP = re.compile(r"ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")


def facts_for(transport: LocalTransport, socket: str) -> HostFacts:
    """Inspect the server at ``socket`` (no sampling)."""
    instances = find_instances(transport)
    instance = choose_instance(instances, socket)
    session = open_session(transport, instance)
    try:
        return inspect(transport, instances, instance, session, sample_seconds=0)
    finally:
        session.close()


def extra(key: str, target: str, new: str, current: str, device: str | None = None) -> Change:
    """A change the test adds beside the planner's, so every kind of target is exported."""
    return Change(
        id=f"{key}@{device}" if device else key,
        slider="test",
        target=target,
        key=key,
        current=current,
        proposed=new,
        reason=f"the export test sets {key}",
        risk="none: the test puts it back",
        live=target != "option_file",
        restart_needed=target == "option_file",
        link="",
        confidence="checked",
        device=device,
    )


def export_plan(facts: HostFacts, loopfs: LoopFs, swappiness: str, read_ahead: str) -> Plan:
    """The planner's buffer pool for this host (3% of RAM) plus a restart-needing setting, a
    sysctl and a sysfs value; nothing else the planner proposes here."""
    positions = dataclasses.replace(default_positions(facts), memory_share=3)
    plan = make_plan(facts, positions, default_catalogue())
    pool = plan.change("innodb_buffer_pool_size")
    assert pool is not None and plan.pool_rules
    log_buffer = "20971520"
    changes = (
        pool,
        extra("innodb_log_buffer_size", "option_file", log_buffer, "16777216"),
        extra("vm.swappiness", "sysctl", "7" if swappiness != "7" else "8", swappiness),
        extra(
            "queue/read_ahead_kb",
            "sysfs",
            "96" if read_ahead != "96" else "112",
            read_ahead,
            device=loopfs.name,
        ),
    )
    return dataclasses.replace(plan, changes=changes)


@pytest.fixture
def kernel_values(loopfs: LoopFs) -> Iterator[tuple[str, str]]:
    """vm.swappiness and the loop device's read_ahead_kb now; both put back afterwards."""
    swappiness = Path("/proc/sys/vm/swappiness").read_text().strip()
    read_ahead = (loopfs.queue / "read_ahead_kb").read_text().strip()
    try:
        yield swappiness, read_ahead
    finally:
        Path("/proc/sys/vm/swappiness").write_text(swappiness + "\n")
        (loopfs.queue / "read_ahead_kb").write_text(read_ahead + "\n")


#: The playbook's sentence for a datadir disk that is not of the planned kind (a loop device).
NONE_HERE = re.compile(
    r'"msg": "\S+ is (a spinning disk|an SSD|an NVMe drive|a disk of unknown kind); the '
    r"plan's queue settings are for a loop device: none set on this host\""
)


def with_device(facts: HostFacts, loopfs: LoopFs) -> HostFacts:
    """The facts with the loop device beside the datadir's devices (its kind is what counts)."""
    loop = BlockDevice(
        name=loopfs.name,
        kind="loop",
        rotational=True,
        stable_id=str(loopfs.image),
        stable_id_source="loop/backing_file",
    )
    path = dataclasses.replace(
        facts.os.write_paths[0],
        devices=(
            *facts.os.write_paths[0].devices,
            loop,
        ),
    )
    paths = (path, *facts.os.write_paths[1:])
    return dataclasses.replace(facts, os=dataclasses.replace(facts.os, write_paths=paths))


def digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- Ansible ------------------------------------------------------------------------------


def run_playbook(directory: Path, *args: str) -> tuple[str, tuple[int, int, int, int]]:
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(directory / ".ansible"),
        "ANSIBLE_LOCAL_TEMP": str(directory / ".ansible" / "tmp"),
        "ANSIBLE_REMOTE_TMP": str(directory / ".remote-tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PYTHON_INTERPRETER": "auto_silent",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_PIPELINING": "1",  # one SSH round trip per task: the runs take half the time
    }
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", "hosts.ini", "site.yml", *args],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    recap = RECAP.findall(out)
    assert proc.returncode == 0 and recap, out
    ok, changed, unreachable, failed = (int(x) for x in recap[-1])
    return out, (ok, changed, unreachable, failed)


def test_playbook_over_ssh_checks_applies_restarts_and_then_changes_nothing(
    local: LocalTransport,
    sshd: SshServer,
    debian_mariadb: DebianMariaDB,
    loopfs: LoopFs,
    kernel_values: tuple[str, str],
    tmp_path: Path,
) -> None:
    swappiness, read_ahead = kernel_values
    # The plan's queue setting is for a loop device; this machine's datadir is not on one.
    facts = with_device(facts_for(local, debian_mariadb.socket), loopfs)
    plan = export_plan(facts, loopfs, *kernel_values)
    pool = plan.change("innodb_buffer_pool_size")
    assert pool is not None
    play = tmp_path / "play"
    for name, text in playbook_files(plan, facts).items():
        (play / name).parent.mkdir(parents=True, exist_ok=True)
        (play / name).write_text(text)
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line())
    persist = tmp_path / "persist"
    (persist / "udev").mkdir(parents=True)
    (persist / "sysctl.d").mkdir()
    ssh_args = f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes"
    (play / "hosts.ini").write_text(
        "[innotune]\n"
        f"testdb ansible_host=127.0.0.1 ansible_port={sshd.port} ansible_user=root "
        f"ansible_ssh_private_key_file={sshd.client_key} "
        f"ansible_ssh_common_args={shlex.quote(ssh_args)} "
        # The target's own Python (discovery would find this machine's pyenv shims).
        "ansible_python_interpreter=/usr/bin/python3\n"
        "[innotune:vars]\n"
        f"innotune_sysctl_file={persist}/sysctl.d/99-innotune.conf\n"
        f"innotune_udev_dir={persist}/udev\n"
    )
    # A drop-in is there already: the run replaces it and keeps a backup beside it.
    earlier = b"# an earlier drop-in\n[mysqld]\n"
    dropin_path = Path("/etc/mysql/mariadb.conf.d/99-innotune.cnf")
    dropin_path.write_bytes(earlier)
    etc = digest_tree(Path("/etc/mysql"))
    old_log_buffer = debian_mariadb.query("SELECT @@innodb_log_buffer_size").strip()

    out, (_, changed, _, _) = run_playbook(play, "--check", "--diff")
    assert changed > 0, out
    assert "+innodb_log_buffer_size = 20971520" in out, out
    assert "-# an earlier drop-in" in out
    assert f"+innodb_buffer_pool_size = {pool.proposed}" in out, out
    assert "changed: [testdb] => (item={'key': 'vm.swappiness'" in out, out
    assert re.search(NONE_HERE, out), out  # the datadir's disk is not a loop device: said so
    assert "Set the disk queue settings live" in out and "/sys/block" not in out
    assert "RUNNING HANDLER [innotune : Restart the database server" in out, out
    assert digest_tree(Path("/etc/mysql")) == etc, "--check wrote a file"
    assert debian_mariadb.query("SELECT @@innodb_log_buffer_size").strip() == old_log_buffer
    assert Path("/proc/sys/vm/swappiness").read_text().strip() == swappiness

    out, (_, changed, _, failed) = run_playbook(play)
    assert changed > 0 and failed == 0, out
    assert "RUNNING HANDLER [innotune : Restart the database server" in out, out
    in_force = debian_mariadb.query(
        "SELECT @@innodb_log_buffer_size, @@innodb_buffer_pool_size"
    ).split()
    assert in_force == ["20971520", pool.proposed], out
    assert Path("/proc/sys/vm/swappiness").read_text().strip() == plan.changes[2].proposed
    assert re.search(NONE_HERE, out), out
    assert (loopfs.queue / "read_ahead_kb").read_text().strip() == read_ahead  # not this disk
    assert list((persist / "udev").iterdir()) == []  # no rule for a disk of another kind
    dropin = dropin_path.read_text()
    backups = list(dropin_path.parent.glob("99-innotune.cnf.*~"))
    assert [b.read_bytes() for b in backups] == [earlier]
    assert "Why: the export test sets innodb_log_buffer_size" in dropin
    assert "vm.swappiness = " in (persist / "sysctl.d" / "99-innotune.conf").read_text()

    out, (_, changed, _, _) = run_playbook(play)
    assert changed == 0, out
    assert "RUNNING HANDLER" not in out


# -- the shell script -----------------------------------------------------------------------


def restart_command(server: PrivateServer) -> str:
    """A restart command for a private server, as a service manager would run it."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; "
        "from app.practice.server import PrivateServer; "
        f"PrivateServer(Path({str(server.base)!r})).restart(timeout=60)"
    )
    return shlex.join([sys.executable, "-c", code])


def test_script_applies_to_a_private_instance_and_rolls_back_byte_identical(
    local: LocalTransport,
    loop_server: PrivateServer,
    loopfs: LoopFs,
    kernel_values: tuple[str, str],
    tmp_path: Path,
) -> None:
    """The private server's datadir lies on the loop device: the script finds that disk."""
    server = loop_server
    swappiness, read_ahead = kernel_values
    facts = facts_for(local, str(server.socket_path))
    devices = {d.name: d for p in facts.os.write_paths for d in p.devices}
    assert devices[loopfs.name].kind == "loop", devices
    plan = export_plan(facts, loopfs, *kernel_values)
    pool = plan.change("innodb_buffer_pool_size")
    assert pool is not None
    # Files that are there already: the script replaces them and must put them back as they were.
    dropin = server.include_dir / "99-innotune.cnf"
    dropin.write_text("# an earlier drop-in\n[mysqld]\ninnodb_io_capacity = 300\n")
    dropin.chmod(0o640)
    persist = tmp_path / "persist"
    (persist / "sysctl.d").mkdir(parents=True)
    sysctl_file = persist / "sysctl.d" / "99-innotune.conf"
    sysctl_file.write_bytes(b"# hand-written\nvm.swappiness=30\n")
    script = tmp_path / "plan.sh"
    script.write_text(shell_script(plan, facts))
    client = [a for a in server.client_argv() if a != "--batch"]
    env = {
        "PATH": os.environ["PATH"],
        "INNOTUNE_DROPIN_DIR": str(server.include_dir),
        "INNOTUNE_MYSQL": shlex.join(client),
        "INNOTUNE_RESTART": restart_command(server),
        "INNOTUNE_SYSCTL_FILE": str(sysctl_file),
        "INNOTUNE_UDEV_DIR": str(persist / "udev"),
        "INNOTUNE_SNAPSHOT_DIR": str(tmp_path / "snap" / "s"),
    }

    def run(*args: str, env: dict[str, str] = env) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", str(script), *args], env=env, capture_output=True, text=True, timeout=300
        )

    before_etc, before_persist = digest_tree(server.base / "etc"), digest_tree(persist)
    old = server.query("SELECT @@innodb_log_buffer_size, @@innodb_buffer_pool_size").split()[-2:]

    checked = run("check")
    assert checked.returncode == 0, checked.stderr
    assert "+innodb_log_buffer_size = 20971520" in checked.stdout
    assert "would restart the server" in checked.stdout
    assert digest_tree(server.base / "etc") == before_etc

    # Another version than the plan's: refused, nothing written, no snapshot.
    other = dataclasses.replace(
        plan, facts=dataclasses.replace(plan.facts, version="10.11.0-MariaDB")
    )
    wrong = tmp_path / "wrong.sh"
    wrong.write_text(shell_script(other))
    refused = subprocess.run(["sh", str(wrong)], env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "made for 10.11.0" in refused.stderr
    assert not (tmp_path / "snap").exists()

    applied = run("apply")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    now = server.query("SELECT @@innodb_log_buffer_size, @@innodb_buffer_pool_size").split()
    assert now[-2:] == ["20971520", pool.proposed]
    assert Path("/proc/sys/vm/swappiness").read_text().strip() == plan.changes[2].proposed
    assert (loopfs.queue / "read_ahead_kb").read_text().strip() == plan.changes[3].proposed
    assert f"{loopfs.name} is a loop device: it gets queue/read_ahead_kb=" in applied.stdout
    backing = BlockDevice(loopfs.name, "loop", stable_id=str(loopfs.image))
    rule = (persist / "udev" / Path(rule_path(backing)).name).read_text()
    assert f'ATTR{{loop/backing_file}}=="{loopfs.image}"' in rule, rule
    assert f'ATTR{{queue/read_ahead_kb}}="{plan.changes[3].proposed}"' in rule
    assert "KERNEL==" not in rule
    snap = tmp_path / "snap" / "s"
    assert oct(snap.stat().st_mode & 0o777) == "0o700"
    assert "Why: the export test sets innodb_log_buffer_size" in dropin.read_text()

    again = run("apply")  # a second apply keeps the first snapshot and changes nothing
    assert again.returncode == 0 and "keeping the snapshot" in again.stdout
    assert "wrote" not in again.stdout and "restarting" not in again.stdout

    back = run("rollback")
    assert back.returncode == 0, back.stdout + back.stderr
    assert digest_tree(server.base / "etc") == before_etc
    assert digest_tree(persist) == before_persist
    assert Path("/proc/sys/vm/swappiness").read_text().strip() == swappiness
    assert (loopfs.queue / "read_ahead_kb").read_text().strip() == read_ahead
    after = server.query("SELECT @@innodb_log_buffer_size, @@innodb_buffer_pool_size").split()
    assert after[-2:] == old


# -- the command line -----------------------------------------------------------------------


def test_export_command_from_saved_facts_and_from_a_saved_plan(tmp_path: Path) -> None:
    facts = REPO / "tests/fixtures/hosts/practice-mariadb-10.11/facts.json"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))

    def innotune(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
            cwd=REPO,
        )

    plan_file = tmp_path / "plan.json"
    made = innotune("plan", "--facts", str(facts), "--memory-share", "20", "--out", str(plan_file))
    assert made.returncode == 0, made.stderr
    assert Plan.from_json(plan_file.read_text()).pool_rules
    play = innotune(
        "export", "--facts", str(facts), "--memory-share", "20", "--ansible", str(tmp_path / "a")
    )
    assert play.returncode == 0, play.stderr
    assert (tmp_path / "a/site.yml").is_file() and "--check --diff" in play.stdout
    script = innotune("export", "--plan", str(plan_file), "--script", str(tmp_path / "s.sh"))
    assert script.returncode == 0, script.stderr
    assert "check" in script.stdout and (tmp_path / "s.sh").read_text().startswith("#!/bin/sh")
    both = innotune("export", "--plan", str(plan_file), "--facts", str(facts), "--script", "x")
    assert both.returncode == 2
