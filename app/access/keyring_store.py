"""Passwords kept in the system keyring, only when the user opts in and only a secure one.

InnoTune never writes a password to its own files. A person who does not want to type the
SSH, sudo and database passwords each time may tick "Remember passwords in the system
keyring" on a saved profile; the passwords then go to the desktop's keyring (the Secret
Service of GNOME Keyring or KWallet, the macOS Keychain, the Windows Credential Manager),
which encrypts them with the login password.

Only those system keyrings are accepted. The ``keyring`` library can also be configured to
use a plain file (``keyrings.alt``), a backend that fails every call, the null backend, or
a chain of whatever happens to be installed; each of those is refused with the reason, so
a password never lands in plain text because of a setting the person did not notice.

Every call here can block: the Secret Service talks over D-Bus, and a locked keyring shows
an unlock prompt and waits for it. So every call refuses the GUI thread; the Connect page
runs them in a worker. Failures become :class:`KeyringFailed` naming the cause and the fix,
and a password never appears in an error text or a log line.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from typing import TypeVar

import keyring.errors
from keyring.backend import KeyringBackend

from app.access.doctor import Secrets
from app.domain.errors import InnoTuneError
from app.domain.redact import MASK, redact
from app.domain.threads import assert_not_gui_thread
from app.domain.words import sentence

log = logging.getLogger(__name__)

SERVICE = "InnoTune"

# The keyrings that keep secrets encrypted under the user's login, by backend class.
SYSTEM_KEYRINGS = {
    "keyring.backends.SecretService.Keyring": "the Secret Service (GNOME Keyring or KWallet)",
    "keyring.backends.libsecret.Keyring": "the Secret Service (through libsecret)",
    "keyring.backends.kwallet.DBusKeyring": "KWallet",
    "keyring.backends.kwallet.DBusKeyringKWallet4": "KWallet 4",
    "keyring.backends.macOS.Keyring": "the macOS Keychain",
    "keyring.backends.Windows.WinVaultKeyring": "the Windows Credential Manager",
}
# Configured backends that are not a keyring at all, and what they would do instead.
_NOT_A_KEYRING = {
    "keyring.backends.fail.Keyring": "it refuses every request",
    "keyring.backends.null.Keyring": "it switches the keyring off",
}
_CHAINER = "keyring.backends.chainer.ChainerBackend"

NO_KEYRING_FIX = (
    "No system keyring found: install and unlock GNOME Keyring (package gnome-keyring) or "
    "KWallet in your desktop session, then open InnoTune from that session."
)
_PLATFORM_KEYRING = {
    "darwin": "keyring.backends.macOS.Keyring",
    "win32": "keyring.backends.Windows.WinVaultKeyring",
}

T = TypeVar("T")


class KeyringUnavailable(InnoTuneError):
    """No secure system keyring can be used here; the reason says why."""


class KeyringFailed(InnoTuneError):
    """The system keyring was there but a call to it failed (locked, gone, refused)."""


@dataclass(frozen=True)
class KeyringStatus:
    """Which keyring InnoTune would use, or why none can be used.

    Attributes:
        backend: the keyring backend class (module.Class), empty when none was found.
        description: the keyring in words, for the person ("the Secret Service (…)").
        reason: why it cannot be used; empty when it can.
    """

    backend: str
    description: str
    reason: str = ""

    @property
    def usable(self) -> bool:
        """True when passwords may be stored in this keyring."""
        return not self.reason


@dataclass(frozen=True)
class Account:
    """Whose passwords: the target of a profile, as the keyring entries are named.

    Entries are shared by every profile of the same account (the same user on the same
    host), as in any password manager: the entry names say whose password each is.
    """

    kind: str  # "ssh", "local" or "practice"
    host: str = ""
    user: str = ""
    port: int = 0
    mysql_user: str = ""

    def where(self) -> str:
        """The host part of the entry names: ``user@host:port``, or ``local``."""
        if self.kind != "ssh":
            return "local"
        host = self.host.strip().lower()
        host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        user = f"{self.user.strip()}@" if self.user.strip() else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{host}{port}"

    def entries(self) -> dict[str, str]:
        """The keyring entry name of each secret this account can have, by Secrets field.

        The practice server needs no password, so it has none; this computer has no SSH
        login.
        """
        if self.kind == "practice":
            return {}
        where = self.where()
        names = {
            "sudo_password": f"sudo:{where}",
            "mysql_password": f"mysql:{self.mysql_user.strip() or 'root'}@{where}",
        }
        if self.kind == "ssh":
            names = {"login_password": f"ssh:{where}", **names}
        return names


def _backend_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _load_class(name: str) -> type[KeyringBackend]:
    module_name, _, class_name = name.rpartition(".")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, KeyringBackend)):
        raise TypeError(f"{name} is not a keyring backend")
    return cls


def platform_backend() -> type[KeyringBackend]:
    """This platform's system keyring backend, loaded but not asked anything (no D-Bus call).

    The self-test uses it to prove a frozen build carries the backend and its libraries.
    """
    return _load_class(
        _PLATFORM_KEYRING.get(sys.platform, "keyring.backends.SecretService.Keyring")
    )


def _priority(cls: type[KeyringBackend]) -> float:
    # A backend says it is unusable here by raising from its priority (keyring's own rule);
    # the Secret Service's check asks D-Bus whether a provider runs or can be started.
    return float(cls.priority)


def _configured() -> tuple[str, str] | None:
    """The backend named by PYTHON_KEYRING_BACKEND or keyringrc.cfg, and where it is named."""
    name = os.environ.get("PYTHON_KEYRING_BACKEND", "").strip()
    if name:
        return name, "the PYTHON_KEYRING_BACKEND environment variable"
    from keyring.util import platform_

    path = platform_.config_root() / "keyringrc.cfg"
    config = configparser.RawConfigParser()
    try:
        config.read(path, encoding="utf-8")
        name = config.get("backend", "default-keyring", fallback="").strip()
    except (OSError, configparser.Error):
        return None
    return (name, str(path)) if name else None


def _judge(name: str) -> KeyringStatus:
    """Whether the system keyring ``name`` (module.Class) can be used here, and why not."""
    description = SYSTEM_KEYRINGS[name]
    try:
        priority = _priority(_load_class(name))
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable here", with the reason
        return KeyringStatus(
            name, description, sentence(f"{description} is not available here: {exc}")
        )
    if priority < 1:
        return KeyringStatus(name, description, f"{description} is not recommended here.")
    return KeyringStatus(name, description)


def probe_keyring() -> KeyringStatus:
    """Find the system keyring to use, or say why none can be used. Blocks (D-Bus).

    A backend configured for the ``keyring`` library (environment or keyringrc.cfg) is
    honoured when it is a system keyring and refused otherwise; without one, the best
    available system keyring is chosen. Plain-file, failing, null and chained backends are
    never used.
    """
    assert_not_gui_thread("Looking for the system keyring")
    configured = _configured()
    if configured is not None and configured[0] != _CHAINER:
        name, where = configured
        if name in SYSTEM_KEYRINGS:
            return _judge(name)
        why = _NOT_A_KEYRING.get(
            name, "it is not a system keyring and may keep passwords in a file"
        )
        return KeyringStatus(
            name,
            name,
            f"The keyring library is set to use {name} (in {where}), and {why}; InnoTune "
            "stores passwords only in a system keyring. " + NO_KEYRING_FIX,
        )
    found = [_judge(name) for name in SYSTEM_KEYRINGS]
    usable = [s for s in found if s.usable]
    if usable:
        return usable[0]  # the table lists the Secret Service first: the Linux desktop's
    # Say why this platform's own keyring is missing; the other platforms' are noise.
    own = _PLATFORM_KEYRING.get(sys.platform, "keyring.backends.SecretService.Keyring")
    reason = next(s.reason for s in found if s.backend == own)
    return KeyringStatus("", "", f"{NO_KEYRING_FIX} ({reason})")


class KeyringStore:
    """Store, look up and delete an account's passwords in the system keyring.

    Every method blocks and refuses the GUI thread. Use :meth:`open` to get one: it refuses
    anything but a secure system keyring.
    """

    def __init__(self, status: KeyringStatus) -> None:
        if not status.usable:
            raise KeyringUnavailable(status.reason)
        self.status = status
        self._backend = _load_class(status.backend)()

    @classmethod
    def open(cls) -> KeyringStore:
        """The store on the system keyring found by :func:`probe_keyring`.

        Raises:
            KeyringUnavailable: no secure system keyring is available, with the reason.
        """
        return cls(probe_keyring())

    def store(self, account: Account, secrets: Secrets) -> None:
        """Keep the account's passwords; a password left empty is removed from the keyring."""
        for field, entry in account.entries().items():
            value = getattr(secrets, field)
            if value:
                store = partial(self._backend.set_password, SERVICE, entry, value)
                self._call(f"storing {entry}", store, value)
            else:
                self._delete_entry(entry)

    def lookup(self, account: Account) -> Secrets:
        """The account's passwords found in the keyring (None where there is none)."""
        found: dict[str, str | None] = {}
        for field, entry in account.entries().items():
            read = partial(self._backend.get_password, SERVICE, entry)
            found[field] = self._call(f"reading {entry}", read)
        return Secrets(**{f.name: found.get(f.name) for f in fields(Secrets)})

    def delete(self, account: Account) -> None:
        """Remove the account's passwords from the keyring (absent ones are fine)."""
        for entry in account.entries().values():
            self._delete_entry(entry)

    def _delete_entry(self, entry: str) -> None:
        def delete() -> None:
            try:
                self._backend.delete_password(SERVICE, entry)
            except keyring.errors.PasswordDeleteError:
                pass  # nothing stored under this name: already as wanted

        self._call(f"removing {entry}", delete)

    def _call(self, doing: str, call: Callable[[], T], *secrets: str) -> T:
        """Run one keyring call, turning any failure into :class:`KeyringFailed`."""
        assert_not_gui_thread("The system keyring")
        where = self.status.description
        try:
            return call()
        except keyring.errors.KeyringLocked as exc:
            _close_leaked_connection(exc)
            log.warning("keyring: %s: %s is locked", doing, where)
            raise KeyringFailed(
                f"{where[:1].upper()}{where[1:]} is locked and was not unlocked while {doing} "
                "(the unlock prompt was dismissed or could not be shown).",
                "Unlock it (log in to the desktop session, or open Passwords and Keys or "
                "KWallet Manager) and try again, or untick “Remember passwords” and type them.",
            ) from None
        except Exception as exc:  # noqa: BLE001 - D-Bus gone, service refused, …: all reported
            _close_leaked_connection(exc)
            detail = _safe_text(exc, secrets)
            log.warning("keyring: %s failed: %s", doing, detail)
            raise KeyringFailed(
                sentence(f"The system keyring failed while {doing}: {detail}"),
                "Check that the keyring service (GNOME Keyring or KWallet) still runs in your "
                "desktop session, then try again; or untick “Remember passwords” and type them.",
            ) from None


def _close_leaked_connection(exc: BaseException) -> None:
    """Close the D-Bus connection a failed call leaves open.

    keyring's Secret Service backend opens a connection per call and closes it only when
    the call succeeds; on a failure (a locked keyring) it stays referenced from a cycle
    until some later garbage collection. It is found in the failed call's frames.
    """
    tb = exc.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            candidates: tuple[object, ...] = (value, getattr(value, "connection", None))
            for candidate in candidates:
                close = getattr(candidate, "close", None)
                if type(candidate).__name__ == "DBusConnection" and callable(close):
                    with contextlib.suppress(Exception):
                        close()
        tb = tb.tb_next


def _safe_text(exc: BaseException, secrets: tuple[str, ...]) -> str:
    """``exc`` in one short line, without any of ``secrets`` or a password-shaped value."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return redact(text)[:300]
