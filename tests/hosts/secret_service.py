"""A real Secret Service for the tests: GNOME Keyring on a private D-Bus session bus.

The bus is our own dbus-daemon with a minimal configuration: no service directories, so
nothing is started by activation (no unlock prompter either: a locked keyring's unlock
prompt fails at once, as on a desktop where the person dismisses it). gnome-keyring-daemon
runs in the foreground as our child, its keyrings in a directory of the test, unlocked with
a password given on standard input, exactly as a login session's PAM module does.
Both processes are stopped and reaped when the context ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.hosts.util import need

KEYRING_PASSWORD = "innotune-test-login-keyring"  # the keyring's own password, not a test secret

_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={rundir}</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(15)


@dataclass
class SecretService:
    """A running private bus with GNOME Keyring's Secret Service on it."""

    base: Path
    rundir: Path
    address: str = ""
    bus: subprocess.Popen[bytes] | None = None
    daemon: subprocess.Popen[bytes] | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def data_dir(self) -> Path:
        """Where gnome-keyring keeps its keyring files (``keyrings/login.keyring``)."""
        return self.base / "data"

    def _env(self) -> dict[str, str]:
        return dict(
            os.environ,
            DBUS_SESSION_BUS_ADDRESS=self.address,
            XDG_RUNTIME_DIR=str(self.rundir),
            XDG_DATA_HOME=str(self.data_dir),
            HOME=str(self.base / "home"),
        )

    def start_bus(self) -> None:
        """Start the private session bus and learn its address."""
        config = self.base / "bus.conf"
        config.write_text(_BUS_CONFIG.format(rundir=self.rundir))
        self.bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.bus.stdout is not None
        self.address = self.bus.stdout.readline().decode().strip()
        assert self.address.startswith("unix:"), "dbus-daemon did not start"

    def start_keyring(self, *, unlock: bool = True) -> None:
        """Start gnome-keyring-daemon's secrets component; ``unlock``: with its password."""
        for sub in ("data", "home"):
            (self.base / sub).mkdir(exist_ok=True)
        log = self.base / f"gnome-keyring-{len(self.logs)}.log"
        self.logs.append(log)
        argv = ["gnome-keyring-daemon", "--foreground", "--components=secrets"]
        with log.open("wb") as out:
            self.daemon = subprocess.Popen(
                [*argv, "--unlock"] if unlock else argv,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self._env(),
            )
        assert self.daemon.stdin is not None
        if unlock:
            self.daemon.stdin.write(KEYRING_PASSWORD.encode())
        self.daemon.stdin.close()
        self._wait_for_service()

    def _wait_for_service(self) -> None:
        import secretstorage
        from jeepney.io.blocking import open_dbus_connection

        deadline = time.monotonic() + 60  # generous: the machine is shared and busy
        while time.monotonic() < deadline:
            assert self.daemon is not None
            if self.daemon.poll() is not None:
                raise AssertionError(f"gnome-keyring-daemon exited: {self.logs[-1].read_text()}")
            with closing(open_dbus_connection(self.address)) as conn:
                if secretstorage.check_service_availability(conn):
                    return
            time.sleep(0.05)  # polling for readiness, bounded by the deadline
        raise AssertionError("gnome-keyring-daemon never offered the Secret Service")

    def stop_keyring(self) -> None:
        """Stop the keyring daemon (its keyring files stay, locked, on disk)."""
        _stop(self.daemon)
        self.daemon = None

    def stop(self) -> None:
        """Stop the daemon, then the bus."""
        self.stop_keyring()
        _stop(self.bus)
        if self.bus is not None and self.bus.stdout is not None:
            self.bus.stdout.close()
        self.bus = None


@contextmanager
def secret_service(base: Path) -> Iterator[SecretService]:
    """A private bus and an unlocked GNOME Keyring, stopped when the block ends."""
    need(
        shutil.which("dbus-daemon") is not None
        and shutil.which("gnome-keyring-daemon") is not None,
        "needs dbus-daemon and gnome-keyring-daemon (apt-get install dbus gnome-keyring)",
    )
    # A short directory for the bus socket: a unix socket path is limited to 108 bytes.
    rundir = Path(tempfile.mkdtemp(prefix="innotune-bus-"))
    base.mkdir(parents=True, exist_ok=True)
    service = SecretService(base=base, rundir=rundir)
    try:
        service.start_bus()
        service.start_keyring()
        yield service
    finally:
        service.stop()
        shutil.rmtree(rundir, ignore_errors=True)
