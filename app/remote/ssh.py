"""The SSH transport: commands, files, sudo and byte streams on a host, over paramiko.

The Transport is here; connecting (sockets, jump hosts, the handshake, the host key) is
:mod:`app.remote.sshconnect`'s, where to connect comes from :mod:`app.remote.sshconfig`,
the login from :mod:`app.remote.sshauth`, how one command travels on a channel from
:mod:`app.remote.sshexchange`, and connection errors and liveness from :mod:`app.remote.sshlink`.

Commands given to :meth:`SshTransport.submit` go through the connection's one long-lived
shell (:mod:`app.remote.shell`): those submitted together share one round trip, and no login
shell starts for each. Every command given to ``run`` (and every stream) runs on its own
session channel, which is always closed. A sudo password only ever travels on the channel's
stdin. A keepalive that wants a reply notices a peer that stopped answering, so a dead link
fails a command within seconds.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import shlex
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from app.domain.errors import (
    CommandError,
    CommandTimeout,
    ConnectError,
    InnoTuneError,
    TargetError,
)
from app.domain.target import Target
from app.domain.threads import assert_not_gui_thread
from app.domain.words import sentence
from app.remote.hostkeys import HostKeyStore
from app.remote.shell import BOOTSTRAP, RemoteShell, Request
from app.remote.sshauth import PromptAnswerer
from app.remote.sshconfig import resolve_host
from app.remote.sshconnect import CONNECT_TIMEOUT, SshChain
from app.remote.sshexchange import (
    LAUNCHER,
    MARK_SCRIPT,
    Expired,
    StderrTail,
    await_marker,
    command_line,
    exchange,
    failed_start,
    locale_script,
    start,
    strip_marker,
)
from app.remote.sshlib import paramiko
from app.remote.sshlink import Liveness, channel_error
from app.remote.transport import (
    CommandResult,
    InThread,
    Pending,
    SudoState,
    atomic_write_argv,
    shell_line,
)

__all__ = ["PromptAnswerer", "SshTransport", "check_linux", "resolve_host"]

log = logging.getLogger(__name__)

# paramiko's DEBUG output has carried secrets before (paramiko#957); keep it quiet unless
# someone configured it on purpose.
if logging.getLogger("paramiko").level == logging.NOTSET:
    logging.getLogger("paramiko").setLevel(logging.WARNING)

# Liveness: a keepalive that wants a reply every KEEPALIVE_INTERVAL seconds; no reply within
# KEEPALIVE_TIMEOUT means the peer is gone (OpenSSH's ServerAliveInterval/CountMax idea).
KEEPALIVE_INTERVAL = 10.0
KEEPALIVE_TIMEOUT = 20.0
# A session channel the server refused is asked for again, up to this many times (about
# 20 s of waits growing to 0.5 s, a random part each so that threads waiting together spread).
SESSION_RETRIES = 45


class SshTransport:
    """A Transport for a host reached over SSH (paramiko).

    Connecting checks the host key against every known-hosts source before any credential
    is sent, authenticates (one picked identity, or the agent and default keys, or a
    password, or keyboard-interactive questions answered by ``prompt``), and starts the
    connection's shell, whose first words say whether the host runs Linux and as whom we
    are logged in: nothing waits for them until they are needed (``is_root``, ``sudo``, a
    command), so they share the first round trip, and a host that is not Linux is refused
    there with a :class:`ConnectError`. A keepalive that wants a reply notices a dead peer within
    ``keepalive_interval + keepalive_timeout`` seconds; commands then fail with a
    :class:`ConnectError` saying so instead of waiting for their deadline.
    """

    def __init__(
        self,
        target: Target,
        *,
        sudo_password: str | None = None,
        login_password: str | None = None,
        key_passphrase: str | None = None,
        accept_fingerprint: str | None = None,
        own_known_hosts: str | Path | None = None,
        ssh_config: Path | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        prompt: PromptAnswerer | None = None,
        keepalive_interval: float = KEEPALIVE_INTERVAL,
        keepalive_timeout: float = KEEPALIVE_TIMEOUT,
    ) -> None:
        assert_not_gui_thread("an SSH connection")
        if target.kind != "ssh":
            raise TargetError(f"{target.label} is not an SSH target.", "Use [user@]host[:port].")
        opts = target.options
        self.label = target.label
        self.connect_timeout = connect_timeout
        self.store = HostKeyStore(
            own_file=Path(own_known_hosts).expanduser() if own_known_hosts else None,
            extra_file=Path(opts.known_hosts).expanduser() if opts.known_hosts else None,
        )
        self.host = resolve_host(target.host, target.port, target.user, ssh_config)
        self._chain = SshChain(
            self.store,
            accept=accept_fingerprint or opts.accept_host_key,
            identity=os.path.expanduser(opts.identity) if opts.identity else None,
            ssh_config=ssh_config,
            connect_timeout=connect_timeout,
            prompt=prompt,
        )
        self._streams: dict[int, StderrTail] = {}
        self._liveness: Liveness | None = None
        self._sudo_password = sudo_password
        self._sudo: SudoState | None = None
        self._sudo_lock = threading.Lock()
        self._shell: RemoteShell | None = None
        self._spare: paramiko.Channel | None = None  # see prepare_stream
        # Command round trips after login: each flight of requests to the shell, each
        # command or stream on a channel of its own (see :attr:`round_trips`).
        self._channel_trips = 0
        self._ready_trips = 0
        try:
            self._t = self._chain.connect(self.host, login_password, key_passphrase)
            self._liveness = Liveness(self._t, keepalive_interval, keepalive_timeout)
            # The shell starts now and says whether this is Linux and who we are; nothing
            # waits for that until it is needed, so it shares the first round trip.
            self._shell = self._start_shell()
        except BaseException:
            self.close()
            raise

    @property
    def host_key_status(self) -> str:
        """``known`` (on record) or ``accepted`` (its fingerprint was given and is now kept)."""
        return self._chain.host_key_status

    def _start_shell(self) -> RemoteShell | None:
        """Open the connection's long-lived shell; None when the host will not give one."""
        try:
            chan = self._session()
        except CommandError as exc:
            log.info("no long-lived shell on %s: %s", self.label, exc.problem)
            return None
        ready = f"innotune-r{secrets.token_hex(12)}"
        try:
            chan.set_combine_stderr(False)
            start(chan, command_line("exec " + shlex.join(["sh", "-c", BOOTSTRAP, ready])))
        except (paramiko.SSHException, EOFError, OSError) as exc:
            chan.close()
            raise self._lost("", exc) from None
        return RemoteShell(chan, ready, self._shell_ended)

    def _shell_ended(self) -> BaseException:
        if not self._t.is_active():
            return self._lost("")
        return CommandError(
            f"The shell InnoTune keeps on {self.label} ended unexpectedly.",
            "Connect again; check what an interrupted command changed before retrying it.",
        )

    @property
    def round_trips(self) -> int:
        """Command round trips since login.

        The shell's flights, every command or stream on a channel of its own, and a wait
        for the shell's first words when nothing else travelled with it.
        """
        flights = self._shell.flights if self._shell is not None else 0
        return flights + self._channel_trips + self._ready_trips

    @property
    def sudo(self) -> SudoState:
        """How this login gets root (known once the host has said who we are)."""
        with self._sudo_lock:
            if self._sudo is None:
                self._sudo = SudoState(self._check_host(), self._sudo_password)
            return self._sudo

    def _check_host(self) -> bool:
        shell = self._shell
        if shell is not None:
            if not shell.ready.is_set() and shell.flights == 0:
                self._ready_trips += 1  # nothing else travels with this wait
            shell.ready.wait(self.connect_timeout + 15)
            if shell.ready.is_set() and not shell.ended and shell.uid:
                check_linux(self.label, shell.sysname)
                return shell.uid == "0"
            if not self._t.is_active():
                raise self._lost("")
            # A login shell that ran no POSIX sh: the plain check below names the trouble.
            self._retire_shell()
        result = self.run(["sh", "-c", "uname -s; id -u"], timeout=self.connect_timeout)
        lines = result.out.split()
        if not result.ok or len(lines) < 2:
            raise ConnectError(
                sentence(
                    f"{self.label} did not run a simple command (uname -s; id -u): "
                    f"{result.err.strip() or 'no output'}"
                ),
                "InnoTune works on Linux hosts only, with a POSIX sh; check the account's shell.",
            )
        check_linux(self.label, lines[0])
        return lines[1] == "0"

    # -- the Transport protocol -----------------------------------------------------------

    @property
    def is_root(self) -> bool:
        """True when the login user is root."""
        return self.sudo.is_root

    def _retire_shell(self) -> None:
        shell, self._shell = self._shell, None
        if shell is not None:
            self._channel_trips += shell.flights  # they happened; keep them counted
            shell.close()

    def _session(self, refusals: int = 0) -> paramiko.Channel:
        try:
            return self._t.open_session(timeout=self.connect_timeout)
        except paramiko.ChannelException as exc:
            why = exc.text
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if not self._t.is_active() or str(exc) != "Unable to open channel.":
                raise self._lost("", exc) from None
            # The connection is up: the server refused the channel, and another thread's
            # wait took paramiko's record of why (two refusals at once).
            why = "refused"
        spare, self._spare = self._spare, None
        if spare is not None:  # a server allowing few sessions: the prepared one goes
            spare.close()
            return self._session(refusals)
        shell = self._shell
        if shell is not None and shell.idle:
            # A server allowing very few sessions (MaxSessions): give the shell's up.
            log.info("%s refused a session; closing the idle shell to free one", self.label)
            self._retire_shell()
            return self._session(refusals)
        if refusals < SESSION_RETRIES:
            # Our own channels (other threads', or just closed and not yet ended by the
            # server) count against MaxSessions; on a busy host they take a moment to go.
            time.sleep(min(0.5, 0.05 * 2**refusals) * (0.5 + random.random()))  # noqa: S311
            return self._session(refusals + 1)
        raise CommandError(
            sentence(f"{self.label} refused a new session channel: {why}"),
            "The server may limit sessions (MaxSessions); try again.",
        ) from None

    def _lost(self, during: str, exc: BaseException | None = None) -> ConnectError:
        """The error for a connection that is gone, with the reason when it is known."""
        cause = self._liveness.cause if self._liveness is not None else ""
        if cause:
            return ConnectError(
                f"The SSH connection to {self.label} was lost{during}: {cause}.",
                "Check the network (VPN, firewall, cable or Wi-Fi) and that the host is up "
                "and not frozen, then connect again; check what an interrupted command "
                "changed before retrying it.",
            )
        reason = str(exc) if exc is not None and str(exc) else "the connection closed"
        return ConnectError(
            f"The SSH connection to {self.label} was lost{during} ({reason}).",
            "Connect again; check what an interrupted command changed before retrying it.",
        )

    def _raise_if_lost(self, argv: Sequence[str]) -> None:
        if not self._t.is_active():
            raise self._lost(f" during `{shell_line(argv)}`")

    def _prepare(
        self, argv: Sequence[str], sudo: bool, input: bytes | None
    ) -> tuple[str, bytes, bytes | None]:
        marker = f"innotune-{secrets.token_hex(12)}"
        inner = ["sh", "-c", MARK_SCRIPT, marker, *argv]
        full, data = self.sudo.wrap(inner, input) if sudo else (inner, input)
        return command_line(locale_script(full)), marker.encode(), data

    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> CommandResult:
        """Run ``argv`` on the host; stdout and stderr are read concurrently.

        Raises:
            CommandTimeout: the command ran past ``timeout``; it is killed (best effort).
            SudoError: sudo refused (see :meth:`SudoState.clean`).
        """
        assert_not_gui_thread("a command")
        line, marker, data = self._prepare(argv, sudo, input)
        # With a sudo password, the password line goes only when sudo prompts for it, and the
        # input only once sudo has started the command: a wrong password cannot make sudo read
        # the input as further attempts, and a sudo that does not ask (NOPASSWD) never gets
        # the password, so it cannot reach the command's stdin.
        password_line = (data or b"")[: len(data or b"") - len(input or b"")]
        deadline = time.monotonic() + timeout
        head, early_err = b"", b""
        chan = self._session()
        self._channel_trips += 1
        try:
            chan.set_combine_stderr(False)
            start(chan, line)
            if password_line:
                started, head, early_err = await_marker(
                    chan, marker + b" ", timeout, self.sudo.prompt.encode(), password_line
                )
                if not started:
                    status, err = failed_start(chan, early_err)
                    if status == -1:
                        self._raise_if_lost(argv)
                    failed = CommandResult(
                        shell_line(argv), status, b"", strip_marker(err, marker)[0]
                    )
                    return self.sudo.clean(failed)
                data = input
            left = max(0.1, deadline - time.monotonic())
            status, out, err, truncated = exchange(chan, data, left)
            if status == -1:  # no exit status: a signal, or the connection is gone
                self._raise_if_lost(argv)
            out, err = head + out, early_err + err
        except Expired as exc:
            # Kill first, close after: closing sends EOF, and a command still reading its
            # stdin (the atomic-write script's cat) would take a cut-off input as whole.
            self._kill_marked(head + exc.out, marker, sudo)
            chan.close()
            self._raise_if_lost(argv)
            raise CommandTimeout(
                f"`{shell_line(argv)}` on {self.label} ran longer than {timeout:.0f} s "
                "and was stopped.",
                "The host may be overloaded; try again, or raise the timeout.",
                exit_status=-1,
            ) from None
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise self._lost(f" during `{shell_line(argv)}`", exc) from None
        finally:
            chan.close()
        out, _ = strip_marker(out, marker + b" ")
        err, _ = strip_marker(err, marker)
        result = CommandResult(shell_line(argv), status, out, err, truncated)
        return self.sudo.clean(result) if sudo else result

    def _kill_marked(self, out: bytes, marker: bytes, sudo: bool) -> None:
        _, mark = strip_marker(out, marker + b" ")
        pid = mark.split()[-1].decode() if mark else ""
        if not pid.isdigit():
            return
        try:
            self.run(["kill", "-KILL", pid], sudo=sudo, timeout=10)
        except InnoTuneError as exc:
            log.warning("could not stop timed-out process %s on %s: %s", pid, self.label, exc)

    def submit(self, argv: Sequence[str], *, sudo: bool = False, timeout: float = 60.0) -> Pending:
        """Start ``argv`` through the connection's shell; see :mod:`app.remote.shell`.

        Nothing is sent until a result is wanted or :meth:`flush` is called, so commands
        submitted together share one round trip. sudo with a password goes on a channel of
        its own (the password travels on stdin, which shell requests never get).
        """
        assert_not_gui_thread("a command")
        shell = self._shell
        with_password = sudo and (
            self._sudo.has_password and not self._sudo.nopasswd and not self._sudo.is_root
            if self._sudo is not None
            else self._sudo_password is not None
        )
        if shell is None or shell.ended or with_password:
            return InThread(lambda: self.run(argv, sudo=sudo, timeout=timeout), "ssh-command")
        request = Request(list(argv), sudo, timeout)
        shell.queue(request)
        return _ShellPending(self, shell, request)

    def flush(self) -> None:
        """Send the submitted commands now (one round trip for all of them)."""
        shell = self._shell
        if shell is not None:
            shell.flush()

    def _kill(self, pid: str, sudo: bool) -> None:
        if not pid.isdigit():
            return
        try:
            self.run(["kill", "-KILL", pid], sudo=sudo, timeout=10)
        except InnoTuneError as exc:
            log.warning("could not stop timed-out process %s on %s: %s", pid, self.label, exc)

    def read_file(self, path: str, *, sudo: bool = False) -> bytes:
        """Return the bytes of ``path`` on the host (``cat``, under sudo when asked)."""
        return self.run(["cat", "--", path], sudo=sudo and not self.is_root).check().stdout

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: str = "0644", owner: str = ""
    ) -> None:
        """Replace ``path`` atomically on the host (see ``ATOMIC_WRITE_SCRIPT``)."""
        argv = atomic_write_argv(path, mode, owner, len(data))
        self.run(argv, sudo=sudo and not self.is_root, input=data, timeout=300).check()

    def open_stream(
        self, argv: Sequence[str], *, sudo: bool = False, timeout: float = 30.0
    ) -> paramiko.Channel:
        """Start ``argv`` and return its channel as a socket-like byte stream.

        Bytes sent go to the command's stdin and its stdout is what ``recv`` returns; PyMySQL
        can use the channel as ``sock`` (with ``ssl_disabled=True``). stderr is drained in
        the background (see :meth:`stream_stderr`). Returns only once the command runs, so
        a sudo refusal is raised here, not later as a broken stream.

        Raises:
            SudoError, CommandError, CommandTimeout: the command did not start.
        """
        assert_not_gui_thread("a stream")
        line, marker, data = self._prepare(argv, sudo and not self.is_root, None)
        spare, self._spare = self._spare, None
        chan = spare if spare is not None and spare.active else self._session()
        self._channel_trips += 1
        try:
            if chan is spare:
                # Its login shell started earlier and waits for one line: the command line.
                chan.sendall(line.encode() + b"\n")
            else:
                chan.set_combine_stderr(False)
                start(chan, line)
            prompt = self.sudo.prompt.encode() if data else b""
            # data is the sudo password line alone (no input): sent only when sudo asks.
            started, _, early_err = await_marker(chan, marker + b" ", timeout, prompt, data or b"")
        except Expired:
            chan.close()
            self._raise_if_lost(argv)
            raise CommandTimeout(
                f"`{shell_line(argv)}` on {self.label} did not start within {timeout:.0f} s.",
                "The host may be overloaded; try again.",
            ) from None
        except BaseException:
            chan.close()
            raise
        if not started:
            status, err = failed_start(chan, early_err)
            if status == -1:
                self._raise_if_lost(argv)
            err, _ = strip_marker(err, marker)
            result = CommandResult(shell_line(argv), status, b"", err)
            if sudo and not self.is_root:
                self.sudo.clean(result)
            result.check()
            raise CommandError(f"`{shell_line(argv)}` on {self.label} ended at once.")
        chan.settimeout(None)
        self._streams[chan.get_id()] = StderrTail(chan)
        return chan

    def prepare_stream(self) -> None:
        """Open the channel of the next :meth:`open_stream` now.

        Its login shell (with whatever a ``.bashrc`` runs: pyenv, conda, nvm...) then starts
        while other work goes on, and waits for one line, the command to become; the stream
        itself starts later without that wait. Unused, it is closed with the connection.
        """
        assert_not_gui_thread("a stream")
        if self._spare is not None:
            return
        try:
            chan = self._session()
            chan.set_combine_stderr(False)
            start(chan, command_line(LAUNCHER))
        except InnoTuneError as exc:
            log.info("no channel prepared for a stream on %s: %s", self.label, exc.problem)
            return
        self._spare = chan

    def stream_stderr(self, chan: paramiko.Channel) -> str:
        """The recent stderr of a channel from :meth:`open_stream` (for error messages)."""
        drain = self._streams.get(chan.get_id())
        return drain.text() if drain else ""

    def open_tcp(self, host: str, port: int) -> paramiko.Channel:
        """A direct-tcpip channel to ``host:port`` as seen from the SSH host.

        Raises:
            ConnectError: forwarding is refused (AllowTcpForwarding no) or nothing listens.
        """
        assert_not_gui_thread("a forwarded connection")
        try:
            return self._t.open_channel(
                "direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=self.connect_timeout
            )
        except paramiko.ChannelException as exc:
            raise channel_error(host, port, exc, self.label) from None
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise self._lost("", exc) from None

    def close(self) -> None:
        """Close every channel and the connection (and any jump hosts), newest first."""
        if self._liveness is not None:
            self._liveness.stop()
        if self._shell is not None:
            self._shell.close()
        if self._spare is not None:
            self._spare.close()
            self._spare = None
        if self._chain.transports:
            log.info("%s: %d command round trips after login", self.label, self.round_trips)
        self._chain.close()
        self._streams.clear()


class _ShellPending:
    """A command in the connection's shell; :meth:`result` sends the queue if need be."""

    def __init__(self, transport: SshTransport, shell: RemoteShell, request: Request) -> None:
        self._transport = transport
        self._shell = shell
        self._request = request

    def result(self) -> CommandResult:
        """Wait for the command; kill it past its deadline, as ``run`` does."""
        t, shell, request = self._transport, self._shell, self._request
        if shell.is_queued(request):
            shell.flush()
        started = max(time.monotonic(), request.sent_at or 0.0)
        if not request.done.wait(max(0.0, started + request.timeout - time.monotonic())):
            line = shell_line(request.argv)
            # Kill it on a channel of its own (the shell waits for it); the shell then goes
            # on. If the trailer still does not come, the shell is given up.
            t._kill(request.pid, request.sudo and not t.is_root)
            if not request.done.wait(5.0) and t._shell is shell:
                t._retire_shell()
            if not t._t.is_active():
                raise t._lost(f" during `{line}`")
            raise CommandTimeout(
                f"`{line}` on {t.label} ran longer than {request.timeout:.0f} s and was stopped.",
                "The host may be overloaded; try again, or raise the timeout.",
                exit_status=-1,
            )
        if request.failure is not None:
            if not request.ran:  # the shell was never there for it: run it the plain way
                return t.run(request.argv, sudo=request.sudo, timeout=request.timeout)
            if isinstance(request.failure, ConnectError):
                raise ConnectError(
                    request.failure.problem.replace(
                        " was lost", f" was lost during `{shell_line(request.argv)}`", 1
                    ),
                    request.failure.fix,
                ) from None
            raise request.failure
        result = request.result()
        return t.sudo.clean(result) if request.sudo else result


def check_linux(label: str, uname: str) -> None:
    """Raise :class:`ConnectError` unless ``uname -s`` said Linux."""
    if uname.strip() != "Linux":
        raise ConnectError(
            f"{label} runs {uname.strip() or 'an unknown system'}, not Linux: "
            "InnoTune works on Linux hosts only.",
            "Connect to a Linux host.",
        )
