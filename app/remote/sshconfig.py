"""Where and as whom to connect: a host after the user's ``~/.ssh/config`` has had its say."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path

from app.domain.errors import TargetError
from app.domain.words import sentence
from app.remote.sshlib import paramiko


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
                sentence(f"{path} could not be read: {exc}"), "Fix the file, or move it aside."
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
    """Load invoke for paramiko when ``path`` has a ``Match exec`` (see app/remote/__init__.py)."""
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
