"""The TARGET grammar shared by every subcommand and the Connect page.

``TARGET := local | practice | [user@]host[:port] | [user@][ipv6]:port``
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from app.domain.errors import TargetError

_HOST_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})$")
_USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")


@dataclass(frozen=True)
class ConnectOptions:
    """The connection options every subcommand accepts."""

    identity: str | None = None
    known_hosts: str | None = None
    accept_host_key: str | None = None
    ask_sudo_password: bool = False
    mysql_user: str | None = None
    ask_mysql_password: bool = False
    instance: str | None = None


@dataclass(frozen=True)
class Target:
    """Where InnoTune works: this computer, the practice server, or an SSH host."""

    kind: str  # "local", "practice" or "ssh"
    host: str = ""
    user: str | None = None
    port: int | None = None
    options: ConnectOptions = field(default_factory=ConnectOptions)

    @property
    def label(self) -> str:
        """A short human-readable name for the target."""
        if self.kind != "ssh":
            return self.kind
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{host}{port}"


def _check_port(text: str, whole: str) -> int:
    if not text.isdigit():
        raise TargetError(f"The port in {whole!r} is not a number.", "Use a port from 1 to 65535.")
    port = int(text)
    if not 1 <= port <= 65535:
        raise TargetError(f"The port {port} in {whole!r} is out of range.", "Use 1 to 65535.")
    return port


def parse_target(text: str, options: ConnectOptions | None = None) -> Target:
    """Parse a TARGET string, rejecting anything that is not a plain host name or address.

    Raises:
        TargetError: naming the part that is wrong and the accepted forms.
    """
    opts = options or ConnectOptions()
    raw = text.strip()
    if raw in ("local", "practice"):
        return Target(kind=raw, options=opts)
    if not raw:
        raise TargetError("No target given.", "Use local, practice, or [user@]host[:port].")
    user: str | None = None
    rest = raw
    if "@" in raw:
        user, rest = raw.rsplit("@", 1)
        if not _USER_RE.match(user):
            raise TargetError(
                f"The user name {user!r} is not valid.",
                "Use letters, digits, '_', '.', '-' (a Unix login name).",
            )
    port: int | None = None
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise TargetError(f"{raw!r} opens '[' without ']'.", "Write IPv6 as [addr]:port.")
        host = rest[1:end]
        tail = rest[end + 1 :]
        if tail:
            if not tail.startswith(":"):
                raise TargetError(f"Unexpected text after ']' in {raw!r}.", "Use [addr]:port.")
            port = _check_port(tail[1:], raw)
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise TargetError(f"{host!r} is not an IPv6 address.", "Check the address.") from None
        return Target(kind="ssh", host=host, user=user, port=port, options=opts)
    if rest.count(":") > 1:
        try:
            ipaddress.IPv6Address(rest)
        except ValueError:
            raise TargetError(f"{rest!r} is not a host name or address.", "Check it.") from None
        return Target(kind="ssh", host=rest, user=user, options=opts)
    if ":" in rest:
        rest, port_text = rest.split(":", 1)
        port = _check_port(port_text, raw)
    if not _HOST_RE.match(rest) or ".." in rest:
        raise TargetError(
            f"{rest!r} is not a valid host name.",
            "Use a host name, an IPv4 address, [IPv6]:port, or an alias from ~/.ssh/config.",
        )
    return Target(kind="ssh", host=rest, user=user, port=port, options=opts)
