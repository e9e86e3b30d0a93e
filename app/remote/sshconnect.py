"""Connecting over SSH: sockets, jump hosts, the handshake and the host key, the login.

:class:`SshChain` holds the paramiko transports of one connection (each jump host's, then
the target's, each riding on a channel of the one before or on a ProxyCommand) and closes
them newest first. The host key is checked against every known-hosts source before any
credential is sent; the login itself is :mod:`app.remote.sshauth`'s.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import threading
from pathlib import Path

from app.domain.errors import ConnectError, TargetError
from app.domain.target import parse_target
from app.domain.words import sentence
from app.remote.hostkeys import HostKeyStore, OfferedKey, split_host_port
from app.remote.sshauth import PromptAnswerer, authenticate
from app.remote.sshconfig import HostConfig, resolve_host
from app.remote.sshlib import paramiko
from app.remote.sshlink import channel_error, socket_error, too_old

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 15.0
BANNER_TIMEOUT = 15.0
AUTH_TIMEOUT = 30.0


class SshChain:
    """The paramiko transports of one SSH connection: the jump hosts' first, the target's last."""

    def __init__(
        self,
        store: HostKeyStore,
        *,
        accept: str | None,
        identity: str | None,
        ssh_config: Path | None,
        connect_timeout: float,
        prompt: PromptAnswerer | None,
    ) -> None:
        self.store = store
        self.connect_timeout = connect_timeout
        self.transports: list[paramiko.Transport] = []
        self.host_key_status = ""
        self._accept = accept
        self._identity = identity
        self._ssh_config = ssh_config
        self._prompt = prompt
        self._proxies: list[paramiko.ProxyCommand] = []

    def connect(
        self, hc: HostConfig, login_password: str | None, key_passphrase: str | None
    ) -> paramiko.Transport:
        """The target's transport, through ``hc``'s jump hosts, host key checked, logged in."""
        via: paramiko.Transport | None = None
        for hop in hc.proxy_jump:
            via = self._connect_hop(hop, via, key_passphrase)
        sock = self._open_sock(hc.hostname, hc.port, via, hc.proxy_command)
        t = self._handshake(sock, hc)
        self.transports.append(t)
        authenticate(
            t,
            hc,
            identity=self._identity,
            login_password=login_password,
            key_passphrase=key_passphrase,
            prompt=self._prompt,
            jump=False,
        )
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
        self.transports.append(t)
        # The login password belongs to the target, never to a jump host.
        authenticate(
            t,
            hc,
            identity=self._identity,
            login_password=None,
            key_passphrase=key_passphrase,
            prompt=None,
            jump=True,
        )
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
                raise channel_error(host, port, exc, "the jump host") from None
            except paramiko.SSHException as exc:
                raise ConnectError(
                    sentence(f"The jump host dropped the connection: {exc}")
                ) from None
        if proxy_command:
            proxy = paramiko.ProxyCommand(proxy_command)
            self._proxies.append(proxy)
            return proxy
        try:
            sock = socket.create_connection((host, port), timeout=self.connect_timeout)
        except OSError as exc:
            raise socket_error(host, port, exc, self.connect_timeout) from None
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
        except paramiko.ssh_exception.IncompatiblePeer as exc:
            t.close()
            raise too_old(hc.hostname, hc.port, str(exc)) from None
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

    def close(self) -> None:
        """Close the transports newest first, and reap any ProxyCommand process."""
        for t in reversed(self.transports):
            t.close()
        for t in self.transports:
            # The transport's thread closes its socket on the way out: let it finish first.
            if t.is_alive() and t is not threading.current_thread():
                t.join(5)
        self.transports.clear()
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


class InnoTuneHostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """A paramiko policy that defers to :class:`HostKeyStore` for every decision.

    Use it with an ``SSHClient`` whose own HostKeys are left empty, so paramiko consults
    this policy on every connection and all our sources are checked: unknown keys raise
    :class:`HostKeyUnknown` unless their fingerprint equals ``accept_fingerprint``.
    """

    def __init__(self, store: HostKeyStore, accept_fingerprint: str | None = None) -> None:
        self.store = store
        self.accept_fingerprint = accept_fingerprint

    def missing_host_key(
        self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey
    ) -> None:
        """Raise unless the store trusts or the caller accepted ``key``."""
        host, port = split_host_port(hostname)
        self.store.check(host, port, OfferedKey.from_pkey(key), self.accept_fingerprint)
