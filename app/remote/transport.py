"""The Transport protocol and what every transport shares: sudo, quoting, atomic writes."""

from __future__ import annotations

import secrets
import shlex
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.domain.errors import CommandError, SudoError

# Cap on captured output per stream; more is cut with a notice rather than exhausting memory.
MAX_OUTPUT = 64 * 1024 * 1024

# The atomic-write recipe, run on the target as one script (under sudo when needed).
# $1 = path, $2 = mode for a new file, $3 = owner:group for a new file (or ""), $4 = the
# number of bytes that must arrive (or ""): a cut-off input, whatever cut it, is never
# renamed into place.
# The temp name starts with a dot and never ends in .cnf, so !includedir never reads it.
ATOMIC_WRITE_SCRIPT = r"""
set -eu
# fsync one file or directory: coreutils' sync takes paths (8.24+, 2015) and starts at once;
# python3 (a tenth of a second to start, more behind a version manager's shim) where not.
fsync_path() {
    sync -- "$1" 2>/dev/null && return 0
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import os,sys
fd=os.open(sys.argv[1],os.O_RDONLY); os.fsync(fd); os.close(fd)' "$1"
    else
        sync
    fi
}
target=$1
if [ -L "$target" ]; then target=$(readlink -f -- "$target"); fi
dir=$(dirname -- "$target")
base=$(basename -- "$target")
tmp=$(mktemp "$dir/.$base.innotune-XXXXXX")
trap 'rm -f -- "$tmp"' EXIT
cat > "$tmp"
if [ -n "${4:-}" ] && [ "$(wc -c < "$tmp")" -ne "$4" ]; then
    echo "innotune-write: got $(wc -c < "$tmp") of $4 bytes; $target left as it was" >&2
    exit 1
fi
if [ -e "$target" ]; then
    chown --reference="$target" -- "$tmp" 2>/dev/null || true
    chmod --reference="$target" -- "$tmp"
else
    chmod "$2" -- "$tmp"
    if [ -n "$3" ]; then chown -- "$3" "$tmp"; fi
fi
fsync_path "$tmp"
mv -f -- "$tmp" "$target"
trap - EXIT
fsync_path "$dir"
"""


@dataclass(frozen=True)
class CommandResult:
    """What a command did. ``exit_status`` is -1 when it died without one (a signal)."""

    command: str
    exit_status: int
    stdout: bytes
    stderr: bytes
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when the command exited with status 0."""
        return self.exit_status == 0

    @property
    def out(self) -> str:
        """Standard output as text (undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        """Standard error as text (undecodable bytes replaced)."""
        return self.stderr.decode("utf-8", "replace")

    def check(self) -> CommandResult:
        """Return self, or raise :class:`CommandError` naming the command and its error."""
        if not self.ok:
            reason = self.err.strip().splitlines()[-1:] or [""]
            status = "was killed" if self.exit_status < 0 else f"exited {self.exit_status}"
            raise CommandError(
                f"`{self.command}` {status}: {reason[0]}".rstrip(": "),
                exit_status=self.exit_status,
                stderr=self.err,
            )
        return self


class Transport(Protocol):
    """Runs commands and reads and writes files on one target."""

    label: str

    @property
    def is_root(self) -> bool:
        """True when commands already run as root."""
        ...

    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> CommandResult:
        """Run ``argv`` (never through a shell unless argv says so) and capture its output."""
        ...

    def read_file(self, path: str, *, sudo: bool = False) -> bytes:
        """Return the bytes of ``path``."""
        ...

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: str = "0644", owner: str = ""
    ) -> None:
        """Replace ``path`` atomically, keeping the owner and mode of the file it replaces."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class Pending(Protocol):
    """A command started with :func:`submit`; ``result`` waits for it."""

    def result(self) -> CommandResult:
        """The command's result (raising what ``Transport.run`` would raise)."""
        ...


class Finished:
    """A :class:`Pending` whose outcome is already known."""

    def __init__(self, result: CommandResult | None = None, error: Exception | None = None):
        self._result = result
        self._error = error

    def result(self) -> CommandResult:
        """The result, or the error the command raised."""
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


class InThread:
    """A :class:`Pending` worked out by ``work`` in a thread of its own, starting now."""

    def __init__(self, work: Callable[[], CommandResult], name: str = "command") -> None:
        self._work = work
        self._outcome = Finished(error=RuntimeError("not finished"))
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._outcome = Finished(self._work())
        except Exception as exc:  # noqa: BLE001 - handed to whoever asks for the result
            self._outcome = Finished(error=exc)

    def result(self) -> CommandResult:
        """Wait for the thread; its result or its error."""
        self._thread.join()
        return self._outcome.result()


def submit(
    transport: Transport, argv: Sequence[str], *, sudo: bool = False, timeout: float = 60.0
) -> Pending:
    """Start ``argv`` on ``transport`` without waiting for it.

    Commands submitted one after another travel together: over SSH they go through the
    connection's one shell in a single round trip (when the first result is asked for, or
    at :func:`flush`), and run while the caller does other work. A transport without
    ``submit`` (a test's stand-in) runs the command at once through ``run``.
    """
    start = getattr(transport, "submit", None)
    if callable(start):
        pending: Pending = start(argv, sudo=sudo, timeout=timeout)
        return pending
    try:
        return Finished(transport.run(argv, sudo=sudo, timeout=timeout))
    except Exception as exc:  # noqa: BLE001 - raised again by result()
        return Finished(error=exc)


def flush(transport: Transport) -> None:
    """Send the commands submitted so far now, rather than when a result is first asked for."""
    send = getattr(transport, "flush", None)
    if callable(send):
        send()


class SudoState:
    """How this target gets root: already root, sudo without password, or with one.

    The password lives only here, in memory, and only ever goes to sudo's standard input.
    """

    def __init__(self, is_root: bool, password: str | None = None) -> None:
        self.is_root = is_root
        self._password = password
        # Whether sudo works without a password here (None: not probed yet). With NOPASSWD,
        # -k does not make sudo ask, so a password sent anyway would reach the command.
        self.nopasswd: bool | None = None
        # A prompt no real output can contain, so it can be stripped from stderr.
        self.prompt = f"[innotune-sudo-{secrets.token_hex(8)}]"

    @property
    def has_password(self) -> bool:
        """True when a sudo password was given."""
        return self._password is not None

    def set_password(self, password: str | None) -> None:
        """Set or forget the sudo password."""
        self._password = password

    def wrap(self, argv: Sequence[str], input: bytes | None) -> tuple[list[str], bytes | None]:
        """Prefix ``argv`` with sudo as needed; the password goes first on stdin, never argv.

        ``-k`` makes sudo always ask, so the password line can never reach the command's
        own standard input through a cached timestamp.
        """
        if self.is_root:
            return list(argv), input
        if self._password is None or self.nopasswd:
            return ["sudo", "-n", "-H", "--", *argv], input
        data = self._password.encode() + b"\n" + (input or b"")
        return ["sudo", "-S", "-k", "-H", "-p", self.prompt, "--", *argv], data

    def clean(self, result: CommandResult) -> CommandResult:
        """Strip our prompt from stderr and turn sudo's refusals into :class:`SudoError`."""
        err = result.stderr.replace(self.prompt.encode(), b"")
        text = err.decode("utf-8", "replace")
        if result.exit_status != 0 and not self.is_root:
            raise_for_sudo(text, self.has_password)
        return CommandResult(result.command, result.exit_status, result.stdout, err)


def raise_for_sudo(stderr: str, had_password: bool) -> None:
    """Raise :class:`SudoError` when ``stderr`` shows sudo itself refused to run the command."""
    low = stderr.lower()
    if "a password is required" in low or "a terminal is required" in low:
        raise SudoError(
            "sudo wants a password on this host.",
            "Give the sudo password (--ask-sudo-password), or allow NOPASSWD for this user.",
            "Type the sudo password on the Connect page, or allow NOPASSWD for this user.",
        )
    if "incorrect password" in low or "sorry, try again" in low:
        raise SudoError("The sudo password was refused.", "Check the password and try again.")
    if (
        "is not in the sudoers file" in low
        or "not allowed to execute" in low
        or ("may not run sudo" in low)
    ):
        raise SudoError(
            "This user may not use sudo on the host.",
            "Log in as root, or ask the administrator to grant sudo rights to this user.",
        )
    if "sudo: command not found" in low or "sudo: not found" in low:
        raise SudoError(
            "sudo is not installed on the host and this user is not root.",
            "Log in as root, or install sudo.",
        )
    if "you must have a tty" in low:
        raise SudoError(
            "sudo on this host requires a terminal (Defaults requiretty).",
            "Remove requiretty for this user in sudoers, or log in as root.",
        )
    del had_password


def shell_line(argv: Sequence[str]) -> str:
    """Quote ``argv`` for a POSIX shell: every value that reaches a shell is quoted."""
    return shlex.join(argv)


def atomic_write_argv(path: str, mode: str, owner: str, size: int | None = None) -> list[str]:
    """The argv that writes stdin to ``path`` atomically on the target.

    With ``size``, the file is replaced only when exactly that many bytes arrived.
    """
    if not path.startswith("/"):
        raise ValueError(f"need an absolute path, got {path!r}")
    expected = "" if size is None else str(size)
    return ["sh", "-c", ATOMIC_WRITE_SCRIPT, "innotune-write", path, mode, owner, expected]
