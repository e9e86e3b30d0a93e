"""Commands and files on this computer."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Sequence

from app.domain.errors import CommandError, CommandTimeout
from app.domain.threads import assert_not_gui_thread
from app.remote.transport import (
    MAX_OUTPUT,
    CommandResult,
    InThread,
    Pending,
    SudoState,
    atomic_write_argv,
    shell_line,
)


class LocalTransport:
    """A Transport for this computer: subprocesses, with sudo when not root."""

    def __init__(self, sudo_password: str | None = None) -> None:
        self.label = "this computer"
        self.sudo = SudoState(os.geteuid() == 0, sudo_password)

    @property
    def is_root(self) -> bool:
        """True when this process runs as root."""
        return self.sudo.is_root

    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> CommandResult:
        """Run ``argv`` with ``LC_ALL=C`` and capture both streams."""
        assert_not_gui_thread("a command")
        if sudo:
            self._probe_nopasswd()
        full, data = self.sudo.wrap(argv, input) if sudo else (list(argv), input)
        env = dict(os.environ, LC_ALL="C", LANG="C")
        try:
            proc = subprocess.run(
                full,
                input=data if data is not None else b"",
                capture_output=True,
                timeout=timeout,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CommandTimeout(
                f"`{shell_line(argv)}` ran longer than {timeout:.0f} s and was stopped.",
                "The host may be overloaded; try again, or raise the timeout.",
            ) from None
        except FileNotFoundError as exc:
            raise CommandError(f"{argv[0]}: command not found on this computer.") from exc
        status = proc.returncode if proc.returncode >= 0 else -1
        truncated = len(proc.stdout) > MAX_OUTPUT or len(proc.stderr) > MAX_OUTPUT
        result = CommandResult(
            shell_line(argv), status, proc.stdout[:MAX_OUTPUT], proc.stderr[:MAX_OUTPUT], truncated
        )
        return self.sudo.clean(result) if sudo else result

    def submit(self, argv: Sequence[str], *, sudo: bool = False, timeout: float = 60.0) -> Pending:
        """Start ``argv`` in a thread of its own; ``result()`` waits for it."""
        assert_not_gui_thread("a command")
        return InThread(lambda: self.run(argv, sudo=sudo, timeout=timeout), "local-command")

    def _probe_nopasswd(self) -> None:
        """Find out once whether sudo needs the password, so it is never sent when it does not."""
        if self.sudo.is_root or not self.sudo.has_password or self.sudo.nopasswd is not None:
            return
        probe = subprocess.run(
            ["sudo", "-n", "true"],
            capture_output=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        self.sudo.nopasswd = probe.returncode == 0

    def read_file(self, path: str, *, sudo: bool = False) -> bytes:
        """Read ``path`` directly, or through ``cat`` under sudo."""
        if sudo and not self.is_root:
            return self.run(["cat", "--", path], sudo=True).check().stdout
        assert_not_gui_thread("a file read")
        with open(path, "rb") as fh:
            return fh.read()

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: str = "0644", owner: str = ""
    ) -> None:
        """Replace ``path`` atomically (temp file, fsync, rename, fsync of the directory)."""
        self.run(atomic_write_argv(path, mode, owner, len(data)), sudo=sudo, input=data).check()

    def open_stream(self, argv: Sequence[str], *, sudo: bool = False) -> socket.socket:
        """Run ``argv`` with a socket as its stdin/stdout (see :func:`open_local_stream`)."""
        if sudo:
            self._probe_nopasswd()
        return open_local_stream(argv, self.sudo, sudo)

    def close(self) -> None:
        """Reap relays that have ended."""
        for proc in list(_children):
            if proc.poll() is not None:
                _children.remove(proc)


def open_local_stream(argv: Sequence[str], sudo: SudoState, use_sudo: bool) -> socket.socket:
    """Start ``argv`` with its stdin/stdout joined to a socket; return our end of it.

    The database layer uses the returned socket as if it were the server's, so a relay
    (socat, python3) run under sudo logs in with root's socket identity.
    """
    assert_not_gui_thread("a relay")
    full, first = sudo.wrap(argv, None) if use_sudo else (list(argv), None)
    ours, theirs = socket.socketpair()
    env = dict(os.environ, LC_ALL="C", LANG="C")
    proc = subprocess.Popen(
        full,
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.DEVNULL,
        env=env,
        close_fds=True,
    )
    theirs.close()
    if first:
        ours.sendall(first)  # the sudo password line, read by sudo before the relay starts
    _children.append(proc)
    return ours


# Relays started here; reaped when they exit so no zombies pile up.
_children: list[subprocess.Popen[bytes]] = []
