"""A private MariaDB/MySQL server: own datadir, socket, port and option-file layout.

The practice server and the tests' disposable instances are both this class.
Its layout mirrors a distribution's: a main option file that includes a directory.

    BASE/etc/my.cnf            main file, ends with !includedir BASE/etc/conf.d
    BASE/etc/conf.d/*.cnf      drop-ins (50-server.cnf is the seeded one)
    BASE/data                  datadir
    BASE/run/mysqld.sock, .pid socket and pid file
    BASE/log/error.log         error log
    BASE/tmp                   tmpdir
"""

from __future__ import annotations

import os
import pwd
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from app.domain.errors import InnoTuneError
from app.practice.binaries import INSTALL_HINT, ServerBinaries, find_binaries

#: Seconds between checks while a server starts or stops: the Restart exercise reports both
#: phases, and a coarser check would add up to its own length to each.
POLL = 0.02

SERVER_CNF = """\
# Settings of a fresh install, as a distribution ships them; InnoTune tunes from here.
[mysqld]
bind-address = 127.0.0.1
skip-name-resolve
character-set-server = utf8mb4
performance_schema = OFF
innodb_buffer_pool_size = 128M
max_connections = 50
"""


class ServerError(InnoTuneError):
    """The private server could not be set up, started or stopped."""


@dataclass(frozen=True)
class ServerStatus:
    """Whether the server runs, and where to reach it."""

    running: bool
    pid: int | None
    socket: str
    port: int
    datadir: str
    adopted: bool = False


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid_alive(pid: int) -> bool:
    """True while any thread of process ``pid`` still runs.

    A zombie still answers kill(0) but is not running. Its main thread, though, turns
    into a zombie before the other threads have ended: the server still runs then (it
    ends its last threads, for a second or two), so every thread is looked at.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X"):
                    return True
        except OSError:
            continue  # that thread has just ended
    return False


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Wait until no process of ``pids`` is left at all, not even as a zombie.

    An exited server is a zombie until the process that adopted it collects it, which
    can take a moment; ``ps`` and ``pgrep`` still list it meanwhile. Returns the pids
    still there after ``timeout`` (each has exited; only its entry is left).
    """
    deadline = time.monotonic() + timeout
    left = [p for p in pids if os.path.exists(f"/proc/{p}")]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if os.path.exists(f"/proc/{p}")]
    return left


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [p.decode(errors="replace") for p in fh.read().split(b"\0") if p]
    except OSError:
        return []


def _os_user() -> str:
    """The name of the OS account we run as (the socket login's database user)."""
    return pwd.getpwuid(os.geteuid()).pw_name


def _server_user(base: Path) -> str | None:
    """Which --user to give mariadbd: None unless we are root (it refuses root otherwise).

    As root, run as the ``mysql`` account when it can reach BASE (every parent
    directory searchable by others); else as root, which mariadbd accepts when asked.
    """
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
    except KeyError:
        return "root"
    for parent in [base, *base.parents]:
        if parent.exists() and not os.stat(parent).st_mode & 0o001:
            return "root"
    return "mysql"


class PrivateServer:
    """One private server instance under ``base``."""

    def __init__(
        self,
        base: Path,
        port: int | None = None,
        binaries: ServerBinaries | None = None,
        server_cnf: str = SERVER_CNF,
    ) -> None:
        self.base = Path(base).resolve()
        self._port = port
        self._binaries = binaries
        self._server_cnf = server_cnf
        self._started_pid: int | None = None  # the server this object started, if any

    # -- layout ---------------------------------------------------------------------------
    @property
    def main_cnf(self) -> Path:
        """The main option file (the server's --defaults-file)."""
        return self.base / "etc" / "my.cnf"

    @property
    def include_dir(self) -> Path:
        """The include directory the main file reads last."""
        return self.base / "etc" / "conf.d"

    @property
    def datadir(self) -> Path:
        """The data directory."""
        return self.base / "data"

    @property
    def socket_path(self) -> Path:
        """The Unix socket."""
        return self.base / "run" / "mysqld.sock"

    @property
    def pid_file(self) -> Path:
        """The pid file the server writes."""
        return self.base / "run" / "mysqld.pid"

    @property
    def error_log(self) -> Path:
        """The server's error log."""
        return self.base / "log" / "error.log"

    @property
    def port(self) -> int:
        """The TCP port, read from the main file once it exists."""
        if self._port is None:
            if self.main_cnf.exists():
                for line in self.main_cnf.read_text().splitlines():
                    key, _, value = line.partition("=")
                    if key.strip() == "port":
                        self._port = int(value.strip())
                        break
            if self._port is None:
                self._port = free_port()
        return self._port

    @property
    def binaries(self) -> ServerBinaries:
        """The server programs, found on first use."""
        if self._binaries is None:
            self._binaries = find_binaries()
            if self._binaries is None:
                raise ServerError(INSTALL_HINT)
        return self._binaries

    @property
    def initialized(self) -> bool:
        """True once the datadir holds system tables."""
        return (self.datadir / "mysql").is_dir()

    def server_argv(self) -> list[str]:
        """The command line that starts the server (defaults file first, as it must be)."""
        argv = [self.binaries.server, f"--defaults-file={self.main_cnf}"]
        user = _server_user(self.base)
        if user:
            argv.append(f"--user={user}")
        return argv

    def client_argv(self) -> list[str]:
        """A client command line that logs in over the socket as the current OS user."""
        client = self.binaries.client
        if client is None:
            raise ServerError("No mariadb/mysql client program found.", INSTALL_HINT)
        # The install script gave this OS account a socket-authenticated database account.
        return [client, f"--defaults-file={self.main_cnf}", f"--user={_os_user()}", "--batch"]

    # -- set-up -----------------------------------------------------------------------------
    def write_layout(self) -> None:
        """Create the directories and option files (kept if they exist)."""
        for sub in ("etc/conf.d", "data", "run", "log", "tmp"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        if not self.main_cnf.exists():
            self.main_cnf.write_text(
                "# InnoTune private server: main option file (like /etc/mysql/my.cnf).\n"
                "[client-server]\n"
                f"socket = {self.socket_path}\n"
                f"port = {self.port}\n\n"
                "[mysqld]\n"
                f"datadir = {self.datadir}\n"
                f"pid-file = {self.pid_file}\n"
                f"log-error = {self.error_log}\n"
                f"tmpdir = {self.base / 'tmp'}\n\n"
                f"!includedir {self.include_dir}\n"
            )
        server = self.include_dir / "50-server.cnf"
        if not server.exists():
            server.write_text(self._server_cnf)
        user = _server_user(self.base)
        if user == "mysql":
            owner = pwd.getpwnam("mysql")
            for sub in ("data", "run", "log", "tmp"):
                for root, dirs, files in os.walk(self.base / sub):
                    for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                        os.chown(name, owner.pw_uid, owner.pw_gid)

    def initialize(self) -> None:
        """Create the system tables in an empty datadir."""
        self.write_layout()
        if self.initialized:
            return
        bins = self.binaries
        if bins.install_db:
            argv = [
                bins.install_db,
                f"--defaults-file={self.main_cnf}",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
            ]
            user = _server_user(self.base)
            if user:
                argv.append(f"--user={user}")
            else:
                # Not root: name our account, as $USER may be unset (cron, services).
                argv.append(f"--auth-root-socket-user={_os_user()}")
        else:
            argv = [*self.server_argv(), "--initialize-insecure"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0 or not self.initialized:
            raise ServerError(
                f"Creating the server's data directory in {self.datadir} failed: "
                f"{(proc.stderr or proc.stdout).strip()[-600:]}",
                f"See {self.error_log}; `innotune practice reset` starts from scratch.",
            )

    # -- running ----------------------------------------------------------------------------
    def _pid_from_file(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def running_pid(self) -> int | None:
        """The pid of this instance's server if one runs (ours or left by a crash)."""
        if self._started_pid is not None and pid_alive(self._started_pid):
            return self._started_pid
        pid = self._pid_from_file()
        if pid and pid_alive(pid) and f"--defaults-file={self.main_cnf}" in _cmdline(pid):
            return pid
        return None

    def status(self) -> ServerStatus:
        """Where the server is and whether it runs."""
        pid = self.running_pid()
        adopted = pid is not None and pid != self._started_pid
        return ServerStatus(
            running=pid is not None,
            pid=pid,
            socket=str(self.socket_path),
            port=self.port,
            datadir=str(self.datadir),
            adopted=adopted,
        )

    def start(self, timeout: float = 120.0) -> ServerStatus:
        """Start the server (or adopt one already running) and wait until it takes logins."""
        if self.running_pid() is not None:
            self.wait_ready(timeout)
            return self.status()
        self.initialize()
        # Daemonized like mysqld_safe does it: in its own session and not our child, so an
        # InnoTune crash or Ctrl-C does not take it down and nothing is left to reap.
        spawn = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
        proc = subprocess.run(
            ["sh", "-c", spawn, "sh", str(self.base / "log" / "console.log"), *self.server_argv()],
            capture_output=True,
            text=True,
            timeout=30,
            start_new_session=True,
            check=False,
        )
        if proc.returncode != 0 or not proc.stdout.strip().isdigit():
            raise ServerError(f"Could not start the server: {proc.stderr.strip()}")
        self._started_pid = int(proc.stdout.strip())
        self.wait_ready(timeout)
        return self.status()

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait until the socket answers with a server greeting, or raise with the log's tail."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._started_pid is not None and not pid_alive(self._started_pid):
                replacement = self._pid_from_file()
                if replacement and replacement != self._started_pid and pid_alive(replacement):
                    # Someone else restarted it since (an apply, an exercise): follow them.
                    self._started_pid = None
                else:
                    raise ServerError("The server stopped while starting.", self.log_tail_hint())
            if self._greets():
                return
            time.sleep(POLL)
        raise ServerError(
            f"The server did not accept connections in {timeout:.0f} s.", self.log_tail_hint()
        )

    def _greets(self) -> bool:
        if not self.socket_path.exists():
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect(str(self.socket_path))
                greeting = sock.recv(512)
        except OSError:
            return False
        # A handshake packet: 3-byte length, sequence 0, protocol version 10.
        return len(greeting) > 5 and greeting[3] == 0 and greeting[4] == 10

    def log_tail_hint(self, lines: int = 8) -> str:
        """The last lines of the error log, for an error message."""
        try:
            tail = self.error_log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return f"No error log at {self.error_log}."
        return "Last lines of the error log:\n" + "\n".join(tail)

    def stop(self, timeout: float = 120.0) -> None:
        """Stop the server cleanly (SIGTERM, then wait); SIGKILL only if it never stops."""
        pid = self.running_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                break
            time.sleep(POLL)
        else:
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)

    def kill(self) -> None:
        """Kill the server at once with SIGKILL, as a crash would."""
        pid = self.running_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            while pid_alive(pid):
                time.sleep(0.05)

    def restart(self, timeout: float = 120.0) -> ServerStatus:
        """Stop, then start."""
        self.stop(timeout)
        return self.start(timeout)

    def query(self, sql: str, timeout: float = 60.0) -> str:
        """Run SQL through the client program as root over the socket; return its output."""
        proc = subprocess.run(
            [*self.client_argv(), "-e", sql],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise ServerError(f"Query failed on the private server: {proc.stderr.strip()}")
        return proc.stdout
