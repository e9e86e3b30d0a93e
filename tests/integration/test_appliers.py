"""The appliers describe, the job does: against real servers, a loop device, this kernel.

Appliers only describe (``describe(...)``, nothing written); every real change here is
made by the job on this machine (:mod:`app.targetjob`), from the very Actions described,
the way apply makes it. Every real change is put back: /etc/mysql by the
``debian_mariadb`` fixture, sysfs and sysctl values and the files the job wrote by each
test's ``finally``; the jobs and snapshots by test_apply's cleanup fixture.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.describe import dynamic, optionfile, optionwinners, sysctl, sysfs, udev
from app.describe.actions import Action, ApplyError, Host
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.plan import Change
from app.jobs import control, runner
from app.jobs import snapshot as snap
from app.mysql.session import PyMySQLSession
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.loopdev import LoopFs
from tests.hosts.util import need_root, sh
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
    facts_for,
    restart_argv,
    run_job,
)

REPO = Path(__file__).resolve().parents[2]
FACTS = REPO / "tests" / "fixtures" / "hosts" / "practice-mariadb-10.11" / "facts.json"
VERSION = "10.11.19-MariaDB-0+deb12u1"


def change(key: str, proposed: str, target: str = "option_file", **kw: object) -> Change:
    fields: dict[str, object] = dict(
        id=key if "device" not in kw else f"{key}@{kw['device']}",
        slider="fit_disks",
        target=target,
        key=key,
        current=None,
        proposed=proposed,
        reason="test",
        risk="",
        live=target != "option_file",
        restart_needed=target == "option_file",
        link="",
        confidence="checked",
    )
    fields.update(kw)
    return Change(**fields)  # type: ignore[arg-type]


def host_for(instance: ServerInstance, option_files: tuple[str, ...] = ()) -> Host:
    """Real saved facts with the instance under test put in (the rest is never written)."""
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None
    server = dataclasses.replace(
        facts.server,
        instance=instance,
        version=VERSION,
        option_files=option_files,
        datadir=instance.datadir,
    )
    return Host(dataclasses.replace(facts, server=server), LocalTransport(), sudo=False)


def private_instance(server: PrivateServer) -> ServerInstance:
    argv = tuple(server.server_argv())
    return ServerInstance(
        pid=server.running_pid() or 0,
        binary=argv[0],
        argv=argv,
        user="mysql" if "--user=mysql" in argv else "root",
        sockets=(str(server.socket_path),),
        defaults_file=str(server.main_cnf),
        datadir=str(server.datadir),
        started_by="manual",
    )


def debian_instance() -> ServerInstance:
    pid = int(Path("/run/mysqld/mysqld.pid").read_text().split()[0])
    argv = tuple(Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1])
    return ServerInstance(
        pid=pid,
        binary=argv[0],
        argv=argv,
        user="mysql",
        datadir="/var/lib/mysql",
        started_by="sysv",
        service="mariadb",
    )


def job_does(actions: list[Action]) -> runner.JobStatus:
    """The job on this machine does ``actions``, with no server involved (sysfs, udev, sysctl).

    As :func:`app.jobs.runner.apply` does it: snapshot first, the bundle built from the
    Actions, the zipapp uploaded and launched detached, its journal followed.
    """
    transport = LocalTransport()
    how = {"restart_needed": False}
    saved = snap.take(transport, actions, target="test", instance={}, how=how, sudo=False)
    snap.store_on_target(transport, saved, sudo=False)
    bundle = runner.build_bundle(saved.id, saved, actions, validate=None, expected={})
    control._upload(transport, saved.id, bundle)  # noqa: SLF001 - prepare() needs a server
    runner.launch(transport, saved.id)
    return runner.follow(transport, saved.id)


class ArgvServer(PrivateServer):
    """A private server started with an extra command-line argument."""

    extra: tuple[str, ...] = ("--innodb-io-capacity=300",)

    def server_argv(self) -> list[str]:
        return [*super().server_argv(), *self.extra]


# -- option files: the real MariaDB binaries ---------------------------------------------------


def test_the_drop_in_described_is_the_one_the_job_writes_and_it_wins(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    host = host_for(private_instance(private_server))
    changes = [change("innodb_io_capacity", "1234"), change("max_connections", "77")]
    dry = optionfile.describe(changes, host)[0]
    (write,) = dry.files
    assert write.path == str(private_server.include_dir / "99-innotune.cnf") and write.creates
    assert write.after == b"[mysqld]\ninnodb_io_capacity = 1234\nmax_connections = 77\n"
    neighbour = private_server.include_dir / "50-server.cnf"
    assert write.mode == f"{neighbour.stat().st_mode & 0o777:04o}"
    assert dry.restart_needed and dry.restart is None
    (by_hand,) = dry.warnings  # started by hand: InnoTune says it cannot restart it
    assert by_hand.startswith("The server was started by hand")
    assert not Path(write.path).exists()  # describing writes nothing

    facts = facts_for(local, str(private_server.socket_path))
    steps: list[runner.JobStep] = []
    done = run_job(
        local,
        facts,
        [dry],
        tmp_path,
        on_step=steps.append,
        restart_argv=restart_argv(private_server),
        expected={"innodb_io_capacity": "1234", "max_connections": "77"},
    )
    assert done.state == "applied", (done.errors, [s.line() for s in steps])
    assert Path(write.path).read_bytes() == write.after  # the bytes the preview showed
    assert f"{write.path} ({len(write.after)} bytes" in " ".join(s.detail for s in steps)
    assert optionwinners.verify(host, write.path, {"innodb_io_capacity": "1234"}) == []
    assert private_server.query("SELECT @@innodb_io_capacity, @@max_connections").split() == [
        "@@innodb_io_capacity",
        "@@max_connections",
        "1234",
        "77",
    ]
    again = optionfile.describe(changes, host)[0]
    assert again.files == ()  # already in place: nothing to write

    # A dynamic change: described through a real session, the job sends the same SQL.
    host.session = PyMySQLSession.direct(
        user=getpass.getuser(), socket_path=str(private_server.socket_path)
    )
    try:
        live = change("innodb_io_capacity", "1500", "dynamic")
        dry_set = dynamic.describe([live], host)[0]
        assert dry_set.statements == ("SET GLOBAL innodb_io_capacity = 1500",)
        assert (dry_set.values[0].current, dry_set.values[0].new) == ("1234", "1500")
    finally:
        host.session.close()
    done = run_job(local, facts, [dry_set], tmp_path)
    assert done.state == "applied", done.errors
    sent = [s.detail for s in done.steps if s.step == "dynamic" and s.status == "ok"]
    assert sent == list(dry_set.statements)
    assert private_server.query("SELECT @@GLOBAL.innodb_io_capacity").split()[-1] == "1500"


def test_command_line_argument_that_beats_the_files_is_reported(
    local: LocalTransport, tmp_path: Path, private_servers: list[PrivateServer]
) -> None:
    server = ArgvServer(tmp_path / "argv")
    private_servers.append(server)
    server.start()
    host = host_for(private_instance(server))
    changes = [change("innodb_io_capacity", "1000")]
    dry = optionfile.describe(changes, host)[0]
    (warning,) = [w for w in dry.warnings if w.startswith("innodb_io_capacity:")]
    assert "command line sets 300, which wins" in warning
    assert "Remove --innodb-io-capacity=300 from the command that starts the server" in warning
    # Written and restarted by the job, the warning still holds (nothing is expected in force).
    facts = facts_for(local, str(server.socket_path))
    done = run_job(local, facts, [dry], tmp_path, restart_argv=restart_argv(server))
    assert done.state == "applied", done.errors
    wanted = {"innodb_io_capacity": "1000"}
    assert optionwinners.verify(host, dry.files[0].path, wanted) == [warning]
    server.restart()  # with its own command line again (the job's restart command lacks it)
    assert server.query("SELECT @@innodb_io_capacity").split()[-1] == "300"


def test_debian_drop_in_takes_effect_and_a_later_file_is_reported(
    local: LocalTransport, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    host = host_for(debian_instance(), ("/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"))
    # Concurrent test sessions share this server: pick a value it does not have now.
    before = debian_mariadb.query("SELECT @@innodb_io_capacity").strip()
    value = "1717" if before != "1717" else "1718"
    changes = [change("innodb_io_capacity", value)]
    dry = optionfile.describe(changes, host)[0]
    path = "/etc/mysql/mariadb.conf.d/99-innotune.cnf"
    assert [f.path for f in dry.files] == [path]
    assert (dry.files[0].mode, dry.files[0].owner) == ("0644", "root:root")
    assert dry.restart is not None and dry.restart.argv == ("/etc/init.d/mariadb", "restart")
    facts = facts_for(local, debian_mariadb.socket)
    restart = list(dry.restart.argv)
    done = run_job(
        local, facts, [dry], tmp_path, restart_argv=restart, expected={"innodb_io_capacity": value}
    )
    assert done.state == "applied", done.errors
    assert debian_mariadb.query("SELECT @@innodb_io_capacity").strip() == value

    later = Path("/etc/mysql/mariadb.conf.d/zz-later.cnf")
    later.write_text("[mysqld]\ninnodb_io_capacity = 555\n")
    (warning,) = optionwinners.verify(host, path, {"innodb_io_capacity": value})
    assert f"{later}:2 sets 555, which wins" in warning
    assert f"Remove line 2 of {later}" in warning
    # Planned now, InnoTune's file is named to sort after the later one, and wins.
    replan = optionfile.describe(changes, host)[0]
    assert [f.path for f in replan.files] == ["/etc/mysql/mariadb.conf.d/zzz-innotune.cnf"]
    assert not [w for w in replan.warnings if w.startswith("innodb_io_capacity")]


# -- option files: bad input, on a private server's files (not started) --------------------------


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[PrivateServer]:
    server = PrivateServer(tmp_path / "srv")
    server.write_layout()
    yield server


def test_main_file_without_include_dir_is_edited_only_where_it_changes(
    layout: PrivateServer,
) -> None:
    main = (
        b"# caf\xe9 latin-1 comment\r\n[client-server]\r\nsocket = /tmp/x.sock\r\n\r\n"
        b"[mysqld]\r\ndatadir = /tmp/d\r\ninnodb_io_capacity = 200 # old\r\n"
        b"max_connections=10\r\n"
    )
    layout.main_cnf.write_bytes(main)
    host = host_for(private_instance(layout))
    action = optionfile.describe([change("innodb_io_capacity", "900")], host)[0]
    (write,) = action.files
    assert write.path == str(layout.main_cnf) and write.before == main
    assert write.after == main.replace(b"= 200 # old", b"= 900 # old")
    assert "-innodb_io_capacity = 200 # old" in write.diff()


def test_a_file_with_a_password_is_never_rewritten(layout: PrivateServer) -> None:
    layout.main_cnf.write_text("[client]\npassword = s3cret\n[mysqld]\ndatadir = /tmp/d\n")
    host = host_for(private_instance(layout))
    with pytest.raises(ApplyError, match="holds a password"):
        optionfile.describe([change("innodb_io_capacity", "900")], host)[0]


def test_broken_files_are_reported_with_file_and_line(layout: PrivateServer) -> None:
    host = host_for(private_instance(layout))
    changes = [change("innodb_io_capacity", "900")]
    main = layout.main_cnf.read_text()
    layout.main_cnf.write_text(main.replace("[mysqld]", "[mysqld"))
    with pytest.raises(ApplyError, match=f"{layout.main_cnf}:6"):
        optionfile.describe(changes, host)[0]
    layout.main_cnf.write_text(main + f"!includedir {layout.base}/missing.d\n")
    with pytest.raises(ApplyError, match="missing.d: the directory does not exist"):
        optionfile.describe(changes, host)[0]
    # In an included file the server reports the error and carries on: so does InnoTune.
    layout.main_cnf.write_text(main)
    (layout.include_dir / "40-bad.cnf").write_text("[mysqld\nmax_connections = 5\n")
    (layout.include_dir / "45-loop.cnf").write_text(f"!include {layout.include_dir}/45-loop.cnf\n")
    (layout.include_dir / "50-server.cnf").write_bytes(b"# " + b"x" * 200 + b"\n" * 20000)
    action = optionfile.describe(changes, host)[0]
    assert [f.path for f in action.files] == [str(layout.include_dir / "99-innotune.cnf")]
    joined = "\n".join(action.warnings)
    assert f"{layout.include_dir}/40-bad.cnf:1" in joined
    assert "include loop" in joined


def test_unknown_variables_are_not_written_and_loose_without_a_binary(
    layout: PrivateServer,
) -> None:
    host = host_for(private_instance(layout))
    changes = [change("innodb_io_capacity", "900"), change("innodb_no_such_knob", "1")]
    action = optionfile.describe(changes, host)[0]
    assert action.unsupported == (
        f"innodb_no_such_knob: {layout.binaries.server} does not know this variable; not written.",
    )
    assert action.files[0].after == b"[mysqld]\ninnodb_io_capacity = 900\n"
    # No binary to ask (and MySQL's SET PERSIST file beats the option files).
    instance = dataclasses.replace(private_instance(layout), binary="/nonexistent/mysqld")
    host = host_for(instance)
    assert host.facts.server is not None
    server = dataclasses.replace(host.facts.server, flavour="mysql", version="8.0.36")
    host.facts = dataclasses.replace(host.facts, server=server)
    layout.datadir.mkdir(exist_ok=True)
    (layout.datadir / "mysqld-auto.cnf").write_text(
        '{"Version": 2, "mysql_dynamic_parameters": {"innodb_io_capacity": '
        '{"Value": "4000", "Metadata": {"Timestamp": 1, "User": "root", "Host": "localhost"}}}}'
    )
    action = optionfile.describe(changes[:1], host)[0]
    assert action.files[0].after == b"[mysqld]\nloose-innodb_io_capacity = 900\n"
    assert "written with loose-" in action.files[0].note
    # The persisted value would win: undoing it is part of the change, not a warning.
    assert not [w for w in action.warnings if w.startswith("innodb_io_capacity:")]
    assert action.persist_statements == ("RESET PERSIST IF EXISTS innodb_io_capacity",)
    assert action.server_files == (f"{layout.datadir}/mysqld-auto.cnf",)
    assert "holds innodb_io_capacity = 4000, which would beat this file" in action.files[0].note
    host.persisted = "persist"
    action = optionfile.describe(changes[:1], host)[0]
    assert action.persist_statements == ("SET PERSIST_ONLY innodb_io_capacity = 900",)


def test_a_value_the_server_rejects_is_reported_with_file_and_line(layout: PrivateServer) -> None:
    host = host_for(private_instance(layout))
    server_cnf = layout.include_dir / "50-server.cnf"
    server_cnf.write_text(server_cnf.read_text() + "innodb_io_capacity = abc\nbogus-knob = 1\n")
    action = optionfile.describe([change("max_connections", "60")], host)[0]
    rejected = [w for w in action.warnings if w.startswith("The server binary rejects")]
    assert any(f"({server_cnf}:9)" in w and "'abc'" in w for w in rejected), rejected
    assert any(f"({server_cnf}:10)" in w and "unknown variable" in w for w in rejected), rejected
    # The binary still tells which variables exist: no loose- needed.
    assert action.files[0].after == b"[mysqld]\nmax_connections = 60\n"


def test_a_file_changed_since_the_preview_is_not_overwritten(
    local: LocalTransport, layout: PrivateServer, tmp_path: Path
) -> None:
    host = host_for(private_instance(layout))
    changes = [change("innodb_io_capacity", "900")]
    seen = optionfile.describe(changes, host)[0]
    drop_in = layout.include_dir / "99-innotune.cnf"
    drop_in.write_text("[mysqld]\n# another admin's note\nmax_connections = 9\n")
    assert host.facts.server is not None
    with pytest.raises(ApplyError, match=f"Changed since the plan was made: {drop_in}"):
        run_job(local, host.facts, [seen], tmp_path, restart_argv=["true"])
    assert drop_in.read_text().endswith("max_connections = 9\n")
    # Previewed again, the admin's lines are kept and only InnoTune's is added.
    again = optionfile.describe(changes, host)[0]
    assert again.files[0].after.endswith(b"max_connections = 9\ninnodb_io_capacity = 900\n")


class _AsNobody(LocalTransport):
    """This computer, every command run as the unprivileged user nobody."""

    def run(self, argv, *, sudo=False, input=None, timeout=60.0):  # type: ignore[no-untyped-def]
        return super().run(["runuser", "-u", "nobody", "--", *argv], input=input)


def test_a_file_that_cannot_be_read_stops_the_write() -> None:
    need_root()
    with tempfile.TemporaryDirectory(dir="/tmp") as name:
        Path(name).chmod(0o755)
        server = PrivateServer(Path(name) / "srv")
        server.write_layout()
        for path in (server.base, server.base / "etc", server.include_dir):
            path.chmod(0o755)
        server.main_cnf.chmod(0o644)
        hidden = server.include_dir / "50-server.cnf"
        hidden.chmod(0o600)
        host = host_for(private_instance(server))
        host.transport = _AsNobody()
        with pytest.raises(ApplyError, match=f"Cannot read the option file {hidden}"):
            optionfile.describe([change("innodb_io_capacity", "900")], host)[0]
        assert not (server.include_dir / "99-innotune.cnf").exists()


def test_options_table_and_preview_cli_against_a_private_server(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    socket = str(private_server.socket_path)

    def innotune(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=REPO,
            env=dict(os.environ),
        )

    options = innotune("options", "local", "--instance", socket, "--json")
    assert options.returncode == 0, options.stderr
    rows = {r["name"]: r for r in json.loads(options.stdout)["rows"]}
    assert rows["innodb_buffer_pool_size"]["value"] == "128M"
    assert (
        rows["innodb_buffer_pool_size"]["source"] == f"{private_server.include_dir}/50-server.cnf:7"
    )

    out, plan_out = tmp_path / "preview.txt", tmp_path / "plan.json"
    preview = innotune(
        "preview", "local", "--instance", socket, "--sample", "0", "--crash-loss", "os",
        "--out", str(out), "--plan-out", str(plan_out),
    )  # fmt: skip
    assert preview.returncode == 0, preview.stderr
    drop_in = f"{private_server.include_dir}/99-innotune.cnf"
    assert f"+++ b{drop_in}" in preview.stdout
    assert "+innodb_flush_log_at_trx_commit = 2" in preview.stdout
    assert "SET GLOBAL innodb_flush_log_at_trx_commit = 2;" in preview.stdout
    assert out.read_text() == preview.stdout
    checksums = {c["path"]: c["sha256"] for c in json.loads(plan_out.read_text())["file_checksums"]}
    assert checksums[drop_in] is None  # absent now: apply refuses if it appears meanwhile
    assert not Path(drop_in).exists()


# -- sysfs, udev and sysctl on this machine --------------------------------------------------------


def test_sysfs_on_a_loop_device(loopfs: LoopFs) -> None:
    host = host_for(ServerInstance(pid=0, binary="/usr/sbin/mariadbd", argv=()))
    attr = loopfs.queue / "read_ahead_kb"
    original = attr.read_text().strip()
    new = "256" if original != "256" else "512"
    item = change("queue/read_ahead_kb", new, "sysfs", device=loopfs.name)
    try:
        dry = sysfs.describe([item], host)[0]
        (value,) = dry.values
        assert (value.current, value.new) == (original, new)
        assert value.path == str(attr) and not dry.commands  # the job writes the file itself
        assert attr.read_text().strip() == original
        done = job_does([dry])
        assert done.state == "applied", done.errors
        assert attr.read_text().strip() == new
        assert f"sysfs {attr} = {new}" in [s.detail for s in done.steps if s.status == "ok"]
    finally:
        attr.write_text(original)
    for key, why in (
        ("queue/hw_sector_size", "is read-only"),
        ("queue/innotune_missing", "does not exist"),
    ):
        other = sysfs.describe([change(key, "1", "sysfs", device=loopfs.name)], host)[0]
        assert why in other.unsupported[0] and "not supported on this host" in other.unsupported[0]
        assert not other.commands
    scheduler = change("queue/scheduler", "cfq", "sysfs", device=loopfs.name)
    assert "is not offered here" in sysfs.describe([scheduler], host)[0].unsupported[0]


def test_udev_rule_matches_a_loop_device_by_its_backing_file(tmp_path: Path) -> None:
    need_root()
    image = tmp_path / "udev.img"
    image.write_bytes(b"\0" * (8 << 20))
    device = sh("losetup", "--find", "--show", str(image)).strip()
    name = Path(device).name
    attr = Path(f"/sys/block/{name}/queue/read_ahead_kb")
    original = attr.read_text().strip()
    new = "64" if original != "64" else "96"
    rule: Path | None = None
    try:
        facts = HostFacts.from_json(FACTS.read_text())
        backing = Path(f"/sys/block/{name}/loop/backing_file").read_text().strip()
        loop = BlockDevice(name, "loop", stable_id=backing, stable_id_source="loop/backing_file")
        path = dataclasses.replace(facts.os.write_paths[0], devices=(loop,))
        facts = dataclasses.replace(facts, os=dataclasses.replace(facts.os, write_paths=(path,)))
        host = Host(facts, LocalTransport())
        item = change("queue/read_ahead_kb", new, "sysfs", device=name)
        (dry,) = udev.describe([item], host)
        (write,) = dry.files
        rule = Path(write.path)
        assert f'ATTR{{loop/backing_file}}=="{backing}"' in write.after.decode()
        assert "KERNEL==" not in write.after.decode()
        done = job_does([dry])
        assert done.state == "applied", done.errors
        assert rule.read_bytes() == write.after
        ran = [s.detail for s in done.steps if s.step == "commands"]
        assert " ".join(dry.commands[0].argv) in ran  # the reload, as the preview listed it
        # udevd is not running here; `udevadm test` runs the rules for the device instead.
        test = subprocess.run(
            ["udevadm", "test", "--action=change", f"/sys/block/{name}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (
            f"{rule}:4 ATTR '/sys/devices/virtual/block/{name}/queue/read_ahead_kb' writing '{new}'"
            in test.stderr + test.stdout
        )
        assert attr.read_text().strip() == new
    finally:
        if rule is not None:
            rule.unlink(missing_ok=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)


def test_sysctl_described_then_a_harmless_change_by_the_job() -> None:
    need_root()
    key = "vm.dirty_background_ratio"
    proc = Path("/proc/sys/vm/dirty_background_ratio")
    original = proc.read_text().strip()
    new = "7" if original != "7" else "8"
    host = host_for(ServerInstance(pid=0, binary="/usr/sbin/mariadbd", argv=()))
    item = change(key, new, "sysctl", current=original)
    written: list[Path] = []
    try:
        dry = sysctl.describe([item], host)[0]
        (value,) = dry.values
        assert (value.current, value.new) == (original, new)
        assert not dry.commands  # the job writes /proc/sys itself, as the preview says
        (write,) = dry.files
        assert write.after.endswith(f"{key} = {new}\n".encode())
        written.append(Path(write.path))
        assert write.path.startswith("/etc/sysctl.d/") and write.path.endswith("innotune.conf")
        done = job_does([dry])
        assert done.state == "applied", done.errors
        assert proc.read_text().strip() == new
        assert Path(write.path).read_bytes() == write.after
    finally:
        proc.write_text(original)
        for path in written:
            path.unlink(missing_ok=True)
