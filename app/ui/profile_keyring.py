"""The Connect page's "Remember passwords in the system keyring" box, and what it does.

Off by default, per saved profile. Ticked when a profile is saved, the SSH, sudo and
database passwords typed in go to the system keyring (never to InnoTune's settings file,
which keeps only the opt-in flag); loading the profile reads them back; unticking it, or
removing the profile, deletes them from the keyring. Without a secure system keyring the
box is disabled and its tooltip says why.

Every keyring call runs detached from the GUI thread (app/ui/detached.py): over D-Bus it
can wait on an unlock prompt for as long as the person leaves it open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, QSignalBlocker, Slot
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit

from app.access.doctor import Secrets
from app.access.keyring_store import Account, KeyringStatus, KeyringStore, probe_keyring
from app.domain.errors import InnoTuneError
from app.ui.detached import run_detached

if TYPE_CHECKING:
    from app.ui.pages.connect_view import ConnectView

LOOKING = "Looking for a system keyring…"
FLAG = "keyring"  # the profile's opt-in, the only keyring-related value in the settings file


class ProfileKeyring(QObject):
    """Behaviour of the remember box: probe, store on save, read on load, delete on untick."""

    def __init__(self, parent: QObject, view: ConnectView, settings: QSettings) -> None:
        super().__init__(parent)
        self.view = view
        self.box: QCheckBox = view.remember
        self.settings = settings
        self.status: KeyringStatus | None = None
        self.profile: str | None = None  # the profile whose passwords the form holds
        self.pending = 0  # keyring calls in flight
        self.box.setChecked(False)
        self.box.setEnabled(False)
        self.box.setToolTip(LOOKING)
        self.box.toggled.connect(self._on_box_toggled)
        self._run(probe_keyring, self._on_probe_succeeded)

    # -- the keyring's state ---------------------------------------------------------------
    @property
    def usable(self) -> bool:
        """True once a secure system keyring has been found."""
        return self.status is not None and self.status.usable

    def _run(self, work: Callable[[], object], then: Callable[[object], None]) -> None:
        """Run ``work`` detached; ``then(result)`` runs on the GUI thread, while we exist."""
        self.pending += 1
        run_detached(
            work, self, lambda result: self._on_call_succeeded(then, result), self._on_call_failed
        )

    def _on_call_succeeded(self, then: Callable[[object], None], result: object) -> None:
        self.pending -= 1
        then(result)

    def _on_probe_succeeded(self, status: object) -> None:
        assert isinstance(status, KeyringStatus)
        self.status = status
        self.box.setEnabled(status.usable)
        if status.usable:
            self.box.setToolTip(
                f"Keep this profile's SSH, sudo and database passwords in {status.description}, "
                "encrypted with your login. Unticked, no password is saved anywhere."
            )
        else:
            with QSignalBlocker(self.box):
                self.box.setChecked(False)
            self.box.setToolTip(status.reason)
        if self.profile is not None:  # a profile was loaded while we were looking
            self.profile_loaded(self.profile)

    @Slot(object)
    def _on_call_failed(self, exc: object) -> None:
        self.pending -= 1
        if self.status is None:  # the probe itself failed: treat as no keyring
            reason = f"The system keyring could not be checked: {exc}"
            self.status = KeyringStatus("", "", reason)
            self.box.setToolTip(reason)
            return
        if isinstance(exc, InnoTuneError):
            self._say(f"<b>{exc.problem}</b> {exc.window_fix}")
        else:
            self._say(f"<b>The system keyring failed:</b> {exc}")

    def _say(self, text: str) -> None:
        label: QLabel = self.view.message
        label.setText(text)

    # -- profiles ----------------------------------------------------------------------------
    def opted_in(self, name: str) -> bool:
        """True when the profile ``name`` keeps its passwords in the keyring."""
        return str(self.settings.value(f"profiles/{name}/{FLAG}", "false")) == "true"

    def _account(self, name: str) -> Account:
        def value(key: str) -> str:
            return str(self.settings.value(f"profiles/{name}/{key}", "") or "")

        port = value("port")
        return Account(
            kind=value("kind"),
            host=value("host"),
            user=value("user"),
            port=int(port) if port.isdigit() else 0,
            mysql_user=value("mysql_user"),
        )

    def save_prompt(self) -> str:
        """The question of the Save profile dialog, true to what will be saved."""
        if self.box.isChecked() and self.usable:
            return "Profile name (passwords go to the system keyring):"
        return "Profile name (passwords are not saved):"

    def profile_saved(self, name: str) -> None:
        """After the page saved ``name``: store or drop its passwords as the box says."""
        was_in = self.opted_in(name)
        remember = self.box.isChecked() and self.usable
        self.settings.setValue(f"profiles/{name}/{FLAG}", "true" if remember else "false")
        self.settings.sync()
        self.profile = name
        account, status = self._account(name), self.status
        if remember and status is not None:
            v = self.view
            secrets = Secrets(
                login_password=_text(v.login_password),
                sudo_password=_text(v.sudo_password),
                mysql_password=_text(v.mysql_password),
            )
            self._run(
                lambda: KeyringStore(status).store(account, secrets),
                lambda _r: self._say(f"Saved {name}; its passwords are in {status.description}."),
            )
        elif was_in and status is not None and status.usable:
            self._forget(name, account, status)

    def profile_loaded(self, name: str) -> None:
        """After the page filled the form from ``name``: tick the box, read the passwords."""
        self.profile = name
        wanted = self.opted_in(name)
        with QSignalBlocker(self.box):
            self.box.setChecked(wanted and self.usable)
        if not wanted or self.status is None:
            return  # not opted in, or still looking: the probe's answer loads it again
        status = self.status
        if not status.usable:
            self._say(
                f"<b>{name} keeps its passwords in the system keyring, which is not available "
                f"here.</b> {status.reason} Type the passwords instead."
            )
            return
        account = self._account(name)

        def fill(found: object) -> None:
            if self.profile != name or not self.opted_in(name) or not isinstance(found, Secrets):
                return  # another profile was chosen, or the box unticked, meanwhile
            v = self.view
            v.login_password.setText(found.login_password or "")
            v.sudo_password.setText(found.sudo_password or "")
            v.mysql_password.setText(found.mysql_password or "")
            self._say(f"Read the passwords of {name} from {status.description}.")

        self._run(lambda: KeyringStore(status).lookup(account), fill)

    def profile_removed(self, name: str) -> None:
        """Before the page removes ``name``: delete its passwords from the keyring."""
        if self.opted_in(name) and self.status is not None and self.status.usable:
            self._forget(name, self._account(name), self.status)
        if self.profile == name:
            self.profile = None

    def _forget(self, name: str, account: Account, status: KeyringStatus) -> None:
        self._run(
            lambda: KeyringStore(status).delete(account),
            lambda _r: self._say(f"Removed the passwords of {name} from {status.description}."),
        )

    @Slot(bool)
    def _on_box_toggled(self, checked: bool) -> None:
        name = self.profile
        if checked or name is None or not self.opted_in(name):
            if checked and name is not None and not self.opted_in(name):
                self._say(f"Press Save profile to keep the passwords of {name} in the keyring.")
            return
        # Unticked on a profile that keeps its passwords: delete them now.
        self.settings.setValue(f"profiles/{name}/{FLAG}", "false")
        self.settings.sync()
        if self.status is not None and self.status.usable:
            self._forget(name, self._account(name), self.status)


def _text(edit: QLineEdit) -> str | None:
    return edit.text() or None
