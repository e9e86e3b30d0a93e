r"""One long-lived shell per SSH connection: many commands, one login, framed results.

Opening a channel and starting the user's login shell for every command costs a round
trip or two and the login shell's start-up each time (a ``.bashrc`` running ``pyenv init``
or ``conda`` adds 0.1-0.3 s). So the SSH transport starts one POSIX ``sh`` per connection
(:data:`BOOTSTRAP`) and sends it requests on its standard input, one line each:

    _x END SUDO TAG 'argv0' 'argv1' ...

The shell runs the command with stdin from /dev/null (so it can never eat the requests
behind it), stdout and stderr on the channel's own streams, then writes a trailer on each:
``\nEND STATUS\n`` on stdout and ``\nEND\n`` on stderr. END is a random token sent only
on stdin (shell functions and ``printf`` are builtins: it never appears in any process's
argv), so no output can fake a trailer. A tiny ``sh -c`` in front of the command prints
``\nTAG PID\n`` on stderr first, so a command past its deadline can be killed.

Requests are queued and written together when a result is first wanted (or on
:meth:`RemoteShell.flush`): commands submitted one after another cost one round trip.
Commands that need stdin, or sudo with a password, do not come here (the transport runs
them on channels of their own). The exit status is the shell's: a command killed by
signal N reports 128+N.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.domain.errors import CommandError
from app.remote.sshlib import paramiko
from app.remote.transport import MAX_OUTPUT, CommandResult, shell_line

log = logging.getLogger(__name__)

# $0 is the ready token. The first line on stdout is "READY SYSNAME UID" and on stderr
# "READY": whatever a noisy login shell printed before them is dropped.
BOOTSTRAP = r"""
LC_ALL=C; LANG=C; export LC_ALL LANG
_u=$(id -u 2>/dev/null)
printf '%s %s %s\n' "$0" "$(uname -s 2>/dev/null)" "$_u"
printf '%s\n' "$0" >&2
nl='
'
_x() {
    _e=$1 _s=$2 _t=$3
    shift 3
    set -- sh -c 'printf "\n%s %s\n" "$0" "$$" >&2; exec "$@"' "$_t" "$@"
    if [ "$_s" = 1 ] && [ "$_u" != 0 ]; then set -- sudo -n -H -- "$@"; fi
    "$@" </dev/null
    _c=$?
    printf '\n%s %s\n' "$_e" "$_c"
    printf '\n%s\n' "$_e" >&2
}
while IFS= read -r _l; do eval "$_l"; done
"""


def request_line(end: str, sudo: bool, tag: str, argv: Sequence[str]) -> bytes:
    """The one line that asks the shell to run ``argv``; newlines in values travel as $nl.

    ``shlex.quote`` puts any value holding a newline inside single quotes, so each newline
    is replaced by closing the quote, a double-quoted ``$nl``, and opening it again.
    """
    words = [shlex.quote(a).replace("\n", "'\"$nl\"'") for a in argv]
    return f"_x {end} {int(sudo)} {tag} {' '.join(words)}\n".encode()


@dataclass(eq=False)  # each request is itself: compared by identity
class Request:
    """One command for the shell, and what came back so far."""

    argv: list[str]
    sudo: bool
    timeout: float
    end: bytes = field(default_factory=lambda: f"innotune-e{secrets.token_hex(12)}".encode())
    tag: bytes = field(default_factory=lambda: f"innotune-p{secrets.token_hex(12)}".encode())
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    status: int = -1
    out_done: bool = False
    err_done: bool = False
    truncated: bool = False
    sent_at: float | None = None
    pid: str = ""
    # Set when the shell ended first: ``ran`` says whether it may have run at all.
    failure: BaseException | None = None
    ran: bool = True
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def line(self) -> bytes:
        """The request as the shell reads it."""
        return request_line(self.end.decode(), self.sudo, self.tag.decode(), self.argv)

    def result(self) -> CommandResult:
        """The finished command's result (stderr without our pid line)."""
        return CommandResult(
            shell_line(self.argv), self.status, bytes(self.out), bytes(self.err), self.truncated
        )


def _cap(buf: bytearray, chunk: bytes | bytearray, request: Request) -> None:
    room = MAX_OUTPUT - len(buf)
    if len(chunk) > room:
        request.truncated = True
        chunk = chunk[: max(0, room)]
    buf.extend(chunk)


class RemoteShell:
    """The shell on one session channel: queued requests, and two readers for its streams.

    ``on_end`` is called once when the shell's channel ends, and returns the error the
    requests still waiting should fail with.
    """

    def __init__(
        self, chan: paramiko.Channel, ready: str, on_end: Callable[[], BaseException]
    ) -> None:
        self._chan = chan
        self._ready_token = ready.encode()
        self._on_end = on_end
        self._lock = threading.Lock()
        self._queued: list[Request] = []
        self._inflight: deque[Request] = deque()
        self.ready = threading.Event()
        self.sysname = ""
        self.uid = ""
        self.ended = False
        self.flights = 0  # writes that sent requests: one round trip each
        self._out = bytearray()
        self._err = bytearray()
        self._err_ready = False
        self._readers_done = 0
        chan.settimeout(None)
        self._readers = [
            threading.Thread(target=self._read, args=(False,), name="ssh-shell-out", daemon=True),
            threading.Thread(target=self._read, args=(True,), name="ssh-shell-err", daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    # -- sending ---------------------------------------------------------------------------

    def queue(self, request: Request) -> None:
        """Add ``request`` to what the next flush sends."""
        with self._lock:
            if self.ended:
                request.failure, request.ran = CommandError("the shell ended"), False
                request.done.set()
                return
            self._queued.append(request)

    def flush(self) -> bool:
        """Send every queued request in one write; True when something was sent."""
        with self._lock:
            if not self._queued or self.ended:
                return False
            batch, self._queued = self._queued, []
            now = time.monotonic()
            for request in batch:
                request.sent_at = now
            self._inflight.extend(batch)
            self.flights += 1
            payload = b"".join(r.line for r in batch)
            try:
                self._chan.sendall(payload)
            except (OSError, EOFError, paramiko.SSHException) as exc:
                log.info("the shell's channel refused a request: %s", exc)
                # The readers see the channel end and fail what is in flight.
        return True

    def is_queued(self, request: Request) -> bool:
        """True while ``request`` waits for a flush."""
        with self._lock:
            return request in self._queued

    @property
    def idle(self) -> bool:
        """True when nothing is queued or running."""
        with self._lock:
            return not self._queued and not self._inflight

    def close(self) -> None:
        """End the shell (its stdin closes, so the loop ends); wake every waiter."""
        try:
            self._chan.close()
        except (OSError, EOFError, paramiko.SSHException):
            pass
        self._end()

    # -- receiving -------------------------------------------------------------------------

    def _read(self, stderr: bool) -> None:
        recv = self._chan.recv_stderr if stderr else self._chan.recv
        while True:
            try:
                chunk = recv(65536)
            except (OSError, EOFError, paramiko.SSHException):
                chunk = b""
            if not chunk:
                with self._lock:
                    self._readers_done += 1
                    last = self._readers_done == 2
                if last:  # both streams read to their end: what still waits never gets one
                    self._end()
                return
            with self._lock:
                if stderr:
                    self._err += chunk
                    self._parse_err()
                else:
                    self._out += chunk
                    self._parse_out()

    def _parse_out(self) -> None:
        buf = self._out
        if not self.ready.is_set():
            at = buf.find(self._ready_token + b" ")
            end = buf.find(b"\n", at) if at >= 0 else -1
            if end < 0:
                return
            words = bytes(buf[at:end]).decode("utf-8", "replace").split(" ")
            self.sysname = words[1] if len(words) > 1 else ""
            self.uid = words[2] if len(words) > 2 else ""
            del buf[: end + 1]
            self.ready.set()
        while True:
            request = next((r for r in self._inflight if not r.out_done), None)
            if request is None:
                return
            mark = b"\n" + request.end + b" "
            at = buf.find(mark)
            if at < 0:
                keep = len(mark) + 16  # a trailer may be cut between two chunks
                if len(buf) > keep:
                    _cap(request.out, buf[:-keep], request)
                    del buf[:-keep]
                return
            end = buf.find(b"\n", at + len(mark))
            if end < 0:
                return
            _cap(request.out, buf[:at], request)
            status = bytes(buf[at + len(mark) : end])
            request.status = int(status) if status.isdigit() else -1
            del buf[: end + 1]
            request.out_done = True
            self._finish(request)

    def _parse_err(self) -> None:
        buf = self._err
        if not self._err_ready:
            at = buf.find(self._ready_token + b"\n")
            if at < 0:
                return
            del buf[: at + len(self._ready_token) + 1]
            self._err_ready = True
        while True:
            request = next((r for r in self._inflight if not r.err_done), None)
            if request is None:
                return
            if not request.pid:
                tag = b"\n" + request.tag + b" "
                at = buf.find(tag)
                end = buf.find(b"\n", at + len(tag)) if at >= 0 else -1
                if end >= 0:
                    request.pid = bytes(buf[at + len(tag) : end]).decode("ascii", "replace")
                    del buf[at : end + 1]
            mark = b"\n" + request.end + b"\n"
            at = buf.find(mark)
            if at < 0:
                if request.pid:  # before the pid line arrives, keep all: it may be cut
                    keep = len(mark)
                    if len(buf) > keep:
                        _cap(request.err, buf[:-keep], request)
                        del buf[:-keep]
                return
            _cap(request.err, buf[:at], request)
            del buf[: at + len(mark)]
            request.err_done = True
            self._finish(request)

    def _finish(self, request: Request) -> None:
        if request.out_done and request.err_done:
            self._inflight.remove(request)
            request.done.set()

    def _end(self) -> None:
        with self._lock:
            if self.ended:
                return
            self.ended = True
            waiting = list(self._inflight) + self._queued
            self._inflight.clear()
            self._queued = []
        error = self._on_end() if waiting else None
        started = self.ready.is_set()
        for request in waiting:
            request.failure = error
            # Before the ready line, or never sent: the command cannot have run.
            request.ran = started and request.sent_at is not None
            request.done.set()
        self.ready.set()  # wake anyone waiting for a shell that will never be ready
