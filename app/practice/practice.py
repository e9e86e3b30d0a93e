"""The practice server: a private MariaDB/MySQL under the user's data directory.

It is a :class:`~app.practice.server.PrivateServer` (the same code the tests' disposable
servers use) plus what a user-facing server needs: a seeded ``practice`` database with a
write workload, a lock so two InnoTune processes never start two servers on one
directory, adoption of a server an earlier (crashed) InnoTune left running, and a reset.

The rest of InnoTune reaches it as it reaches any host: the ``local`` transport plus the
instance's socket (``--instance SOCKET``); :meth:`PracticeServer.endpoint` says where the
option files are and which command restarts it.

This module does not know where the user's data directory is (that is
wiring-level: see ``app/places.py``); the caller passes the base.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app.domain.target import ConnectOptions, Target
from app.domain.threads import assert_not_gui_thread
from app.practice.binaries import INSTALL_HINT, ServerBinaries, find_binaries
from app.practice.server import PrivateServer, ServerError, free_port, pid_alive, wait_gone
from app.resources import resource_path

PRACTICE_DATABASE = "practice"
SEEDED_MARKER = "seeded"
# sun_path in struct sockaddr_un is 108 bytes, the terminating NUL included.
MAX_SOCKET_PATH = 107

BinariesFinder = Callable[[], ServerBinaries | None]
Say = Callable[[str], None]


def _quiet(_text: str) -> None:
    """The default progress reporter: says nothing."""


class NoServerBinaries(ServerError):
    """No MariaDB or MySQL server program is installed on this computer."""


class PracticeBusy(ServerError):
    """Another InnoTune process is starting, stopping or resetting this practice server."""


def resource_dir() -> Path:
    """The folder with the practice server's SQL scripts (seed.sql, workload.sql)."""
    return resource_path("practice")


def seed_sql_path() -> Path:
    """The script that creates the ``practice`` database and its workload procedures."""
    return resource_dir() / "seed.sql"


def workload_sql_path() -> Path:
    """A documented script that runs each write workload once and cleans up after."""
    return resource_dir() / "workload.sql"


@dataclass(frozen=True)
class PracticeStatus:
    """What the practice server is doing, and where it lives."""

    running: bool
    pid: int | None
    socket: str
    port: int | None
    base: str
    datadir: str
    main_cnf: str
    set_up: bool
    seeded: bool
    adopted: bool = False


@dataclass(frozen=True)
class PracticeEndpoint:
    """How other features reach and restart the practice server."""

    socket: str
    port: int
    main_cnf: str
    include_dir: str
    restart_argv: tuple[str, ...]

    @property
    def restart_command(self) -> str:
        """The restart command as one shell line (every part quoted)."""
        return shlex.join(self.restart_argv)


def innotune_argv() -> list[str]:
    """How to run this same InnoTune from a shell, whatever way it was installed."""
    if getattr(sys, "frozen", False):  # a PyInstaller bundle is its own executable
        return [sys.executable]
    return [sys.executable, "-m", "app"]


def server_pids(main_cnf: Path) -> list[int]:
    """Every live server process started with ``--defaults-file=main_cnf``, from /proc.

    This finds a server whose pid file is gone (or was never written), such as one an
    InnoTune killed mid-start left behind.
    """
    wanted = f"--defaults-file={main_cnf}"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state == "Z" or len(argv) < 2:
            continue
        program = os.path.basename(argv[0].decode(errors="replace"))
        if program in ("mariadbd", "mysqld") and wanted in (
            a.decode(errors="replace") for a in argv[1:3]
        ):
            found.append(int(entry.name))
    return sorted(found)


def _alive(pid: int) -> bool:
    """True while any thread of ``pid`` runs (see :func:`app.practice.server.pid_alive`)."""
    return pid_alive(pid)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def resolve_target(target: Target, base: Path) -> Target:
    """Turn the ``practice`` TARGET into what it is: ``local`` plus the practice socket.

    Any other target comes back unchanged, so a subcommand can call this on every target.
    The connection options given with ``practice`` are kept (the instance is replaced).
    """
    if target.kind != "practice":
        return target
    socket_path = PrivateServer(Path(base).absolute().resolve()).socket_path
    return Target(
        kind="local", options=dataclasses.replace(target.options, instance=str(socket_path))
    )


class PracticeServer:
    """The practice server under ``base`` (for example ~/.local/share/InnoTune/practice).

    Every method that starts or stops the server holds an exclusive lock first, so a second
    InnoTune process waits for the first instead of starting a second server; once the first
    is done, the second finds the server running and adopts it.
    """

    def __init__(
        self,
        base: Path,
        *,
        find: BinariesFinder = find_binaries,
        lock_timeout: float = 300.0,
    ) -> None:
        self.base = Path(base).absolute().resolve()
        self._find = find
        self._lock_timeout = lock_timeout
        self.server = PrivateServer(self.base)

    # -- where things are ---------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        """The lock file, next to the base so that a reset can delete the whole base."""
        return self.base.with_name(f".{self.base.name}.lock")

    @property
    def seeded_marker(self) -> Path:
        """Written once the practice database is loaded completely."""
        return self.base / SEEDED_MARKER

    @property
    def set_up(self) -> bool:
        """True once the option files and system tables exist."""
        return self.server.main_cnf.exists() and self.server.initialized

    def endpoint(self) -> PracticeEndpoint:
        """Socket, port, option files and the restart command (the server need not run)."""
        return PracticeEndpoint(
            socket=str(self.server.socket_path),
            port=self.server.port,
            main_cnf=str(self.server.main_cnf),
            include_dir=str(self.server.include_dir),
            restart_argv=(*innotune_argv(), "practice", "restart", "--dir", str(self.base)),
        )

    def target(self, options: ConnectOptions | None = None) -> Target:
        """The ``practice`` TARGET as every feature sees it: ``local`` plus this socket.

        Args:
            options: connection options to keep (database user, password prompt); the
                instance is always this server's socket.
        """
        opts = dataclasses.replace(
            options or ConnectOptions(), instance=str(self.server.socket_path)
        )
        return Target(kind="local", options=opts)

    # -- state ----------------------------------------------------------------------------
    def status(self) -> PracticeStatus:
        """Whether it runs, its pid and where it is; never starts anything."""
        pid, adopted = self.server.running_pid(), self.server.status().adopted
        if pid is None:
            strays = server_pids(self.server.main_cnf)
            pid, adopted = (strays[0], True) if strays else (None, False)
        return PracticeStatus(
            running=pid is not None,
            pid=pid,
            socket=str(self.server.socket_path),
            port=self.server.port if self.server.main_cnf.exists() else None,
            base=str(self.base),
            datadir=str(self.server.datadir),
            main_cnf=str(self.server.main_cnf),
            set_up=self.set_up,
            seeded=self.seeded_marker.exists(),
            adopted=adopted,
        )

    # -- the lock -------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the practice server's lock (flock: the kernel drops it if we crash)."""
        assert_not_gui_thread("starting or stopping the practice server")
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            deadline = time.monotonic() + self._lock_timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                        raise
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                    raise PracticeBusy(
                        f"Another InnoTune (pid {holder}) is starting, stopping or resetting "
                        f"the practice server in {self.base}.",
                        "Wait until it is done, then try again.",
                    )
                time.sleep(0.1)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    # -- actions --------------------------------------------------------------------------
    def start(self, timeout: float = 120.0, say: Say = _quiet) -> PracticeStatus:
        """Start the practice server (set up and seeded on first use), or adopt a running one.

        Args:
            timeout: seconds to wait for the server to take logins.
            say: called with one line per step, for a progress display.

        Raises:
            NoServerBinaries: no server program here; the message says what to install.
            PracticeBusy: another InnoTune held the lock for longer than the lock timeout.
            ServerError: the server would not set up or start; the message has the log's tail.
        """
        with self.locked():
            return self._start(timeout, say)

    def _start(self, timeout: float, say: Say) -> PracticeStatus:
        if self.status().running:
            # Ours, or left running by an InnoTune that crashed: adopt it.
            say(f"Found the practice server running (pid {self.status().pid}); using it")
            self.server.wait_ready(timeout)
        else:
            if len(os.fsencode(self.server.socket_path)) > MAX_SOCKET_PATH:
                raise ServerError(
                    f"The practice server's socket path {self.server.socket_path} is longer "
                    f"than the {MAX_SOCKET_PATH} bytes a Unix socket allows.",
                    "Use a shorter data directory (XDG_DATA_HOME) or pass a shorter --dir.",
                )
            binaries = self._binaries()
            port = self.server.port if self.server.main_cnf.exists() else None
            if port is not None and not _port_free(port):
                port = self._move_to_free_port()
            self.server = PrivateServer(self.base, port=port, binaries=binaries)
            if not self.server.initialized:
                say(f"Creating the practice server's data directory in {self.server.datadir}")
            name = {"mariadb": "MariaDB", "mysql": "MySQL"}.get(binaries.flavour, binaries.flavour)
            say(f"Starting {name} {binaries.version} on port {self.server.port}")
            self.server.start(timeout)
        if not self.seeded_marker.exists():
            say("Loading the practice database")
            self._seed()
        return self.status()

    def _binaries(self) -> ServerBinaries:
        binaries = self._find()
        if binaries is None:
            raise NoServerBinaries(INSTALL_HINT)
        return binaries

    def _move_to_free_port(self) -> int:
        """Something else took our port while we were stopped: rewrite only the port line."""
        port = free_port()
        lines = self.server.main_cnf.read_text().splitlines(keepends=True)
        for i, line in enumerate(lines):
            key, sep, _ = line.partition("=")
            if sep and key.strip() == "port":
                lines[i] = f"port = {port}\n"
        self.server.main_cnf.write_text("".join(lines))
        return port

    def _seed(self) -> None:
        script = seed_sql_path()
        # An adopted server's object has not looked for the programs yet; look with our finder.
        client = PrivateServer(self.base, binaries=self._binaries()).client_argv()
        with script.open("rb") as sql:
            proc = subprocess.run(
                client,
                stdin=sql,
                capture_output=True,
                timeout=300,
                check=False,
            )
        if proc.returncode != 0:
            raise ServerError(
                f"Loading the practice database from {script} failed: "
                f"{proc.stderr.decode(errors='replace').strip()[-600:]}",
                "The next start tries again; `innotune practice reset` starts from scratch.",
            )
        self.seeded_marker.write_text(f"{PRACTICE_DATABASE} loaded from {script.name}\n")

    def stop(self, timeout: float = 120.0) -> PracticeStatus:
        """Stop the practice server; afterwards no server process of this base is left."""
        with self.locked():
            self._stop(timeout)
            return self.status()

    def _stop(self, timeout: float) -> None:
        known = self.server.running_pid()
        self.server.stop(timeout)
        # Servers without (or with a stale) pid file: found by their command line.
        strays = server_pids(self.server.main_cnf)
        for pid in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while any(_alive(p) for p in strays) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in strays:
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        # "Stopped" means gone: not a process still ending its threads, nor its zombie.
        wait_gone([p for p in (known, *strays) if p is not None])

    def restart(self, timeout: float = 120.0, say: Say = _quiet) -> PracticeStatus:
        """Stop, then start (the way option-file changes take effect)."""
        with self.locked():
            say("Stopping the practice server")
            self._stop(timeout)
            return self._start(timeout, say)

    def reset(self, timeout: float = 120.0, say: Say = _quiet) -> PracticeStatus:
        """Stop the server, delete its whole directory, and start a fresh, seeded one."""
        with self.locked():
            say("Stopping the practice server")
            self._stop(timeout)
            if self.base.exists():
                say(f"Deleting {self.base}")
                shutil.rmtree(self.base)
            self.server = PrivateServer(self.base)
            return self._start(timeout, say)
