"""SSH authentication: keys, the agent, a password, and login questions answered by a callback."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from app.domain.errors import AuthError
from app.remote.sshconfig import HostConfig
from app.remote.sshlib import paramiko

log = logging.getLogger(__name__)

# A person typing a one-time code: as long as OpenSSH's default LoginGraceTime allows.
INTERACTIVE_AUTH_TIMEOUT = 120.0
_DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")

PromptAnswerer = Callable[[str, bool], str]
"""Answers one keyboard-interactive prompt: (prompt text, echo the answer?) -> answer.

Called for each question the server asks during login (a one-time code, a PAM
"Password:"). It runs on paramiko's thread and may block while a person answers; raising
aborts the login, and the exception reaches the caller of :class:`SshTransport`."""


def load_key(path: str, passphrase: str | None) -> paramiko.PKey:
    """Open a private key file, with an error that says what is wrong with it.

    Raises:
        AuthError: missing, unreadable, encrypted without (or with a wrong) passphrase,
            or not a key paramiko can use.
    """
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
    except (ValueError, paramiko.SSHException, paramiko.pkey.UnknownKeyType):
        pass
    # A wrong passphrase surfaces as a confusing "not a private key": tell them apart.
    encrypted = False
    if secret is not None:
        try:
            paramiko.PKey.from_path(path)
        except TypeError:
            encrypted = True
        except (ValueError, paramiko.SSHException, paramiko.pkey.UnknownKeyType, OSError):
            pass
    if encrypted:
        raise AuthError(f"The passphrase for {path} is wrong.", "Check the passphrase.")
    raise AuthError(
        f"The key file {path} is not a private key paramiko can use (DSA keys are not).",
        "Use an Ed25519, ECDSA or RSA key.",
    )


def _candidate_keys(
    identity: str | None, hc: HostConfig, key_passphrase: str | None, use_defaults: bool
) -> tuple[list[tuple[str, paramiko.PKey]], paramiko.Agent | None]:
    if identity:
        return [(identity, load_key(identity, key_passphrase))], None
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
            keys.append((path, load_key(path, key_passphrase)))
        except AuthError as exc:
            # A configured key we cannot open is worth a note, not a stop: others may do.
            log.info("skipping %s: %s", path, exc.problem)
    return keys, agent


def authenticate(
    t: paramiko.Transport,
    hc: HostConfig,
    *,
    identity: str | None,
    login_password: str | None,
    key_passphrase: str | None,
    prompt: PromptAnswerer | None,
    jump: bool,
) -> None:
    """Log in on ``t`` as ``hc.user``, trying each way the server allows, in ssh's order.

    One picked identity, or the agent and the default keys; then a password; then
    keyboard-interactive questions answered by ``prompt`` (never on a jump host).

    Raises:
        AuthError: every way was refused, or there was none to try.
    """
    # One picked identity, or a password, means exactly that: an agent full of keys
    # would use up the server's MaxAuthTries before the right one is tried.
    use_defaults = identity is None and (login_password is None or jump)
    keys, agent = _candidate_keys(identity, hc, key_passphrase, use_defaults)
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
        if prompt is not None and not jump and _may(allowed, "keyboard-interactive"):
            tried.append("keyboard-interactive")
            _interactive(t, hc.user, prompt)
            if t.is_authenticated():
                return
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise AuthError(
            f"{who} closed the connection during login ({exc or 'no reason given'}).",
            "The server may allow few attempts (MaxAuthTries): pick one identity with "
            "--identity FILE.",
            "The server may allow few attempts (MaxAuthTries): choose one key in the Key file box.",
        ) from None
    finally:
        if agent is not None:
            agent.close()
    if not tried:
        offers = offered_methods(t, hc.user)
        if t.is_authenticated():  # the server lets this user in without credentials
            return
        raise AuthError(
            f"No way to log in to {who}: no key, no agent and no password"
            f"{f' (it accepts: {offers})' if offers else ''}.",
            "Give a key with --identity FILE, start ssh-agent, or give the password; "
            "login questions (one-time codes) are asked by the wizard or, on the command "
            "line, in a terminal.",
            "Choose a key in the Key file box, start ssh-agent, or type the Login password.",
        )
    offers = f"; it accepts: {', '.join(allowed)}" if allowed else ""
    raise AuthError(
        f"{who} refused the login (tried: {', '.join(tried)}{offers}).",
        "Check the user name and the password, or give the right key with --identity "
        "FILE (its public half must be in ~/.ssh/authorized_keys on the host).",
        "Check the user name and the password, or choose the right key in the Key file box "
        "(its public half must be in ~/.ssh/authorized_keys on the host).",
    )


def offered_methods(t: paramiko.Transport, user: str) -> str:
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
