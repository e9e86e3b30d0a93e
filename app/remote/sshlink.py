"""The link under an SSH connection: why it could not be made, and noticing when it is gone."""

from __future__ import annotations

import logging
import socket
import threading

from app.domain.errors import ConnectError
from app.domain.words import sentence
from app.remote.sshlib import paramiko

log = logging.getLogger(__name__)


def too_old(host: str, port: int, detail: str) -> ConnectError:
    """A server that offers only algorithms paramiko refuses (SHA-1 only)."""
    return ConnectError(
        f"The SSH server at {host}:{port} offers only algorithms that paramiko 5 and newer "
        f"refuse as insecure ({detail}): it is too old, or set to SHA-1 key exchange / "
        "ssh-rsa signatures only.",
        "Upgrade OpenSSH on the host (7.2 or newer speaks SHA-2), or enable modern "
        "KexAlgorithms and HostKeyAlgorithms in its sshd_config.",
    )


def socket_error(host: str, port: int, exc: BaseException, timeout: float) -> ConnectError:
    """The TCP connection failed: unknown name, refused, no answer, or another reason."""
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
        sentence(f"Cannot reach {host}:{port}: {reason}"), "Check the address and the network."
    )


def channel_error(host: str, port: int, exc: paramiko.ChannelException, via: str) -> ConnectError:
    """``via`` refused a forwarded (direct-tcpip) channel to ``host:port``."""
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
        sentence(f"{via} refused a channel to {host}:{port}: {exc.text}"),
        "Check the SSH server's logs.",
    )


class Liveness:
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
