"""Issue 8's remaining proofs: persistence replayed, a blackholed link, a killed job.

Each test drives the real detached job through a real transport, like test_apply.py, and
reuses its helpers (and its fixture that removes only the jobs and snapshots made here).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.describe import sysctl, sysfs, udev
from app.domain.target import ConnectOptions, parse_target
from app.jobs import runner
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.remote.ssh import SshTransport
from app.targetjob.values import active_value
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import need, wait_port
from tests.integration.test_apply import (  # noqa: F401 - the autouse fixture cleans up
    WATCH,
    _remove_new_jobs_and_snapshots,
    change,
    drop_in,
    facts_for,
    host_for,
    remove_jobs_and_snapshots,
    restart_argv,
    run_job,
    snapshot_state,
    tree,
    variable,
)

UDEVD = next(
    (
        p
        for p in ("/lib/systemd/systemd-udevd", "/usr/lib/systemd/systemd-udevd")
        if Path(p).exists()
    ),
    "/lib/systemd/systemd-udevd",
)


def running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for init to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@contextmanager
def udevd(log: Path) -> Iterator[None]:
    """systemd-udevd in the foreground of a process of ours, stopped (by its pid) afterwards."""
    with open(log, "wb") as out:
        proc = subprocess.Popen([UDEVD], stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(["udevadm", "control", "--ping"], capture_output=True).returncode:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "systemd-udevd did not answer"
            time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_persistence_replayed_by_udev_and_sysctl_then_rolled_back(
    local: LocalTransport, loop_server: PrivateServer, loopfs: LoopFs, tmp_path: Path
) -> None:
    """The job writes the udev rule and the sysctl.d file; the boot mechanisms replay them."""
    sched = loopfs.queue / "scheduler"
    old_sched = active_value(sched.read_text())
    new_sched = "none" if old_sched != "none" else "mq-deadline"
    swappiness = Path("/proc/sys/vm/swappiness")
    old_swap = swappiness.read_text().strip()
    new_swap = str(int(old_swap) - 1 if int(old_swap) > 1 else 2)  # harmless either way
    socket = str(loop_server.socket_path)
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    on_disk = change("queue/scheduler", "sysfs", new_sched, device=loopfs.name)
    kernel = change("vm.swappiness", "sysctl", new_swap)
    actions = [
        sysfs.describe([on_disk], host)[0],
        *udev.describe([on_disk], host),
        sysctl.describe([kernel], host)[0],
    ]
    host.session.close()
    rule = Path(actions[1].files[0].path)
    conf = Path(actions[2].files[0].path)
    assert not rule.exists() and not conf.exists()
    try:
        status = run_job(local, facts, actions, tmp_path)
        assert status.state == "applied", status.errors
        assert f'ATTR{{loop/backing_file}}=="{loopfs.image}"' in rule.read_text()
        assert f"vm.swappiness = {new_swap}" in conf.read_text()

        # Reset the live values, then replay what a boot does.
        sched.write_text(old_sched)
        swappiness.write_text(old_swap)
        subprocess.run(["sysctl", "--system"], check=True, capture_output=True)
        assert swappiness.read_text().strip() == new_swap
        with udevd(tmp_path / "udevd.log"):
            assert active_value(sched.read_text()) == old_sched
            argv = ["udevadm", "trigger", "--action=add", f"/sys/block/{loopfs.name}"]
            subprocess.run(argv, check=True)
            subprocess.run(["udevadm", "settle", "--timeout=30"], check=True)
            assert active_value(sched.read_text()) == new_sched

            back = runner.rollback(local, status.snapshot_id or "")
            assert back.state == "rolled-back", back.errors
        assert not rule.exists() and not conf.exists()  # they did not exist before
        assert active_value(sched.read_text()) == old_sched
        assert swappiness.read_text().strip() == old_swap
    finally:
        rule.unlink(missing_ok=True)
        conf.unlink(missing_ok=True)
        sched.write_text(old_sched)
        swappiness.write_text(old_swap)


def test_a_job_killed_mid_apply_is_rolled_back_by_its_watchdog(
    local: LocalTransport,
    private_server: PrivateServer,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """SIGKILL the job after its files are written, before the restart: the dead-man restores."""
    server = private_server
    before = tree(server.base / "etc")
    facts = facts_for(local, str(server.socket_path))
    assert facts.server is not None
    action = drop_in(server, "[mysqld]\ninnodb_log_buffer_size = 33554432\n")
    prepared = runner.prepare(
        local,
        [action],
        facts.server,
        target_label="test",
        local_dir=None,
        restart_argv=restart_argv(server),
        watch_seconds=WATCH,
        health_timeout=120.0,
        watchdog_grace=1.0,
    )
    request.addfinalizer(lambda: remove_jobs_and_snapshots([f"{prepared.job_id}-rescue"]))
    job = Path(runner.job_dir(prepared.job_id))
    killed: list[int] = []

    def on_step(step: runner.JobStep) -> None:
        if step.step == "validate" and not killed:
            killed.append(int((job / "pid").read_text()))
            os.kill(killed[0], signal.SIGKILL)

    runner.launch(local, prepared.job_id)
    status = runner.follow(local, prepared.job_id, on_step)
    assert killed, [s.line() for s in status.steps]
    assert status.state == "rolled-back", (status.errors, [s.line() for s in status.steps])
    assert "watchdog" in status.errors[0]
    assert any(s.step == "watchdog:restore" for s in status.steps)
    assert tree(server.base / "etc") == before  # byte-identical, no temp file left
    assert snapshot_state(local, status.snapshot_id) == "rolled-back"  # the rescue says so
    assert variable(server, "innodb_log_buffer_size") == "16777216"  # up, old settings


class NetnsSshServer(SshServer):
    """The test sshd, listening inside a network namespace reached over a veth pair."""

    def __init__(self, workdir: Path, netns: str, address: str) -> None:
        super().__init__(workdir, port=22)
        self.netns = netns
        self.host = address

    def start(self) -> None:
        """Start sshd in the namespace and wait for its port across the veth."""
        self.prepare()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        with open(self.log, "ab") as log:
            argv = ["ip", "netns", "exec", self.netns, "/usr/sbin/sshd", "-D", "-e"]
            self._proc = subprocess.Popen(
                [*argv, "-f", str(self.config)],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        wait_port(self.host, self.port)


@contextmanager
def veth_netns() -> Iterator[tuple[str, str, str]]:
    """A namespace and a veth pair with a private /30 that exists only between the two.

    Yields the namespace, the host side's interface and the namespace side's address.
    """
    tag = secrets.token_hex(3)
    netns, outside, inside = f"innotune-{tag}", f"itv{tag}a", f"itv{tag}b"
    net = f"169.254.{70 + int(tag[:2], 16) % 20}.{4 * (int(tag[2:], 16) % 60)}"
    base = net.rsplit(".", 1)[0] + "."
    last = int(net.rsplit(".", 1)[1])
    host_ip, ns_ip = f"{base}{last + 1}", f"{base}{last + 2}"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True)

    try:
        ip("netns", "add", netns)
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", netns)
        ip("addr", "add", f"{host_ip}/30", "dev", outside)
        ip("link", "set", outside, "up")
        ip("-n", netns, "addr", "add", f"{ns_ip}/30", "dev", inside)
        ip("-n", netns, "link", "set", inside, "up")
        ip("-n", netns, "link", "set", "lo", "up")
        yield netns, outside, ns_ip
    finally:
        subprocess.run(["ip", "link", "del", outside], capture_output=True)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)


def test_link_blackholed_mid_apply_the_job_finishes_and_a_reconnect_shows_it(
    ssh_users: SshUsers,
    private_server: PrivateServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    local: LocalTransport,
) -> None:
    """The veth into sshd's namespace goes down right after the launch: no FIN, no RST."""
    need(Path("/usr/sbin/sshd").exists(), "openssh-server is not installed")
    monkeypatch.setenv("HOME", str(tmp_path))
    server = private_server
    mine = server.include_dir / "99-innotune.cnf"
    text = "[mysqld]\ninnodb_log_buffer_size = 33554432\n"
    with veth_netns() as (netns, outside, address):
        sshd = NetnsSshServer(tmp_path / "sshd", netns, address)
        try:
            sshd.start()
            known = tmp_path / "known_hosts"
            # Port 22: known_hosts names the host without brackets.
            known.write_text(sshd.known_hosts_line().replace(f"[{address}]:22", address))
            target = parse_target(
                f"root@{address}:{sshd.port}", ConnectOptions(identity=str(sshd.client_key))
            )
            transport = SshTransport(target, own_known_hosts=known, connect_timeout=3)
            # Inspected from here: inside the namespace /proc/net/unix lists only that
            # namespace's sockets, so the instance's socket would not be found from there.
            facts = facts_for(local, str(server.socket_path))
            assert facts.server is not None
            prepared = runner.prepare(
                transport,
                [drop_in(server, text)],
                facts.server,
                target_label="test",
                local_dir=None,
                restart_argv=restart_argv(server),
                watch_seconds=WATCH,
                health_timeout=120.0,
                expected={"innodb_log_buffer_size": "33554432"},
            )
            runner.launch(transport, prepared.job_id)
            subprocess.run(["ip", "link", "set", "dev", outside, "down"], check=True)
            began = time.monotonic()
            with pytest.raises(runner.JobInterrupted):
                runner.follow(transport, prepared.job_id, poll_timeout=3)
            lost_after = time.monotonic() - began
            print(f"connection reported lost {lost_after:.1f} s after the link went down")
            assert lost_after < 30, lost_after
            transport.close()
            # The job goes on by itself (it runs on this same machine, inside the namespace).
            done = runner.wait(local, prepared.job_id, timeout=180)
            assert done.state == "applied", done.errors
            subprocess.run(["ip", "link", "set", "dev", outside, "up"], check=True)
            wait_port(address, sshd.port)
            again = SshTransport(target, own_known_hosts=known, connect_timeout=10)
            try:
                status = runner.status(again, prepared.job_id)
            finally:
                again.close()
        finally:
            sshd.stop()
    assert status.state == "applied", status.errors
    assert [s.step for s in status.steps][-1] == "end"
    # The job ended by itself, so its watchdog leaves without restoring anything.
    job = Path(runner.job_dir(prepared.job_id))
    watchdog = int((job / "watchdog.pid").read_text())
    deadline = time.monotonic() + 10
    while running(watchdog) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(watchdog)
    assert not Path(f"{job}-rescue").exists()
    assert mine.read_text() == text  # whole, never truncated
    assert not list(server.include_dir.glob(".*innotune-tmp"))
    assert variable(server, "innodb_log_buffer_size") == "33554432"
