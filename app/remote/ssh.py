"""The SSH transport: commands, files, sudo and byte streams on a host, over paramiko.

Commands given to :meth:`SshTransport.submit` go through the connection's one long-lived
shell (:mod:`app.remote.shell`): those submitted together share one round trip, and no login
shell starts for each. Every command given to ``run`` (and every stream) runs on its own
session channel, which is always closed. The command line
the login shell sees is ``sh -c '<script>'``, and the script is base64-encoded whenever it
holds characters that fish or csh would read differently from ``sh``, so the user's login
shell never changes a value. The script sets ``LC_ALL=C`` and prints a random marker before
the command proper, so anything a noisy ``.bashrc`` prints is discarded. stdout and stderr
are read at the same time (stderr in a thread, stdin written from another), so a command
that fills both cannot deadlock, and stdin is fed for as long as the command takes to read
it. A sudo password only ever travels on the channel's stdin. A keepalive that wants a reply
notices a peer that stopped answering, so a dead link fails a command within seconds.
"""

from __future__ import annotations

import base64
import getpass
import logging
import os
import re
import secrets
import shlex
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.common import cMSG_CHANNEL_REQUEST
from paramiko.pkey import UnknownKeyType
from paramiko.ssh_exception import IncompatiblePeer

from app.domain.errors import (
    AuthError,
    CommandError,
    CommandTimeout,
    ConnectError,
    InnoTuneError,
    TargetError,
)
from app.domain.target import Target, parse_target
from app.domain.threads import assert_not_gui_thread
from app.remote.hostkeys import HostKeyStore, OfferedKey
from app.remote.shell import BOOTSTRAP, RemoteShell, Request
from app.remote.transport import (
    MAX_OUTPUT,
    CommandResult,
    InThread,
    Pending,
    SudoState,
    atomic_write_argv,
    shell_line,
)

log = logging.getLogger(__name__)

# paramiko's DEBUG output has carried secrets before (paramiko#957); keep it quiet unless
# someone configured it on purpose.
if logging.getLogger("paramiko").level == logging.NOTSET:
    logging.getLogger("paramiko").setLevel(logging.WARNING)

CONNECT_TIMEOUT = 15.0
BANNER_TIMEOUT = 15.0
AUTH_TIMEOUT = 30.0
# A person typing a one-time code: as long as OpenSSH's default LoginGraceTime allows.
INTERACTIVE_AUTH_TIMEOUT = 120.0
# Liveness: a keepalive that wants a reply every KEEPALIVE_INTERVAL seconds; no reply within
# KEEPALIVE_TIMEOUT means the peer is gone (OpenSSH's ServerAliveInterval/CountMax idea).
KEEPALIVE_INTERVAL = 10.0
KEEPALIVE_TIMEOUT = 20.0

PromptAnswerer = Callable[[str, bool], str]
"""Answers one keyboard-interactive prompt: (prompt text, echo the answer?) -> answer.

Called for each question the server asks during login (a one-time code, a PAM
"Password:"). It runs on paramiko's thread and may block while a person answers; raising
aborts the login, and the exception reaches the caller of :class:`SshTransport`."""

# Prints "<marker> <pid>" on stdout and "<marker>" on stderr, then becomes the command, so
# output before the markers (a noisy .bashrc) can be dropped and a stuck command killed.
# No backslash and no "!": the script stays readable to every login shell unencoded.
_MARK_SCRIPT = 'echo "$0 $$"; echo "$0" >&2; exec "$@"'
# A channel prepared for a stream: its login shell reads one line, the command line the
# stream's command would have had, and becomes it. sh's read takes one byte at a time from
# a pipe, so nothing after that line (the stream's own data) is consumed.
_LAUNCHER = 'IFS= read -r line && eval "exec $line"'
# What fish, csh and tcsh read inside single quotes exactly as sh does.
_PLAIN_SAFE = re.compile(r"[ -~]*")
_DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")


@dataclass
class HostConfig:
    """Where and as whom to connect, after ``~/.ssh/config`` has had its say."""

    alias: str
    hostname: str
    port: int
    user: str
    identity_files: list[str] = field(default_factory=list)
    proxy_jump: list[str] = field(default_factory=list)
    proxy_command: str = ""


def default_ssh_config() -> Path:
    """The user's OpenSSH client config."""
    return Path.home() / ".ssh" / "config"


def resolve_host(
    host: str, port: int | None, user: str | None, config_path: Path | None = None
) -> HostConfig:
    """Apply ``~/.ssh/config`` to a host; the target's own user and port win, as with ssh.

    Raises:
        TargetError: the config file cannot be parsed.
    """
    path = config_path or default_ssh_config()
    cfg: dict[str, object] = {}
    if path.exists():
        _allow_match_exec(path)
        try:
            cfg = dict(paramiko.SSHConfig.from_path(str(path)).lookup(host))
        except (paramiko.SSHException, OSError, ValueError) as exc:
            raise TargetError(
                f"{path} could not be read: {exc}.", "Fix the file, or move it aside."
            ) from None
    cfg_port = cfg.get("port")
    hostname = str(cfg.get("hostname") or host)
    identity = cfg.get("identityfile")
    files = [os.path.expanduser(str(p)) for p in identity] if isinstance(identity, list) else []
    jump = str(cfg.get("proxyjump") or "")
    command = str(cfg.get("proxycommand") or "")
    return HostConfig(
        alias=host,
        hostname=hostname,
        port=port or (int(str(cfg_port)) if cfg_port else 22),
        user=user or str(cfg.get("user") or getpass.getuser()),
        identity_files=files,
        proxy_jump=[] if jump.lower() == "none" else [h for h in jump.split(",") if h],
        proxy_command="" if command.lower() == "none" else command,
    )


def _allow_match_exec(path: Path) -> None:
    """Load invoke for paramiko when ``path`` has a ``Match exec`` (see app/remote/__init__)."""
    try:
        text = path.read_text(errors="replace").lower()
    except OSError:
        return
    if "exec" in text and getattr(paramiko.config, "invoke", True) is None:
        try:
            import invoke
        except ImportError:
            return  # paramiko then says that Match exec needs it
        setattr(paramiko.config, "invoke", invoke)  # noqa: B010 - not in its stubs


def command_line(script: str) -> str:
    """The command line handed to the login shell for a POSIX ``sh`` script.

    Plain printable ASCII without backslash or ``!`` means the same inside single quotes to
    sh, bash, fish, csh and tcsh; anything else is sent base64-encoded.
    """
    if _PLAIN_SAFE.fullmatch(script) and "\\" not in script and "!" not in script:
        return "sh -c " + shlex.quote(script)
    encoded = base64.b64encode(script.encode()).decode()
    return f"sh -c 'eval \"$(echo {encoded} | base64 -d)\"'"


def _start(chan: paramiko.Channel, command: str) -> None:
    """``exec_command`` without waiting for the server's "started": one round trip less.

    The server handles the request before anything sent after it, so the command's input
    may follow at once; a refusal closes the channel, which the reader of its output sees
    as a command that ended without a word.
    """
    try:
        message = paramiko.Message()
        message.add_byte(cMSG_CHANNEL_REQUEST)
        message.add_int(chan.remote_chanid)
        message.add_string("exec")
        message.add_boolean(True)
        message.add_string(command)
        chan._event_pending()  # type: ignore[attr-defined]
        chan.transport._send_user_message(message)  # type: ignore[union-attr]
    except AttributeError:  # a paramiko without these internals: the plain way
        chan.exec_command(command)


def _script(argv: Sequence[str]) -> str:
    return "LC_ALL=C; LANG=C; export LC_ALL LANG; exec " + shlex.join(argv)


def _strip_marker(data: bytes, marker: bytes) -> tuple[bytes, bytes]:
    """Drop everything up to and including the marker line; return (rest, marker line)."""
    at = data.find(marker)
    if at < 0:
        return data, b""
    end = data.find(b"\n", at)
    if end < 0:
        return b"", data[at:]
    return data[end + 1 :], data[at:end]


def _too_old(host: str, port: int, detail: str) -> ConnectError:
    return ConnectError(
        f"The SSH server at {host}:{port} offers only algorithms that paramiko 5 and newer "
        f"refuse as insecure ({detail}): it is too old, or set to SHA-1 key exchange / "
        "ssh-rsa signatures only.",
        "Upgrade OpenSSH on the host (7.2 or newer speaks SHA-2), or enable modern "
        "KexAlgorithms and HostKeyAlgorithms in its sshd_config.",
    )


def _socket_error(host: str, port: int, exc: BaseException, timeout: float) -> ConnectError:
    if isinstance(exc, socket.gaierror):
        return ConnectError(
            f"The host name {host!r} could not be resolved (unknown host).",
            "Check the spelling or the alias in ~/.ssh/config, or use the IP address.",
        )
    if isinstance(exc, ConnectionRefusedError):
        return ConnectError(
            f"{host}:{port} refused the connection: no SSH server listens on that port.",
            "Check the port, and that sshd runs on the host (systemctl status ssh).",
        )
    if isinstance(exc, TimeoutError | socket.timeout):
        return ConnectError(
            f"No answer from {host}:{port} within {timeout:.0f} s.",
            "Check the address, a firewall or a VPN between you and the host.",
        )
    reason = getattr(exc, "strerror", None) or str(exc)
    return ConnectError(
        f"Cannot reach {host}:{port}: {reason}.", "Check the address and the network."
    )


def _channel_error(host: str, port: int, exc: paramiko.ChannelException, via: str) -> ConnectError:
    if exc.code == 1:
        return ConnectError(
            f"The SSH server of {via} refuses to forward connections to {host}:{port} "
            "(AllowTcpForwarding no, or PermitOpen).",
            "Allow TCP forwarding for this user in the host's sshd_config, or use the "
            "database's socket through a relay instead.",
        )
    if exc.code == 2:
        return ConnectError(
            f"{via} could not connect to {host}:{port}: nothing listens there, as seen "
            "from that host.",
            "Check the host and port, and that the service listens on that address.",
        )
    return ConnectError(
        f"{via} refused a channel to {host}:{port}: {exc.text}.", "Check the SSH server's logs."
    )


def _load_key(path: str, passphrase: str | None) -> paramiko.PKey:
    # cryptography wants the passphrase as bytes, whatever paramiko's annotation says.
    secret = passphrase.encode() if passphrase is not None else None
    try:
        return paramiko.PKey.from_path(path, secret)  # type: ignore[arg-type]
    except FileNotFoundError:
        raise AuthError(f"The key file {path} does not exist.", "Check the path.") from None
    except PermissionError:
        raise AuthError(
            f"The key file {path} cannot be read (permission denied).", "Check its owner and mode."
        ) from None
    except TypeError:
        # cryptography: "Key is password-protected, but password was not provided."
        raise AuthError(
            f"The key file {path} is protected by a passphrase.",
            "Give the passphrase, or load the key into ssh-agent (ssh-add).",
        ) from None
    except (ValueError, paramiko.SSHException, UnknownKeyType):
        pass
    # A wrong passphrase surfaces as a confusing "not a private key": tell them apart.
    encrypted = False
    if secret is not None:
        try:
            paramiko.PKey.from_path(path)
        except TypeError:
            encrypted = True
        except (ValueError, paramiko.SSHException, UnknownKeyType, OSError):
            pass
    if encrypted:
        raise AuthError(f"The passphrase for {path} is wrong.", "Check the passphrase.")
    raise AuthError(
        f"The key file {path} is not a private key paramiko can use (DSA keys are not).",
        "Use an Ed25519, ECDSA or RSA key.",
    )


class _Stderr:
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


class _Liveness:
    """Notices a peer that stopped answering, and closes the connection when it does.

    paramiko's own ``set_keepalive`` sends a request that wants no reply, so it keeps a NAT
    mapping open but can never tell that the other side is gone: a host that hangs, or a
    link that drops packets without a reset, would leave every command waiting for its
    whole deadline. So every ``interval`` seconds a ``keepalive@openssh.com`` request that
    wants a reply goes out (any reply, even "unsupported", proves the peer is there), from
    a thread of its own, so a send stuck on a full socket buffer cannot stall the judge.
    Without a reply within ``timeout`` the transport is closed: every channel read returns
    at once, and :attr:`cause` says why.
    """

    def __init__(self, t: paramiko.Transport, interval: float, timeout: float) -> None:
        self._t = t
        self.interval = interval
        self.timeout = timeout
        self.cause = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ssh-liveness", daemon=True)
        self._thread.start()

    def _probe(self, answered: threading.Event) -> None:
        try:
            self._t.global_request("keepalive@openssh.com", wait=True)
        except (paramiko.SSHException, EOFError, OSError):
            pass  # the transport closed; _watch sees that
        answered.set()

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            if not self._t.is_active():
                return
            answered = threading.Event()
            threading.Thread(
                target=self._probe, args=(answered,), name="ssh-keepalive", daemon=True
            ).start()
            if answered.wait(self.timeout) or self._stop.is_set() or not self._t.is_active():
                continue
            self.cause = (
                f"no reply to SSH keepalives for {self.timeout:.0f} s: the network link "
                "dropped or the host stopped responding"
            )
            log.warning("closing the SSH connection: %s", self.cause)
            self._t.close()
            return

    def stop(self) -> None:
        """Stop watching (the transport is being closed on purpose)."""
        self._stop.set()


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
        self._ssh_config = ssh_config
        self._identity = os.path.expanduser(opts.identity) if opts.identity else None
        self._accept = accept_fingerprint or opts.accept_host_key
        self.store = HostKeyStore(
            own_file=Path(own_known_hosts).expanduser() if own_known_hosts else None,
            extra_file=Path(opts.known_hosts).expanduser() if opts.known_hosts else None,
        )
        self.host = resolve_host(target.host, target.port, target.user, ssh_config)
        self._chain: list[paramiko.Transport] = []
        self._proxies: list[paramiko.ProxyCommand] = []
        self._streams: dict[int, _Stderr] = {}
        self._prompt = prompt
        self._liveness: _Liveness | None = None
        self.host_key_status = ""
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
            self._t = self._connect(self.host, login_password, key_passphrase)
            self._liveness = _Liveness(self._t, keepalive_interval, keepalive_timeout)
            # The shell starts now and says whether this is Linux and who we are; nothing
            # waits for that until it is needed, so it shares the first round trip.
            self._shell = self._start_shell()
        except BaseException:
            self.close()
            raise

    # -- connecting --------------------------------------------------------------------

    def _connect(
        self, hc: HostConfig, login_password: str | None, key_passphrase: str | None
    ) -> paramiko.Transport:
        via: paramiko.Transport | None = None
        for hop in hc.proxy_jump:
            via = self._connect_hop(hop, via, key_passphrase)
        sock = self._open_sock(hc.hostname, hc.port, via, hc.proxy_command)
        t = self._handshake(sock, hc)
        self._chain.append(t)
        self._authenticate(t, hc, login_password, key_passphrase, jump=False)
        return t

    def _connect_hop(
        self, hop: str, via: paramiko.Transport | None, key_passphrase: str | None
    ) -> paramiko.Transport:
        spec = hop.removeprefix("ssh://")
        try:
            jt = parse_target(spec)
        except TargetError:
            raise TargetError(
                f"The ProxyJump host {hop!r} is not [user@]host[:port].", "Fix ~/.ssh/config."
            ) from None
        hc = resolve_host(jt.host, jt.port, jt.user, self._ssh_config)
        # Nested jumps of the jump host itself are not followed; one chain per target.
        sock = self._open_sock(hc.hostname, hc.port, via, "")
        t = self._handshake(sock, hc)
        self._chain.append(t)
        # The login password belongs to the target, never to a jump host.
        self._authenticate(t, hc, None, key_passphrase, jump=True)
        return t

    def _open_sock(
        self, host: str, port: int, via: paramiko.Transport | None, proxy_command: str
    ) -> socket.socket | paramiko.Channel | paramiko.ProxyCommand:
        if via is not None:
            try:
                return via.open_channel(
                    "direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=self.connect_timeout
                )
            except paramiko.ChannelException as exc:
                raise _channel_error(host, port, exc, "the jump host") from None
            except paramiko.SSHException as exc:
                raise ConnectError(f"The jump host dropped the connection: {exc}.") from None
        if proxy_command:
            proxy = paramiko.ProxyCommand(proxy_command)
            self._proxies.append(proxy)
            return proxy
        try:
            sock = socket.create_connection((host, port), timeout=self.connect_timeout)
        except OSError as exc:
            raise _socket_error(host, port, exc, self.connect_timeout) from None
        # As ssh does for interactive sessions: small requests go out at once, never held
        # back waiting for the ACK of the previous packet (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _handshake(
        self, sock: socket.socket | paramiko.Channel | paramiko.ProxyCommand, hc: HostConfig
    ) -> paramiko.Transport:
        t = paramiko.Transport(sock)
        t.banner_timeout = min(BANNER_TIMEOUT, self.connect_timeout)
        t.handshake_timeout = self.connect_timeout
        t.auth_timeout = AUTH_TIMEOUT
        # Ask for a key type we already have on record, as ssh does, so a host with several
        # keys does not look "changed" just because it offered another type first.
        known = self.store.known_types(hc.hostname, hc.port)
        opts = t.get_security_options()
        wanted: list[str] = []
        for kt in known:
            wanted += ["rsa-sha2-512", "rsa-sha2-256"] if kt == "ssh-rsa" else [kt]
        supported = list(opts.key_types)
        first = [k for k in wanted if k in supported]
        if first:
            opts.key_types = first + [k for k in supported if k not in first]
        try:
            # Longer than the banner timeout, so a silent server reports as exactly that.
            t.start_client(timeout=t.banner_timeout + self.connect_timeout)
        except IncompatiblePeer as exc:
            t.close()
            raise _too_old(hc.hostname, hc.port, str(exc)) from None
        except (paramiko.SSHException, EOFError, OSError) as exc:
            t.close()
            text = str(exc)
            if "banner" in text.lower():
                raise ConnectError(
                    f"{hc.hostname}:{hc.port} accepted the connection but sent no SSH "
                    f"greeting within {t.banner_timeout:.0f} s.",
                    "Check that this is an SSH port; the host may be overloaded, try again.",
                ) from None
            raise ConnectError(
                f"The SSH handshake with {hc.hostname}:{hc.port} failed: {text or 'closed'}.",
                "Check that this is an SSH server; try again.",
            ) from None
        try:
            # start_client returns quietly when its own deadline passes mid-negotiation.
            key = t.get_remote_server_key()
        except paramiko.SSHException:
            t.close()
            raise ConnectError(
                f"{hc.hostname}:{hc.port} did not complete the SSH handshake in time.",
                "The host may be overloaded or not an SSH server; try again.",
            ) from None
        try:
            self.host_key_status = self.store.check(
                hc.hostname, hc.port, OfferedKey.from_pkey(key), self._accept
            )
        except BaseException:
            t.close()
            raise
        for note in self.store.notes:
            log.info("known_hosts: %s", note)
        return t

    def _candidate_keys(
        self, hc: HostConfig, key_passphrase: str | None, use_defaults: bool
    ) -> tuple[list[tuple[str, paramiko.PKey]], paramiko.Agent | None]:
        if self._identity:
            return [(self._identity, _load_key(self._identity, key_passphrase))], None
        if not use_defaults:
            return [], None
        keys: list[tuple[str, paramiko.PKey]] = []
        agent: paramiko.Agent | None = None
        if os.environ.get("SSH_AUTH_SOCK"):
            try:
                agent = paramiko.Agent()
                keys += [(f"agent key {k.fingerprint}", k) for k in agent.get_keys()]
            except paramiko.SSHException as exc:
                log.info("ssh-agent not usable: %s", exc)
        home_keys = [str(Path.home() / ".ssh" / n) for n in _DEFAULT_KEYS]
        for path in hc.identity_files + home_keys:
            if not Path(path).exists() or any(path == name for name, _ in keys):
                continue
            try:
                keys.append((path, _load_key(path, key_passphrase)))
            except AuthError as exc:
                # A configured key we cannot open is worth a note, not a stop: others may do.
                log.info("skipping %s: %s", path, exc.problem)
        return keys, agent

    def _authenticate(
        self,
        t: paramiko.Transport,
        hc: HostConfig,
        login_password: str | None,
        key_passphrase: str | None,
        *,
        jump: bool,
    ) -> None:
        # One picked identity, or a password, means exactly that: an agent full of keys
        # would use up the server's MaxAuthTries before the right one is tried.
        use_defaults = self._identity is None and (login_password is None or jump)
        keys, agent = self._candidate_keys(hc, key_passphrase, use_defaults)
        tried: list[str] = []
        who = f"{hc.user}@{hc.hostname}:{hc.port}"
        # What the server still allows, once it has said (None: not told yet).
        allowed: list[str] | None = None
        try:
            for name, key in keys:
                tried.append(name)
                try:
                    remaining = t.auth_publickey(hc.user, key)
                except paramiko.BadAuthenticationType as exc:
                    allowed = list(exc.allowed_types)
                    break
                except paramiko.AuthenticationException:
                    continue
                if t.is_authenticated():
                    return
                if remaining:  # the key was accepted, and a second factor is wanted
                    allowed = list(remaining)
                    break
            if login_password is not None and not jump and _may(allowed, "password"):
                tried.append("password")
                try:
                    t.auth_password(hc.user, login_password)
                except paramiko.BadAuthenticationType as exc:
                    allowed = list(exc.allowed_types)
                except paramiko.AuthenticationException:
                    pass
                if t.is_authenticated():
                    return
            if self._prompt is not None and not jump and _may(allowed, "keyboard-interactive"):
                tried.append("keyboard-interactive")
                _interactive(t, hc.user, self._prompt)
                if t.is_authenticated():
                    return
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise AuthError(
                f"{who} closed the connection during login ({exc or 'no reason given'}).",
                "The server may allow few attempts (MaxAuthTries): pick one identity with "
                "--identity FILE.",
            ) from None
        finally:
            if agent is not None:
                agent.close()
        if not tried:
            offers = _offered_methods(t, hc.user)
            if t.is_authenticated():  # the server lets this user in without credentials
                return
            raise AuthError(
                f"No way to log in to {who}: no key, no agent and no password"
                f"{f' (it accepts: {offers})' if offers else ''}.",
                "Give a key with --identity FILE, start ssh-agent, or give the password; "
                "login questions (one-time codes) are asked by the wizard or, on the command "
                "line, in a terminal.",
            )
        offers = f"; it accepts: {', '.join(allowed)}" if allowed else ""
        raise AuthError(
            f"{who} refused the login (tried: {', '.join(tried)}{offers}).",
            "Check the user name and the password, or give the right key with --identity "
            "FILE (its public half must be in ~/.ssh/authorized_keys on the host).",
        )

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
            _start(chan, command_line("exec " + shlex.join(["sh", "-c", BOOTSTRAP, ready])))
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
                f"{self.label} did not run a simple command (uname -s; id -u): "
                f"{result.err.strip() or 'no output'}.",
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

    def _session(self) -> paramiko.Channel:
        try:
            return self._t.open_session(timeout=self.connect_timeout)
        except paramiko.ChannelException as exc:
            spare, self._spare = self._spare, None
            if spare is not None:  # a server allowing few sessions: the prepared one goes
                spare.close()
                return self._session()
            shell = self._shell
            if shell is not None and shell.idle:
                # A server allowing very few sessions (MaxSessions): give the shell's up.
                log.info("%s refused a session; closing the idle shell to free one", self.label)
                self._retire_shell()
                return self._session()
            raise CommandError(
                f"{self.label} refused a new session channel: {exc.text}.",
                "The server may limit sessions (MaxSessions); try again.",
            ) from None
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise self._lost("", exc) from None

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
        inner = ["sh", "-c", _MARK_SCRIPT, marker, *argv]
        full, data = self.sudo.wrap(inner, input) if sudo else (inner, input)
        return command_line(_script(full)), marker.encode(), data

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
            _start(chan, line)
            if password_line:
                started, head, early_err = _await_marker(
                    chan, marker + b" ", timeout, self.sudo.prompt.encode(), password_line
                )
                if not started:
                    status, err = _failed_start(chan, early_err)
                    if status == -1:
                        self._raise_if_lost(argv)
                    failed = CommandResult(
                        shell_line(argv), status, b"", _strip_marker(err, marker)[0]
                    )
                    return self.sudo.clean(failed)
                data = input
            left = max(0.1, deadline - time.monotonic())
            status, out, err, truncated = _exchange(chan, data, left)
            if status == -1:  # no exit status: a signal, or the connection is gone
                self._raise_if_lost(argv)
            out, err = head + out, early_err + err
        except _Expired as exc:
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
        out, _ = _strip_marker(out, marker + b" ")
        err, _ = _strip_marker(err, marker)
        result = CommandResult(shell_line(argv), status, out, err, truncated)
        return self.sudo.clean(result) if sudo else result

    def _kill_marked(self, out: bytes, marker: bytes, sudo: bool) -> None:
        _, mark = _strip_marker(out, marker + b" ")
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
                _start(chan, line)
            prompt = self.sudo.prompt.encode() if data else b""
            # data is the sudo password line alone (no input): sent only when sudo asks.
            started, _, early_err = _await_marker(chan, marker + b" ", timeout, prompt, data or b"")
        except _Expired:
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
            status, err = _failed_start(chan, early_err)
            if status == -1:
                self._raise_if_lost(argv)
            err, _ = _strip_marker(err, marker)
            result = CommandResult(shell_line(argv), status, b"", err)
            if sudo and not self.is_root:
                self.sudo.clean(result)
            result.check()
            raise CommandError(f"`{shell_line(argv)}` on {self.label} ended at once.")
        chan.settimeout(None)
        self._streams[chan.get_id()] = _Stderr(chan)
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
            _start(chan, command_line(_LAUNCHER))
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
            raise _channel_error(host, port, exc, self.label) from None
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
        if self._chain:
            log.info("%s: %d command round trips after login", self.label, self.round_trips)
        for t in reversed(self._chain):
            t.close()
        for t in self._chain:
            # The transport's thread closes its socket on the way out: let it finish first.
            if t.is_alive() and t is not threading.current_thread():
                t.join(5)
        self._chain.clear()
        self._streams.clear()
        for proxy in self._proxies:
            # paramiko only signals the ProxyCommand process; reap it and close its pipes.
            process = proxy.process
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
        self._proxies.clear()


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


def _offered_methods(t: paramiko.Transport, user: str) -> str:
    """The login methods the server accepts, as ssh learns them (a "none" request)."""
    try:
        t.auth_none(user)
    except paramiko.BadAuthenticationType as exc:
        return ", ".join(exc.allowed_types)
    except (paramiko.SSHException, EOFError, OSError):
        pass
    return ""


def _may(allowed: list[str] | None, method: str) -> bool:
    """Whether to try ``method``: the server allows it, or has not said yet."""
    return allowed is None or method in allowed


def _interactive(t: paramiko.Transport, user: str, prompt: PromptAnswerer) -> None:
    """Log in by keyboard-interactive, each question answered by ``prompt``.

    The answers go to the server and nowhere else: never logged, and registered with the
    log redactor in case a caller logs them by mistake.

    Raises:
        Whatever ``prompt`` raised (the login is abandoned without sending an answer).
    """
    from app.domain.redact import register_secret

    failure: list[BaseException] = []

    def handler(title: str, instructions: str, prompts: list[tuple[str, bool]]) -> list[str]:
        answers: list[str] = []
        try:
            for i, (text, echo) in enumerate(prompts):
                # As ssh does: the server's instructions come before the first question.
                shown = (
                    f"{instructions.strip()}\n{text}" if i == 0 and instructions.strip() else text
                )
                answer = prompt(shown, bool(echo))
                if not echo and len(answer) >= 4:  # a 1-3 character mask would garble logs
                    register_secret(answer)
                answers.append(answer)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
            failure.append(exc)
            # EOFError ends paramiko's thread quietly (no traceback in its log) and sends
            # nothing: no empty answer counts as a failed attempt against the account.
            raise EOFError from None
        del title
        return answers

    old_timeout = t.auth_timeout
    t.auth_timeout = INTERACTIVE_AUTH_TIMEOUT
    try:
        t.auth_interactive(user, handler)
    except paramiko.AuthenticationException as exc:
        if failure:
            raise failure[0] from None
        if "timeout" in str(exc).lower():
            raise AuthError(
                f"The login questions were not answered within {INTERACTIVE_AUTH_TIMEOUT:.0f} s.",
                "Connect again and answer them sooner.",
            ) from None
    finally:
        t.auth_timeout = old_timeout


def check_linux(label: str, uname: str) -> None:
    """Raise :class:`ConnectError` unless ``uname -s`` said Linux."""
    if uname.strip() != "Linux":
        raise ConnectError(
            f"{label} runs {uname.strip() or 'an unknown system'}, not Linux: "
            "InnoTune works on Linux hosts only.",
            "Connect to a Linux host.",
        )


class _Expired(Exception):
    """A command ran past its deadline; ``out`` is the stdout read so far (it holds the pid)."""

    def __init__(self, out: bytes) -> None:
        super().__init__("deadline passed")
        self.out = out


def _await_marker(
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
        _Expired: no marker within ``timeout``.
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
            raise _Expired(b"")
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


def _failed_start(chan: paramiko.Channel, early_err: bytes) -> tuple[int, bytes]:
    """Collect what a command that never started said; close its channel."""
    status, err = -1, b""
    try:
        if chan.exit_status_ready() or chan.eof_received:
            status, _, err, _ = _exchange(chan, None, 10.0, stdin_open=True)
        # else: sudo waits for another password; closing the channel ends it
    except _Expired:
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
                return  # the reader raises _Expired; EOF must not look like the end of the data
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


def _exchange(
    chan: paramiko.Channel, data: bytes | None, timeout: float, *, stdin_open: bool = False
) -> tuple[int, bytes, bytes, bool]:
    """Feed stdin, read stdout and stderr concurrently, then the exit status.

    Three threads, one per stream, each blocking only on its own stream: stdout here,
    stderr and stdin in helpers. None waits on another, so a command may fill stdout,
    stderr, or neither, and read its stdin early, late or never, in any order.

    Raises:
        _Expired: past ``timeout``.
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
            raise _Expired(bytes(out))
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
        raise _Expired(bytes(out))
    # -1: no exit status came (the command died from a signal); that is a failure.
    return chan.exit_status, bytes(out), bytes(err), truncated[0]
