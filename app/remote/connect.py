"""Open the right transport for a target, and find out how it gets root."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.domain.errors import SudoError
from app.domain.target import Target
from app.remote.local import LocalTransport
from app.remote.transport import CommandResult, SudoState, Transport, raise_for_sudo

if TYPE_CHECKING:
    from app.remote.ssh import PromptAnswerer, SshTransport


def open_transport(
    target: Target,
    *,
    sudo_password: str | None = None,
    login_password: str | None = None,
    key_passphrase: str | None = None,
    accept_fingerprint: str | None = None,
    own_known_hosts: str | Path | None = None,
    prompt: PromptAnswerer | None = None,
) -> Transport:
    """Connect to ``target``: this computer for ``local``/``practice``, else over SSH.

    ``accept_fingerprint`` (or ``--accept-host-key``) trusts exactly that unknown host key.
    ``prompt`` answers keyboard-interactive login questions (one-time codes, PAM prompts);
    without it, such a login is not tried.
    When a sudo password is given but sudo turns out not to need one, the password is
    dropped at once: with NOPASSWD, ``sudo -S`` would pass it on to the command's stdin.

    Raises:
        HostKeyUnknown: a question for the caller (show the fingerprint, then call again
            with ``accept_fingerprint``).
        HostKeyChanged, HostKeyRevoked, AuthError, ConnectError: the connection failed.
    """
    transport: LocalTransport | SshTransport
    if target.kind in ("local", "practice"):
        transport = LocalTransport(sudo_password)
    else:
        from app.remote.ssh import SshTransport  # paramiko: only for a target over SSH

        transport = SshTransport(
            target,
            sudo_password=sudo_password,
            login_password=login_password,
            key_passphrase=key_passphrase,
            accept_fingerprint=accept_fingerprint,
            own_known_hosts=own_known_hosts,
            prompt=prompt,
        )
    if sudo_password is not None and not transport.is_root:
        try:
            if transport.run(["sudo", "-n", "true"], timeout=30).ok:
                transport.sudo.set_password(None)
        except BaseException:
            transport.close()
            raise
    return transport


SUDO_PROBE = ("sudo", "-n", "true")


def probe_sudo(transport: Transport, probe: CommandResult | None = None) -> str:
    """How ``transport`` gets root: "root", "nopasswd" or "password-ok".

    Probes with ``sudo -n true`` first (``probe``: its result, when already run); only
    when that asks for a password, and one was given, tries it (on stdin).

    Raises:
        SudoError: no sudo, no rights, a password needed but not given, or a wrong one.
    """
    if transport.is_root:
        return "root"
    if probe is None:
        probe = transport.run(list(SUDO_PROBE), timeout=30)
    state: SudoState | None = getattr(transport, "sudo", None)
    if probe.ok:
        if state is not None:
            state.set_password(None)  # see open_transport: never feed it to a command
        return "nopasswd"
    text = probe.err
    if "password is required" not in text.lower() or state is None or not state.has_password:
        raise_for_sudo(text, had_password=False)
        raise SudoError(
            f"sudo did not work on {transport.label}: {text.strip() or 'no reason given'}.",
            "Check that sudo is installed and that this user may use it.",
        )
    transport.run(["true"], sudo=True, timeout=60).check()
    return "password-ok"
