"""Session fixtures: the real hosts every integration test talks to.

Under CI=true a skipped test counts as failed: every real part must be there.
After the session, nothing of ours may still run, be mounted or be attached.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.practice.server import PrivateServer
from tests.hosts import reaper
from tests.hosts.debian_hosts import SPECS, DebianHost, LocalDebian, put_back_if_changed
from tests.hosts.debian_mariadb import DebianMariaDB, exclusive_use
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import IN_CI, need, need_root

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the real user's InnoTune data (known hosts, snapshots, logs, practice server).
_HOME_FOR_TESTS = tempfile.mkdtemp(prefix="innotune-tests-home-")
os.environ["XDG_DATA_HOME"] = os.path.join(_HOME_FOR_TESTS, "data")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_HOME_FOR_TESTS, "config")
atexit.register(shutil.rmtree, _HOME_FOR_TESTS, True)
# The tests start `python -m app` many times. With PYTHONDONTWRITEBYTECODE set (as in
# some shells) each start compiled every module it imports again, about 0.5 s of CPU; those
# processes keep their compiled modules in a cache outside the repository instead.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault("PYTHONPYCACHEPREFIX", "/var/cache/innotune-tests/pycache")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI=true a skip is a failure: a missing real part must not pass unnoticed."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true (a real part is missing): {report.longrepr}"


def _orphan_started_after(pid: str, boot_ticks: int) -> bool:
    """True for a process re-parented to init that started after ``boot_ticks``.

    Orphans only: a live sshd of another test session running now has its own parent.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[1] == "1" and int(fields[19]) >= boot_ticks


def _leftovers(base: Path) -> list[str]:
    found = []
    marker = str(base)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and not cmd.startswith(("pytest", "python")):
            found.append(f"process {proc.name}: {cmd.strip()[:160]}")
        elif cmd.startswith("sshd: ") and _orphan_started_after(proc.name, _SESSION_START_TICKS):
            # A per-connection sshd of one of our servers, orphaned when its listener died.
            found.append(f"process {proc.name}: {cmd.strip()[:160]}")
    for line in Path("/proc/self/mounts").read_text().splitlines():
        if marker in line:
            found.append(f"mount: {line}")
    loops = subprocess.run(
        ["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
        capture_output=True,
        text=True,
    ).stdout
    found += [f"loop device: {ln}" for ln in loops.splitlines() if marker in ln]
    return found


def _in_run_cgroup() -> list[str]:
    """Processes still in this run's cgroup, but pytest and the shared services."""
    root = reaper.cgroup2_root()
    if root is None:
        return []
    procs = root / f"innotune-run-{os.getpid()}" / "cgroup.procs"
    try:
        pids = [int(p) for p in procs.read_text().split()]
    except OSError:
        return []
    spare = reaper.shared_service_pids() | {os.getpid()}
    found = []
    for pid in pids:
        if pid in spare:
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        found.append(f"process {pid} started by the run: {cmd.strip()[:160]}")
    return found


def _now_ticks() -> int:
    """This moment in /proc/PID/stat starttime units (clock ticks since boot)."""
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return int(uptime * os.sysconf("SC_CLK_TCK"))


_SESSION_START_TICKS = _now_ticks()

# Kernel settings a test might change on this machine; they must be as found at the end.
_WATCHED_SYSCTLS = ("vm/swappiness", "vm/dirty_ratio", "vm/dirty_background_ratio")


def _sysctl_values() -> dict[str, str]:
    values = {}
    for key in _WATCHED_SYSCTLS:
        try:
            values[key] = (Path("/proc/sys") / key).read_text().strip()
        except OSError:
            continue
    return values


_SYSCTLS_AT_START = _sysctl_values()


def _host_changes() -> list[str]:
    """InnoTune's files left in this machine's system directories, and changed kernel values."""
    found = [
        f"file left on this machine: {path}"
        for folder in ("/etc/sysctl.d", "/etc/udev/rules.d", "/etc/mysql")
        for path in sorted(Path(folder).rglob("*innotune*"))
        if Path(folder).is_dir()
    ]
    now = _sysctl_values()
    found += [
        f"kernel setting changed by the suite: {key} {_SYSCTLS_AT_START[key]} -> {now.get(key)}"
        for key in _SYSCTLS_AT_START
        if now.get(key) != _SYSCTLS_AT_START[key]
    ]
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    """Tear down what dead runs left; watch this one so that its own leftovers go if it dies.

    See tests/hosts/reaper.py: a supervisor outside this process waits for it to end.
    """
    if os.geteuid() != 0:
        return
    for line in reaper.sweep_dead_runs():
        print(f"[cleanup] left by a run that died: {line}")
    for line in reaper.device_changes():
        print(f"[cleanup] before this run: {line}")
    base = session.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    reaper.begin_run([str(base), _HOME_FOR_TESTS])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Check for leftovers, then remember the run's final status for a clean exit."""
    _check_leftovers(session)
    _EXIT_STATUS[:] = [int(session.exitstatus)]


def _check_leftovers(session: pytest.Session) -> None:
    """Fail the run if any test host outlived the suite."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or os.geteuid() != 0:
        return
    base = factory.getbasetemp()
    left = _leftovers(base) + reaper.device_changes() + _in_run_cgroup()
    # This machine's shared files and kernel settings: a run still going may be changing
    # them right now (make test runs two sessions side by side); the last one out checks.
    if not reaper.other_live_runs():
        left += _host_changes()
    if left:
        print("\nLeft behind after the suite (this is a bug):\n  " + "\n  ".join(left))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- the OpenSSH server -------------------------------------------------------------------


@pytest.fixture(scope="session")
def ssh_users() -> Iterator[SshUsers]:
    """The sudo-with-password and NOPASSWD test accounts."""
    need_root()
    need(Path("/usr/sbin/sshd").exists(), "openssh-server is not installed")
    users = SshUsers()
    users.create()
    try:
        yield users
    finally:
        users.remove()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory, ssh_users: SshUsers) -> Iterator[SshServer]:
    """A real sshd on 127.0.0.1 at a free port; root and the test users log in with its key."""
    server = SshServer(tmp_path_factory.mktemp("sshd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sshd_factory(tmp_path: Path, ssh_users: SshUsers) -> Iterator[list[SshServer]]:
    """Extra sshd instances for tests that change keys or configs; all stopped afterwards."""
    servers: list[SshServer] = []
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


# -- the Debian MariaDB -------------------------------------------------------------------


@pytest.fixture(scope="session")
def _debian_mariadb_session() -> Iterator[DebianMariaDB]:
    need_root()
    need(Path("/etc/init.d/mariadb").exists(), "mariadb-server (Debian package) is not installed")
    server = DebianMariaDB()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def debian_mariadb(_debian_mariadb_session: DebianMariaDB) -> Iterator[DebianMariaDB]:
    """The packaged server, running; /etc/mysql is put back byte for byte after the test."""
    with exclusive_use():
        _debian_mariadb_session.ensure_pristine()
        yield _debian_mariadb_session
        _debian_mariadb_session.ensure_pristine()


# -- Debian systems from Debian's archive, booted with systemd ----------------------------------


@pytest.fixture(scope="session")
def debian_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, DebianHost]]:
    """bullseye (MariaDB 10.5), trixie (MariaDB 11.8) and sid (MySQL 9.7), booted together.

    Built with debootstrap on first use (then cached), powered off after the session.
    """
    need_root()
    need(shutil.which("debootstrap") is not None, "debootstrap is not installed")
    need(shutil.which("unshare") is not None, "unshare (util-linux) is not installed")
    # INNOTUNE_TEST_HOSTS=trixie,sid boots only those (a run that needs fewer).
    wanted = os.environ.get("INNOTUNE_TEST_HOSTS", ",".join(SPECS)).split(",")
    hosts = {
        name: DebianHost(spec, tmp_path_factory.mktemp(f"host-{name}"))
        for name, spec in SPECS.items()
        if name in wanted
    }
    errors: list[str] = []

    def boot(host: DebianHost) -> None:
        try:
            host.boot()
        except Exception as exc:  # reported below, after every boot ended
            errors.append(f"{host.name}: {exc}")

    threads = [threading.Thread(target=boot, args=(h,)) for h in hosts.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        if errors:
            pytest.fail("test hosts did not boot:\n" + "\n".join(errors))
        print(
            "\n[test hosts] booted: "
            + ", ".join(f"{h.name} {h.boot_seconds:.1f} s" for h in hosts.values())
        )
        yield hosts
    finally:
        for host in hosts.values():
            host.poweroff()
            shutil.rmtree(host.workdir, ignore_errors=True)  # the overlay's copy-ups


SERVER_HOSTS = ("bookworm", "bullseye", "trixie", "sid")


@pytest.fixture(params=SERVER_HOSTS)
def server_host(request: pytest.FixtureRequest) -> Iterator[DebianHost | LocalDebian]:
    """Each server line for real: bookworm's MariaDB 10.11 (SysV) and the booted hosts.

    After the test every file under /etc/mysql and the datadir's option files must be
    byte-identical and the server up; otherwise they are put back and the test fails.
    """
    host: DebianHost | LocalDebian
    if request.param == "bookworm":
        request.getfixturevalue("debian_mariadb")
        host = LocalDebian(
            request.getfixturevalue("_debian_mariadb_session"), request.getfixturevalue("sshd")
        )
    else:
        host = request.getfixturevalue("debian_hosts")[request.param]
    yield host
    wrong = put_back_if_changed(host)
    if wrong:
        pytest.fail(f"{host.name}: after the test {wrong}")


# -- private servers and the loop device ----------------------------------------------------


@pytest.fixture
def private_servers(tmp_path: Path) -> Iterator[list[PrivateServer]]:
    """A list to put private servers in; every one is stopped and deleted after the test.

    Deleting matters on the shared loop filesystem: each server holds ~120 MiB.
    """
    servers: list[PrivateServer] = []
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()
            shutil.rmtree(server.base, ignore_errors=True)


@pytest.fixture
def private_server(tmp_path: Path, private_servers: list[PrivateServer]) -> PrivateServer:
    """A disposable private MariaDB, started, with its own datadir, socket, port and files."""
    server = PrivateServer(tmp_path / "server")
    private_servers.append(server)
    server.start()
    return server


@pytest.fixture(scope="session")
def loopfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopFs]:
    """An ext4 filesystem on a loop device, mounted; detached after the session."""
    need_root()
    need(Path("/dev/loop-control").exists(), "no loop device support (/dev/loop-control)")
    base = tmp_path_factory.mktemp("loop")
    # Sparse: only what the tests write takes disk space.
    fs = LoopFs(image=base / "disk.img", mountpoint=base / "mnt", size_mb=2048)
    try:
        fs.attach()
        yield fs
    finally:
        fs.detach()


@pytest.fixture
def loop_server(
    loopfs: LoopFs, private_servers: list[PrivateServer], request: pytest.FixtureRequest
) -> PrivateServer:
    """A private server whose whole base (datadir included) lives on the loop device."""
    base = loopfs.mountpoint / f"server-{request.node.name[:40]}"
    server = PrivateServer(base)
    private_servers.append(server)
    server.start()
    return server


@pytest.fixture
def own_apply_jobs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Record the ids of the apply jobs this test makes, and remove only those afterwards.

    Other test sessions may be running jobs on this machine at the same time.
    """
    from app.jobs import runner
    from app.jobs import snapshot as snap

    made: list[str] = []
    new_id = snap.new_id

    def recording() -> str:
        made.append(new_id())
        return made[-1]

    monkeypatch.setattr(snap, "new_id", recording)
    yield made
    for found in made + [f"{m}-restore" for m in made]:
        for path in (runner.job_dir(found), snap.target_dir(found)):
            shutil.rmtree(path, ignore_errors=True)


_EXIT_STATUS: list[int] = []


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without Python's teardown once the results are printed and final.

    PySide6 can abort while the interpreter collects Qt wrappers at exit (``none_dealloc``,
    ``bool_dealloc``), turning a green run into exit status 134. Everything is reported and
    cleaned up by now, so the process ends with the run's own status instead.
    """
    if not _EXIT_STATUS:
        return
    shutil.rmtree(_HOME_FOR_TESTS, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[0])
