"""The command exchange on one SSH channel: how a command line is built, started and talked to.

The command line the login shell sees is ``sh -c '<script>'``, base64-encoded whenever it holds
characters that fish or csh would read differently from ``sh``, so the user's login shell never
changes a value. The script sets ``LC_ALL=C`` and prints a random marker before the command
proper, so anything a noisy ``.bashrc`` prints is discarded. stdout and stderr are read at the
same time (stderr in a thread, stdin written from another), so a command that fills both cannot
deadlock, and stdin is fed for as long as the command takes to read it.
"""

from __future__ import annotations

import base64
import re
import shlex
import threading
import time
from collections import deque
from collections.abc import Sequence

from app.remote.sshlib import paramiko
from app.remote.transport import MAX_OUTPUT

# Prints "<marker> <pid>" on stdout and "<marker>" on stderr, then becomes the command, so
# output before the markers (a noisy .bashrc) can be dropped and a stuck command killed.
# No backslash and no "!": the script stays readable to every login shell unencoded.
MARK_SCRIPT = 'echo "$0 $$"; echo "$0" >&2; exec "$@"'
# A channel prepared for a stream: its login shell reads one line, the command line the
# stream's command would have had, and becomes it. sh's read takes one byte at a time from
# a pipe, so nothing after that line (the stream's own data) is consumed.
LAUNCHER = 'IFS= read -r line && eval "exec $line"'
# What fish, csh and tcsh read inside single quotes exactly as sh does.
_PLAIN_SAFE = re.compile(r"[ -~]*")


def command_line(script: str) -> str:
    """The command line handed to the login shell for a POSIX ``sh`` script.

    Plain printable ASCII without backslash or ``!`` means the same inside single quotes to
    sh, bash, fish, csh and tcsh; anything else is sent base64-encoded.
    """
    if _PLAIN_SAFE.fullmatch(script) and "\\" not in script and "!" not in script:
        return "sh -c " + shlex.quote(script)
    encoded = base64.b64encode(script.encode()).decode()
    return f"sh -c 'eval \"$(echo {encoded} | base64 -d)\"'"


def start(chan: paramiko.Channel, command: str) -> None:
    """``exec_command`` without waiting for the server's "started": one round trip less.

    The server handles the request before anything sent after it, so the command's input
    may follow at once; a refusal closes the channel, which the reader of its output sees
    as a command that ended without a word.
    """
    try:
        message = paramiko.Message()
        message.add_byte(paramiko.common.cMSG_CHANNEL_REQUEST)
        message.add_int(chan.remote_chanid)
        message.add_string("exec")
        message.add_boolean(True)
        message.add_string(command)
        chan._event_pending()  # type: ignore[attr-defined]
        chan.transport._send_user_message(message)  # type: ignore[union-attr]
    except AttributeError:  # a paramiko without these internals: the plain way
        chan.exec_command(command)


def locale_script(argv: Sequence[str]) -> str:
    """A script that runs ``argv`` in the C locale, so its output parses the same everywhere."""
    return "LC_ALL=C; LANG=C; export LC_ALL LANG; exec " + shlex.join(argv)


def strip_marker(data: bytes, marker: bytes) -> tuple[bytes, bytes]:
    """Drop everything up to and including the marker line; return (rest, marker line)."""
    at = data.find(marker)
    if at < 0:
        return data, b""
    end = data.find(b"\n", at)
    if end < 0:
        return b"", data[at:]
    return data[end + 1 :], data[at:end]


class StderrTail:
    """Drains a stream channel's stderr so it never blocks stdout; keeps the last 64 KiB."""

    def __init__(self, chan: paramiko.Channel) -> None:
        self._chan = chan
        self._tail: deque[bytes] = deque()
        self._size = 0
        self._thread = threading.Thread(target=self._drain, name="ssh-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = self._chan.recv_stderr(32768)
            except TimeoutError:
                if self._chan.closed:
                    return
                continue
            except (OSError, EOFError, paramiko.SSHException):
                return
            if not chunk:
                return
            self._tail.append(chunk)
            self._size += len(chunk)
            while self._size > 65536 and len(self._tail) > 1:
                self._size -= len(self._tail.popleft())

    def text(self) -> str:
        """What the command printed on stderr lately."""
        return b"".join(self._tail).decode("utf-8", "replace")


class Expired(Exception):
    """A command ran past its deadline; ``out`` is the stdout read so far (it holds the pid)."""

    def __init__(self, out: bytes) -> None:
        super().__init__("deadline passed")
        self.out = out


def await_marker(
    chan: paramiko.Channel,
    marker: bytes,
    timeout: float,
    prompt: bytes = b"",
    password_line: bytes = b"",
) -> tuple[bool, bytes, bytes]:
    """Read stdout byte by byte until the marker line, so no byte after it is consumed.

    With ``password_line``, it is sent only once sudo shows ``prompt`` on stderr: if sudo
    never asks (NOPASSWD), the password is never sent, so it cannot end up on the
    command's own stdin. Gives up early when sudo asks a second time (a wrong password).

    Returns:
        (started, the marker line, stderr so far).

    Raises:
        Expired: no marker within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    line = bytearray()
    err = bytearray()
    pending = password_line
    while True:
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(4096)
        if prompt and (err.count(prompt) > 1 or b"try again" in err.lower()):
            return False, b"", bytes(err)
        if pending and prompt in err:
            chan.sendall(pending)
            pending = b""
        left = deadline - time.monotonic()
        if left <= 0:
            raise Expired(b"")
        chan.settimeout(min(left, 0.05 if pending else 0.2))
        try:
            byte = chan.recv(1)
        except TimeoutError:
            continue
        if not byte:
            return False, b"", bytes(err)
        if byte == b"\n":
            if line.startswith(marker):
                return True, bytes(line) + b"\n", bytes(err)
            line.clear()
        elif len(line) < 4096:
            line += byte


def failed_start(chan: paramiko.Channel, early_err: bytes) -> tuple[int, bytes]:
    """Collect what a command that never started said; close its channel."""
    status, err = -1, b""
    try:
        if chan.exit_status_ready() or chan.eof_received:
            status, _, err, _ = exchange(chan, None, 10.0, stdin_open=True)
        # else: sudo waits for another password; closing the channel ends it
    except Expired:
        pass
    finally:
        chan.close()
    return status, early_err + err


# How long one blocking channel call waits before the loop around it looks at the deadline.
# The channel's timeout is shared by the stdin, stdout and stderr threads; each of them
# treats a timeout as "nothing yet", never as an end.
_POLL = 0.5
# One paramiko packet's worth: send() takes at most this much per call anyway.
_SEND_CHUNK = 32768


def _feed_stdin(chan: paramiko.Channel, data: bytes | None, deadline: float) -> None:
    """Send ``data`` on the command's stdin, then EOF; keep trying until ``deadline``.

    The command may not read for a while (busy writing stderr, sleeping, a loaded host):
    the SSH window then stays shut and ``send`` times out. That only means "not yet", so
    retry; giving up there would leave stdin open for good and a ``cat`` waiting on it
    until the command's deadline. Stops quietly once the channel closes (the command
    ended without reading everything; its exit status says the rest).
    """
    view = memoryview(data or b"")
    sent = 0
    try:
        while sent < len(view):
            if time.monotonic() >= deadline:
                return  # the reader raises Expired; EOF must not look like the end of the data
            try:
                n = chan.send(view[sent : sent + _SEND_CHUNK].tobytes())
            except TimeoutError:
                continue  # window shut for _POLL seconds: the command is not reading yet
            if n == 0:
                return  # channel closed, or EOF already sent
            sent += n
        chan.shutdown_write()
    except (OSError, EOFError, paramiko.SSHException):
        pass  # the channel or the connection closed; the reader reports it


def exchange(
    chan: paramiko.Channel, data: bytes | None, timeout: float, *, stdin_open: bool = False
) -> tuple[int, bytes, bytes, bool]:
    """Feed stdin, read stdout and stderr concurrently, then the exit status.

    Three threads, one per stream, each blocking only on its own stream: stdout here,
    stderr and stdin in helpers. None waits on another, so a command may fill stdout,
    stderr, or neither, and read its stdin early, late or never, in any order.

    Raises:
        Expired: past ``timeout``.
    """
    deadline = time.monotonic() + timeout
    out = bytearray()
    err = bytearray()
    truncated = [False]
    chan.settimeout(_POLL)

    def read_stderr() -> None:
        while time.monotonic() < deadline:
            try:
                chunk = chan.recv_stderr(65536)
            except TimeoutError:
                continue
            except (OSError, EOFError, paramiko.SSHException):
                return
            if not chunk:
                return
            if len(err) + len(chunk) > MAX_OUTPUT:
                truncated[0] = True
                chunk = chunk[: max(0, MAX_OUTPUT - len(err))]
            err.extend(chunk)

    if not stdin_open:
        # Not joined: with input the command never read, it ends when the caller closes
        # the channel.
        threading.Thread(
            target=_feed_stdin, args=(chan, data, deadline), name="ssh-stdin", daemon=True
        ).start()
    reader = threading.Thread(target=read_stderr, name="ssh-stderr", daemon=True)
    reader.start()
    while True:
        if time.monotonic() >= deadline:
            raise Expired(bytes(out))
        try:
            chunk = chan.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        if len(out) + len(chunk) > MAX_OUTPUT:
            truncated[0] = True
            chunk = chunk[: max(0, MAX_OUTPUT - len(out))]
        out.extend(chunk)
    reader.join(max(0.0, deadline - time.monotonic()))
    if reader.is_alive() or not chan.status_event.wait(max(0.0, deadline - time.monotonic())):
        raise Expired(bytes(out))
    # -1: no exit status came (the command died from a signal); that is a failure.
    return chan.exit_status, bytes(out), bytes(err), truncated[0]
