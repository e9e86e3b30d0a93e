"""Apply with snapshots, validation, health checks and rollback, against real servers.

Every test drives the real detached job on this host (``setsid -f python3 job.pyz``) through
a real transport; faults are real ones (a variable the server does not know, a page size
the datadir was not made with, a file edited behind InnoTune's back, the SSH connection
killed by PID).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.access.database import open_session
from app.describe import dynamic, optionfile, sysfs
from app.describe.actions import Action, FileWrite, Host, ValueChange
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change
from app.domain.target import ConnectOptions, parse_target
from app.inspect.inspection import inspect
from app.inspect.instances import choose_instance, find_instances
from app.jobs import history, runner
from app.jobs import snapshot as snap
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.remote.ssh import SshTransport
from app.targetjob.values import active_value
from tests.hosts.debian_mariadb import DebianMariaDB, record_tree, tree_digest
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import need_root
from tests.integration.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
WATCH = 2.0  # seconds watched after a restart: enough to see a crash at start, keeps tests short


def stop_job_processes(ids: list[str]) -> None:
    """End these jobs' processes (and watchdogs) that are still running.

    Only a test that failed half-way leaves one, e.g. a job waiting minutes for a
    confirmation that will never come; it must not outlive the test (nor its server).
    """
    dirs = [runner.job_dir(found) for found in ids]
    dirs += [d + "-rescue" for d in dirs]
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info.get("cmdline") or []
        if any(d in argv for d in dirs):
            with contextlib.suppress(psutil.Error):
                proc.kill()


def remove_jobs_and_snapshots(ids: list[str]) -> None:
    """Remove what the jobs with these ids left in this host's /var/lib/innotune."""
    stop_job_processes(ids)
    for found in ids:
        for path in (runner.job_dir(found), snap.target_dir(found)):
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _remove_new_jobs_and_snapshots(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Remove the jobs and snapshots this test made (only those: other sessions run too)."""
    made: list[str] = []
    new_id = snap.new_id

    def recording() -> str:
        made.append(new_id())
        return made[-1]

    monkeypatch.setattr(snap, "new_id", recording)
    yield
    remove_jobs_and_snapshots(made + [f"{m}-restore" for m in made])


def facts_for(transport: object, socket: str) -> HostFacts:
    """Inspect the server at ``socket`` (no sampling: only its files and variables matter)."""
    instances = find_instances(transport)  # type: ignore[arg-type]
    instance = choose_instance(instances, socket)
    session = open_session(transport, instance)  # type: ignore[arg-type]
    try:
        return inspect(transport, instances, instance, session, sample_seconds=0)  # type: ignore[arg-type]
    finally:
        session.close()


def host_for(transport: object, facts: HostFacts, socket: str) -> Host:
    instance = choose_instance(find_instances(transport), socket)  # type: ignore[arg-type]
    return Host(facts, transport, open_session(transport, instance), sudo=False)  # type: ignore[arg-type]


def change(key: str, target: str, new: str, device: str | None = None) -> Change:
    return Change(
        id=f"{key}@{device}" if device else key,
        slider="test",
        target=target,
        key=key,
        current=None,
        proposed=new,
        reason="test",
        risk="test",
        live=target != "option_file",
        restart_needed=target == "option_file",
        link="",
        confidence="checked",
        device=device,
    )


def restart_argv(server: PrivateServer) -> list[str]:
    """A --restart-command for a private server: stop, start, like a service manager."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; "
        "from app.practice.server import PrivateServer; "
        f"PrivateServer(Path({str(server.base)!r})).restart(timeout=60)"
    )
    return [sys.executable, "-c", code]


def tree(directory: Path) -> dict[str, str]:
    """sha256 of every file under ``directory`` (byte-identical means equal dicts)."""
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def drop_in(server: PrivateServer, text: str) -> Action:
    """A hand-made option-file action: a new drop-in that needs a restart."""
    return Action(
        applier="optionfile",
        change_ids=("test",),
        summary="test drop-in",
        files=(
            FileWrite(
                str(server.include_dir / "99-innotune.cnf"),
                None,
                text.encode(),
                "0644",
                "root:root",
                "option_file",
            ),
        ),
        restart_needed=True,
    )


def run_job(
    transport: object, facts: HostFacts, actions: list[Action], tmp: Path, **kw: object
) -> runner.JobStatus:
    assert facts.server is not None
    kw.setdefault("watch_seconds", WATCH)
    kw.setdefault("health_timeout", 120.0)
    return runner.apply(
        transport,  # type: ignore[arg-type]
        actions,
        facts.server,
        target_label="test",
        local_dir=tmp / "snapshots",
        **kw,
    )


def snapshot_state(transport: object, snapshot_id: str | None) -> str:
    """The state the target records for a snapshot (applied, kept, rolled-back, ...)."""
    records = history.list_records(transport)  # type: ignore[arg-type]
    return {r.id: r.state for r in records}[snapshot_id or ""]


def variable(server: PrivateServer, name: str) -> str:
    return server.query(f"SELECT @@GLOBAL.{name}").split()[-1]


# -- the main flow ------------------------------------------------------------------------


def test_apply_with_restart_on_the_loop_device_then_rollback_from_another_process(
    local: LocalTransport,
    loop_server: PrivateServer,
    loopfs: LoopFs,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """Drop-in + dynamic variable + the loop device's scheduler; roll back from the CLI."""
    server = loop_server
    sched = loopfs.queue / "scheduler"
    old_sched = active_value(sched.read_text())
    new_sched = "none" if old_sched != "none" else "mq-deadline"
    etc_before = tree(server.base / "etc")
    socket = str(server.socket_path)
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    changes = [
        change("innodb_log_buffer_size", "option_file", "33554432"),
        change("innodb_io_capacity", "dynamic", "345"),
        change("queue/scheduler", "sysfs", new_sched, device=loopfs.name),
    ]
    actions = [
        optionfile.describe(changes, host)[0],
        dynamic.describe([changes[1]], host)[0],
        sysfs.describe([changes[2]], host)[0],
    ]
    host.session.close()
    assert actions[0].restart_needed and actions[2].values[0].path == str(sched)
    steps: list[runner.JobStep] = []
    try:
        status = run_job(
            local,
            facts,
            actions,
            tmp_path,
            on_step=steps.append,
            restart_argv=restart_argv(server),
            expected={"innodb_log_buffer_size": "33554432"},
        )
        assert status.state == "applied", (status.errors, [s.line() for s in steps])
        assert status.restarted and status.downtime_seconds is not None
        # In force: the restart took the drop-in, the live value was kept in it too.
        assert variable(server, "innodb_log_buffer_size") == "33554432"
        assert variable(server, "innodb_io_capacity") == "345"
        assert active_value(sched.read_text()) == new_sched
        names = [s.step for s in steps]
        assert names.index("snapshot") < names.index("write") < names.index("validate")
        assert names.index("validate") < names.index("restart") < names.index("verify")
        # The snapshot: root-only on the target, and a local copy; both verify.
        target_copy = Path(snap.target_dir(status.snapshot_id or ""))
        assert target_copy.stat().st_mode & 0o777 == 0o700
        assert (target_copy / "manifest.json").stat().st_mode & 0o777 == 0o600
        saved = snap.load_locally(tmp_path / "snapshots", status.snapshot_id or "")
        assert [f.existed for f in saved.files] == [False]
        assert {v.kind: v.value for v in saved.values} == {
            "dynamic": "200",
            "sysfs": old_sched,
        }

        # Another process, later: the CLI restores from the target's copy.
        env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
        rolled = subprocess.run(
            [sys.executable, "-m", "app", "rollback", "local", status.snapshot_id or "", "--yes"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=REPO,
        )
        remove_later = re.findall(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}-restore\b", rolled.stdout)
        request.addfinalizer(lambda: remove_jobs_and_snapshots(remove_later))
        assert rolled.returncode == 0, rolled.stdout + rolled.stderr
        assert "rolled-back" in rolled.stdout
    finally:
        sched.write_text(old_sched)
    assert tree(server.base / "etc") == etc_before
    assert active_value(sched.read_text()) == old_sched
    assert variable(server, "innodb_log_buffer_size") == "16777216"
    assert variable(server, "innodb_io_capacity") == "200"


def test_apply_and_rollback_on_debian_mariadb_through_its_init_script(
    local: LocalTransport, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    socket = debian_mariadb.socket
    before = tree_digest(record_tree())
    old = debian_mariadb.query("SELECT @@innodb_log_buffer_size").strip()
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    actions = [
        optionfile.describe([change("innodb_log_buffer_size", "option_file", "20971520")], host)[0]
    ]
    host.session.close()
    assert actions[0].files[0].path.startswith("/etc/mysql/")
    status = run_job(
        local,
        facts,
        actions,
        tmp_path,
        restart_argv=["/etc/init.d/mariadb", "restart"],
        expected={"innodb_log_buffer_size": "20971520"},
    )
    assert status.state == "applied", status.errors
    assert debian_mariadb.query("SELECT @@innodb_log_buffer_size").strip() == "20971520"
    back = runner.rollback(local, status.snapshot_id or "")
    assert back.state == "rolled-back", back.errors
    assert tree_digest(record_tree()) == before
    assert debian_mariadb.query("SELECT @@innodb_log_buffer_size").strip() == old


# -- faults -------------------------------------------------------------------------------


def test_validation_stops_unknown_variable_and_oversized_pool_before_any_restart(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    before, pid = tree(server.base / "etc"), server.running_pid()
    facts = facts_for(local, str(server.socket_path))
    bad = drop_in(server, "[mysqld]\ninnodb_no_such_knob = 1\n")
    status = run_job(local, facts, [bad], tmp_path, restart_argv=restart_argv(server))
    assert status.state == "rolled-back"
    assert "unknown variable" in " ".join(status.errors + status.log_lines)
    assert not status.restarted and server.running_pid() == pid
    assert tree(server.base / "etc") == before

    # A pool larger than RAM passes the binary's check; InnoTune's memory check stops it.
    huge = drop_in(server, "[mysqld]\ninnodb_buffer_pool_size = 64T\n")
    status = run_job(
        local,
        facts,
        [huge],
        tmp_path,
        restart_argv=restart_argv(server),
        expected={"innodb_buffer_pool_size": str(64 << 40)},
    )
    assert status.state == "rolled-back"
    assert "does not fit" in " ".join(status.errors)
    assert server.running_pid() == pid and tree(server.base / "etc") == before


def test_a_server_that_fails_to_start_is_rolled_back_with_its_log_lines(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    """innodb_page_size passes validation, but this datadir was made with 16k pages."""
    server = private_server
    before = tree(server.base / "etc")
    facts = facts_for(local, str(server.socket_path))
    bad = drop_in(server, "[mysqld]\ninnodb_page_size = 8192\n")
    status = run_job(local, facts, [bad], tmp_path, restart_argv=restart_argv(server))
    assert status.state == "rolled-back", status.errors
    assert status.restarted  # the restart with the old files
    assert any("page size" in line or "page_size" in line for line in status.log_lines)
    assert tree(server.base / "etc") == before
    assert variable(server, "innodb_page_size") == "16384"


def test_a_file_changed_behind_innotunes_back_is_refused(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    mine = server.include_dir / "99-innotune.cnf"
    mine.write_text("[mysqld]\ninnodb_io_capacity = 300\n")
    socket = str(server.socket_path)
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    action = optionfile.describe(
        [change("innodb_log_buffer_size", "option_file", "33554432")], host
    )[0]
    host.session.close()
    assert action.files[0].path == str(mine)
    # Between the plan and the snapshot: the runner refuses, nothing is stored or written.
    mine.write_text("[mysqld]\ninnodb_io_capacity = 301\n")
    with pytest.raises(runner.ApplyError, match="Changed since the plan"):
        run_job(local, facts, [action], tmp_path, restart_argv=restart_argv(server))
    # Between the snapshot and the job's first write: the job refuses, writes nothing.
    fresh = dataclasses.replace(
        action, files=(dataclasses.replace(action.files[0], before=mine.read_bytes()),)
    )
    prepared = runner.prepare(
        local,
        [fresh],
        facts.server,  # type: ignore[arg-type]
        target_label="test",
        local_dir=None,
        restart_argv=restart_argv(server),
    )
    mine.write_text("[mysqld]\ninnodb_io_capacity = 302\n")
    pid = server.running_pid()
    runner.launch(local, prepared.job_id)
    status = runner.follow(local, prepared.job_id)
    assert status.state == "refused" and "changed since the plan" in status.errors[0]
    assert mine.read_text() == "[mysqld]\ninnodb_io_capacity = 302\n"
    assert server.running_pid() == pid


def test_dynamic_only_no_restart_missing_and_read_only_sysfs_reported_rollback_twice(
    local: LocalTransport, private_server: PrivateServer, loopfs: LoopFs, tmp_path: Path
) -> None:
    server = private_server
    socket = str(server.socket_path)
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    action = dynamic.describe([change("innodb_io_capacity", "dynamic", "321")], host)[0]
    host.session.close()
    read_only = str(loopfs.queue / "hw_sector_size")
    odd = Action(
        "sysfs",
        ("odd",),
        "missing and read-only sysfs files",
        values=(
            ValueChange(
                "sysfs",
                "queue/scheduler",
                "x",
                "none",
                True,
                "",
                "nope0",
                "/sys/block/nope0/queue/scheduler",
            ),
            ValueChange(
                "sysfs", "queue/hw_sector_size", "512", "4096", True, "", loopfs.name, read_only
            ),
        ),
    )
    pid = server.running_pid()
    status = run_job(local, facts, [action, odd], tmp_path)
    assert status.state == "applied", status.errors
    assert not status.restarted and server.running_pid() == pid
    assert variable(server, "innodb_io_capacity") == "321"
    warned = " ".join(status.warnings)
    assert "/sys/block/nope0/queue/scheduler does not exist" in warned
    assert f"{read_only} is read-only" in warned
    for _ in range(2):  # idempotent
        back = runner.rollback(local, status.snapshot_id or "")
        assert back.state == "rolled-back", back.errors
        assert variable(server, "innodb_io_capacity") == "200"
        assert server.running_pid() == pid


def test_corrupt_snapshot_stops_the_rollback_loudly(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    facts = facts_for(local, str(server.socket_path))
    status = run_job(
        local,
        facts,
        [
            dataclasses.replace(
                drop_in(server, "[mysqld]\ninnodb_io_capacity = 250\n"), restart_needed=False
            )
        ],
        tmp_path,
    )
    assert status.state == "applied", status.errors
    manifest = Path(snap.target_dir(status.snapshot_id or "")) / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"existed": false', '"existed": true'))
    with pytest.raises(snap.SnapshotError, match="corrupt"):
        runner.rollback(local, status.snapshot_id or "")
    assert (server.include_dir / "99-innotune.cnf").exists()  # nothing was restored


# -- the connection cut mid-apply ---------------------------------------------------------


def _connection_processes(sshd: SshServer) -> list[psutil.Process]:
    listener = int((sshd.workdir / "sshd.pid").read_text())
    return psutil.Process(listener).children()


def test_ssh_cut_mid_apply_the_job_finishes_and_the_next_connect_shows_it(
    sshd: SshServer, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("HOME", str(tmp_path))
    known = tmp_path / "known_hosts"
    known.write_text(sshd.known_hosts_line())
    target = parse_target(
        f"root@{sshd.host}:{sshd.port}", ConnectOptions(identity=str(sshd.client_key))
    )
    server = private_server
    before = set(p.pid for p in _connection_processes(sshd))
    transport = SshTransport(target, own_known_hosts=known)
    mine = [p for p in _connection_processes(sshd) if p.pid not in before]
    assert mine, "no per-connection sshd process found"
    facts = facts_for(transport, str(server.socket_path))
    action = drop_in(server, "[mysqld]\ninnodb_log_buffer_size = 33554432\n")
    cut: list[str] = []

    def on_step(step: runner.JobStep) -> None:
        if step.step == "write" and not cut:
            for proc in mine:
                os.kill(proc.pid, signal.SIGKILL)
            cut.append(step.detail)

    with pytest.raises(runner.JobInterrupted) as lost:
        run_job(
            transport,
            facts,
            [action],
            tmp_path,
            on_step=on_step,
            restart_argv=restart_argv(server),
            expected={"innodb_log_buffer_size": "33554432"},
        )
    transport.close()
    again = SshTransport(target, own_known_hosts=known)
    try:
        status = runner.wait(again, lost.value.job_id, timeout=180)
    finally:
        again.close()
    assert status.state == "applied", status.errors
    assert [s.step for s in status.steps][-1] == "end"
    assert variable(server, "innodb_log_buffer_size") == "33554432"


def test_confirm_within_rolls_back_without_a_confirmation(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    before = tree(server.base / "etc")
    # What a job killed mid-write leaves: never *.cnf, and the next job removes it.
    (server.include_dir / ".99-innotune.cnf.k1ll3d.innotune-tmp").write_text("[mysqld]\ninno")
    facts = facts_for(local, str(server.socket_path))
    action = drop_in(server, "[mysqld]\ninnodb_io_capacity = 260\n")
    action = dataclasses.replace(action, restart_needed=False)
    status = run_job(local, facts, [action], tmp_path, confirm_within=1.0)
    assert status.state == "awaiting-confirm"
    status = runner.follow(local, status.job_id, stop_at_confirm=False)
    assert status.state == "rolled-back" and "not confirmed" in status.errors[0]
    assert tree(server.base / "etc") == before
    assert snapshot_state(local, status.snapshot_id) == "rolled-back"
    # Confirmed in time: kept.
    status = run_job(local, facts, [action], tmp_path, confirm_within=30.0)
    assert snapshot_state(local, status.snapshot_id) == "awaiting-confirm"
    runner.confirm(local, status.job_id)
    status = runner.follow(local, status.job_id, stop_at_confirm=False)
    assert status.state == "applied"
    assert snapshot_state(local, status.snapshot_id) == "kept"
    assert (
        server.include_dir / "99-innotune.cnf"
    ).read_text() == "[mysqld]\ninnodb_io_capacity = 260\n"


def test_cli_applies_a_saved_plan_refuses_it_when_stale_and_rolls_back(
    private_server: PrivateServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    need_root()
    innotune = Cli(tmp_path / "xdg")
    request.addfinalizer(lambda: remove_jobs_and_snapshots(innotune.ids))
    server = private_server
    socket = str(server.socket_path)

    plan = tmp_path / "plan.json"
    common = ["local", "--instance", socket]
    sliders = ["--crash-loss", "os", "--fit-os", "off", "--fit-disks", "off"]
    sliders += ["--memory-share", "keep", "--redo", "keep"]
    made = innotune("preview", *common, "--sample", "0", *sliders, "--plan-out", str(plan))
    assert made.returncode == 0, made.stderr
    drop = server.include_dir / "99-innotune.cnf"
    before = tree(server.base / "etc")

    drop.write_text("[mysqld]\n# someone else's\n")  # after the plan was saved
    stale = innotune("apply", *common, "--plan", str(plan), "--yes")
    assert stale.returncode == 1 and "changed since the plan" in stale.stderr
    assert drop.read_text() == "[mysqld]\n# someone else's\n"
    drop.unlink()

    asked = innotune("apply", *common, "--plan", str(plan))  # no terminal, no --yes
    assert asked.returncode == 1 and "Nothing was changed" in asked.stdout
    assert tree(server.base / "etc") == before

    applied = innotune("apply", *common, "--plan", str(plan), "--yes", "--watch", "1")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "applied" in applied.stdout and "✓ verify" in applied.stderr
    assert variable(server, "innodb_flush_log_at_trx_commit") == "2"
    listed = innotune("snapshots", "local")
    assert listed.returncode == 0 and "target + this computer" in listed.stdout

    back = innotune("rollback", *common, "--yes")  # this server's newest snapshot in force
    assert back.returncode == 0, back.stdout + back.stderr
    assert variable(server, "innodb_flush_log_at_trx_commit") == "1"
    assert tree(server.base / "etc") == before


def test_through_sudo_with_a_password_and_refused_without_one(
    sshd: SshServer,
    ssh_users: SshUsers,
    private_server: PrivateServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every step of the runner works through `sudo -S`; without the password nothing moves."""
    need_root()
    monkeypatch.setenv("HOME", str(tmp_path))
    known = tmp_path / "known_hosts"
    known.write_text(sshd.known_hosts_line())
    target = parse_target(
        f"{ssh_users.pw_user}@{sshd.host}:{sshd.port}",
        ConnectOptions(identity=str(sshd.client_key)),
    )
    server = private_server
    before = tree(server.base / "etc")
    socket = str(server.socket_path)
    with_pw = SshTransport(target, own_known_hosts=known, sudo_password=ssh_users.pw_password)
    try:
        assert not with_pw.is_root
        facts = facts_for(with_pw, socket)
        action = drop_in(server, "[mysqld]\ninnodb_io_capacity = 270\n")
        action = dataclasses.replace(action, restart_needed=False)
        status = run_job(with_pw, facts, [action], tmp_path)
        assert status.state == "applied", status.errors
        assert (server.include_dir / "99-innotune.cnf").stat().st_uid == 0
        # The snapshots' record reads through sudo too, with the instance they belong to.
        found = {r.id: r for r in history.list_records(with_pw)}[status.snapshot_id or ""]
        assert found.state == "applied"
        assert found.snapshot.instance["datadir"] == str(server.datadir)
        back = runner.rollback(with_pw, status.snapshot_id or "")
        assert back.state == "rolled-back", back.errors
        assert snapshot_state(with_pw, status.snapshot_id) == "rolled-back"
    finally:
        with_pw.close()
    assert tree(server.base / "etc") == before

    without = SshTransport(target, own_known_hosts=known)
    try:
        with pytest.raises(InnoTuneError, match="sudo"):
            run_job(without, facts, [action], tmp_path)
    finally:
        without.close()
    assert tree(server.base / "etc") == before


def test_disk_full_under_the_config_directory_leaves_no_file_and_the_server_up(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    """A tiny full filesystem mounted over conf.d: the write fails, nothing is left there."""
    server = private_server
    conf_d = server.include_dir
    seeded = {p.name: p.read_bytes() for p in conf_d.iterdir()}
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8k,mode=0755", "tmpfs", str(conf_d)], check=True
    )
    try:
        for name, data in seeded.items():
            (conf_d / name).write_bytes(data)
        filler = conf_d / "filler.bin"
        with open(filler, "wb") as fh:  # fill the rest of it
            try:
                fh.write(b"\0" * 65536)
            except OSError:
                pass
        before = tree(conf_d)
        pid = server.running_pid()
        facts = facts_for(local, str(server.socket_path))
        action = drop_in(server, "[mysqld]\ninnodb_io_capacity = 280\n" + "#" * 5000 + "\n")
        status = run_job(local, facts, [action], tmp_path, restart_argv=restart_argv(server))
        assert status.state == "rolled-back"
        assert "No space left" in " ".join(status.errors)
        assert tree(conf_d) == before  # no temp file, no truncated drop-in
        assert server.running_pid() == pid
    finally:
        subprocess.run(["umount", str(conf_d)], check=True)
