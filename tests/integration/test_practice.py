"""The practice server, for real: set up from nothing, seeded, restarted, adopted, reset, stopped.

"Nothing left" is checked the hard way: no process whose command line names the base,
no POSIX or flock lock on the data files in /proc/locks, and we can take those locks.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from app.access.database import open_session
from app.inspect.instances import choose_instance, find_instances
from app.practice.binaries import find_binaries
from app.practice.practice import PracticeBusy, PracticeServer, server_pids
from app.remote.local import LocalTransport
from tests.hosts.util import need

# Files the server holds locks on while it runs (InnoDB system tablespace, Aria control file).
LOCKED_FILES = ("ibdata1", "aria_log_control")
SEEDED = {"customers": 5000, "orders": 20000, "events": 2000, "legacy_log": 3000}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def practice(tmp_path: Path) -> Iterator[PracticeServer]:
    """A practice server object on an empty directory; stopped after the test whatever happens."""
    server = PracticeServer(tmp_path / "p")
    try:
        yield server
    finally:
        server.stop()


def processes_of(base: Path) -> list[str]:
    """Every process (but this one) whose command line mentions ``base``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if str(base) in cmd and state != "Z":
            found.append(f"{proc.name}: {cmd}")
    return found


def kernel_locks_on(datadir: Path) -> list[str]:
    """Lines of /proc/locks (MAJOR:MINOR:INODE, major/minor in hex) naming a file in datadir."""
    ids = set()
    for path in datadir.rglob("*"):
        st = path.stat()
        ids.add(f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}")
    return [ln for ln in Path("/proc/locks").read_text().splitlines() if ln.split()[5] in ids]


def can_lock(path: Path) -> bool:
    """True when this process can take both a POSIX and a flock lock on ``path``."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # releases whatever we took


def connect(socket: str) -> Any:
    return pymysql.connect(unix_socket=socket, user=getpass.getuser(), autocommit=True)


def scalar(conn: Any, sql: str) -> Any:
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def assert_nothing_left(practice: PracticeServer) -> None:
    assert not practice.status().running
    assert processes_of(practice.base) == []
    assert kernel_locks_on(practice.server.datadir) == []
    for name in LOCKED_FILES:
        assert can_lock(practice.server.datadir / name), name
    assert can_lock(practice.lock_path)  # our own start/stop lock is not held either


def test_from_nothing_seeded_restarted_and_stopped(practice: PracticeServer) -> None:
    assert not practice.status().set_up
    status = practice.start()
    assert status.running and status.seeded and not status.adopted
    assert status.socket == str(practice.base / "run" / "mysqld.sock")

    # Positive control: while it runs, the lock checks do see the server's locks.
    assert len(kernel_locks_on(practice.server.datadir)) >= len(LOCKED_FILES)
    assert not can_lock(practice.server.datadir / "ibdata1")

    conn = connect(status.socket)
    try:
        assert scalar(conn, "SELECT @@port") == status.port
        assert scalar(conn, "SELECT @@datadir").rstrip("/") == status.datadir
        for table, rows in SEEDED.items():
            count = f"SELECT COUNT(*) FROM practice.{table}"  # noqa: S608 - our table names
            assert scalar(conn, count) == rows, table
        with conn.cursor() as cur:
            cur.execute(
                "SELECT table_name, engine FROM information_schema.tables "
                "WHERE table_schema = 'practice' ORDER BY table_name"
            )
            engines = dict(cur.fetchall())
        assert engines == {
            "customers": "InnoDB",
            "events": "InnoDB",
            "legacy_log": "MyISAM",
            "orders": "InnoDB",
        }
        assert scalar(conn, "SELECT email FROM practice.customers WHERE id = 42") == (
            "customer42@example.com"
        )
        # The workload procedures write what they say and clean up after themselves.
        with conn.cursor() as cur:
            cur.execute("CALL practice.workload_autocommit(20)")
            cur.execute("CALL practice.workload_small_tx(3, 4)")
            cur.execute("CALL practice.workload_bulk(150)")
            cur.execute("CALL practice.workload_myisam(5)")
        assert scalar(conn, "SELECT COUNT(*) FROM practice.events") == 2000 + 20 + 150
        assert scalar(conn, "SELECT COUNT(*) FROM practice.orders") == 20000 + 12
        with conn.cursor() as cur:
            cur.execute("CALL practice.workload_cleanup()")
        for table, rows in SEEDED.items():
            count = f"SELECT COUNT(*) FROM practice.{table}"  # noqa: S608 - our table names
            assert scalar(conn, count) == rows, table
        with conn.cursor() as cur:
            cur.execute("INSERT INTO practice.events (kind, payload) VALUES ('seed', 'kept')")
    finally:
        conn.close()

    first_pid = status.pid
    restarted = practice.restart()
    assert restarted.running and restarted.pid != first_pid
    assert restarted.port == status.port and restarted.socket == status.socket
    conn = connect(restarted.socket)
    try:
        assert scalar(conn, "SELECT COUNT(*) FROM practice.events WHERE payload = 'kept'") == 1
    finally:
        conn.close()

    stopped = practice.stop()
    assert not stopped.running and stopped.pid is None and stopped.set_up
    assert_nothing_left(practice)


def test_reached_like_any_host_through_the_practice_target(practice: PracticeServer) -> None:
    practice.start()
    target = practice.target()
    assert target.kind == "local" and target.options.instance == str(practice.server.socket_path)
    transport = LocalTransport()
    instance = choose_instance(find_instances(transport), target.options.instance)
    assert instance.defaults_file == str(practice.server.main_cnf)
    session = open_session(transport, instance)
    try:
        assert session.query("SELECT COUNT(*) FROM practice.customers") == [("5000",)]
    finally:
        session.close()
    endpoint = practice.endpoint()
    assert endpoint.main_cnf == instance.defaults_file
    assert endpoint.port in instance.ports
    # The restart command other features run (apply with restart) really restarts it.
    before = practice.status().pid
    proc = subprocess.run(
        ["sh", "-c", endpoint.restart_command], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    after = practice.status()
    assert after.running and after.pid != before and after.adopted


def test_server_left_by_a_crashed_innotune_is_adopted(practice: PracticeServer) -> None:
    # Another InnoTune starts the server and dies without stopping it (os._exit: no cleanup).
    crash = (
        "import os, sys; from pathlib import Path;"
        "from app.practice.practice import PracticeServer;"
        "s = PracticeServer(Path(sys.argv[1])).start(); print(s.pid, flush=True); os._exit(3)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", crash, str(practice.base)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert proc.returncode == 3, proc.stderr
    orphan = int(proc.stdout.split()[-1])
    assert server_pids(practice.server.main_cnf) == [orphan]

    status = practice.start()
    assert status.running and status.adopted and status.pid == orphan
    assert server_pids(practice.server.main_cnf) == [orphan]  # no second server

    # Even without its pid file the orphan is found by its command line, and stopped.
    practice.server.pid_file.unlink()
    assert practice.status().pid == orphan
    practice.stop()
    assert_nothing_left(practice)


def test_reset_starts_from_scratch(practice: PracticeServer) -> None:
    status = practice.start()
    conn = connect(status.socket)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE practice.scratch (id INT PRIMARY KEY) ENGINE=InnoDB")
    finally:
        conn.close()
    stray = practice.base / "etc" / "conf.d" / "90-user.cnf"
    stray.write_text("[mysqld]\nmax_connections = 77\n")

    fresh = practice.reset()
    assert fresh.running and fresh.seeded and fresh.pid != status.pid
    assert not stray.exists()
    conn = connect(fresh.socket)
    try:
        assert scalar(conn, "SELECT @@max_connections") == 50
        assert scalar(conn, "SELECT COUNT(*) FROM practice.customers") == 5000
        assert (
            scalar(
                conn,
                "SELECT COUNT(*) FROM information_schema.tables "
                "WHERE table_schema = 'practice' AND table_name = 'scratch'",
            )
            == 0
        )
    finally:
        conn.close()
    practice.stop()
    assert_nothing_left(practice)


def test_lock_keeps_a_second_innotune_out(practice: PracticeServer) -> None:
    impatient = PracticeServer(practice.base, lock_timeout=0.3)
    with practice.locked():
        with pytest.raises(PracticeBusy, match=f"pid {os.getpid()}"):
            impatient.start()
    assert not practice.status().running  # nothing was started behind the lock


def test_two_processes_starting_at_once_run_one_server(tmp_path: Path) -> None:
    base = tmp_path / "p"
    argv = [sys.executable, "-m", "app", "practice", "start", "--dir", str(base)]
    procs = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        for _ in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=180) for p in procs]
        for p, (_out, err) in zip(procs, outputs, strict=True):
            assert p.returncode == 0, err
        assert sum("adopted" in out for out, _ in outputs) == 1
        assert len(server_pids(PracticeServer(base).server.main_cnf)) == 1
    finally:
        PracticeServer(base).stop()
    assert processes_of(base) == []


def test_practice_stop_says_none_is_left_only_once_its_server_is_gone(tmp_path: Path) -> None:
    """The server's main thread turns into a zombie before its last threads end, and the
    zombie stays until it is collected: "no server process of it is left" waits for both."""
    base = tmp_path / "p"
    practice = PracticeServer(base)
    try:
        pid = practice.start().pid
        assert pid is not None
        argv = [sys.executable, "-m", "app", "practice", "stop", "--dir", str(base)]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=180)
        # Looked at the moment the command has returned: no process, not even a zombie.
        left = Path(f"/proc/{pid}").exists()
        assert done.returncode == 0, done.stderr
        assert "no server process of it is left" in done.stdout
        assert not left, f"pid {pid} still there after: {done.stdout}"
    finally:
        practice.stop()
    assert processes_of(base) == []


def test_needs_only_the_two_core_packages() -> None:
    """Every program the practice server runs comes from mariadb-server-core or -client-core.

    Those are what `make run` installs (APT_RUN); mariadb-server, which would start and enable
    a system database, is not needed. mariadb-install-db calls my_print_defaults and resolveip.
    """
    need(shutil.which("dpkg-query") is not None, "not a Debian system (no dpkg-query)")
    binaries = find_binaries()
    assert binaries is not None and binaries.install_db and binaries.client
    programs = [binaries.server, binaries.install_db, binaries.client]
    programs += [str(shutil.which(name)) for name in ("my_print_defaults", "resolveip")]
    owners = {}
    for program in programs:
        out = subprocess.run(
            ["dpkg-query", "-S", os.path.realpath(program)], capture_output=True, text=True
        ).stdout
        owners[program] = out.split(":")[0]
    assert set(owners.values()) <= {"mariadb-server-core", "mariadb-client-core"}, owners
    makefile = (REPO / "Makefile").read_text()
    apt_run = makefile.split("APT_RUN :=", 1)[1].split("\n# ", 1)[0]
    assert "mariadb-server-core" in apt_run and "mariadb-client-core" in apt_run
    assert "mariadb-server " not in apt_run.replace("\\\n", " ") + " "
    # Neither package ships a service that would start a system database.
    files = subprocess.run(
        ["dpkg-query", "-L", "mariadb-server-core", "mariadb-client-core"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert not [f for f in files if f.endswith(".service") or f.startswith("/etc/init.d/")]
