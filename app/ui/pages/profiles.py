"""Saved targets: the Connect form stored under a name, never with a password.

Profiles live in the settings file under ``profiles/<name>/``; passwords go only to the
system keyring, and only when the person opts in (:mod:`app.ui.profile_keyring`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QInputDialog, QWidget

from app.ui.pages.connect_view import ConnectView
from app.ui.profile_keyring import ProfileKeyring

PROFILE_KEYS = ("kind", "host", "user", "port", "identity", "mysql_user", "instance")


class Profiles(QObject):
    """The profile row's behaviour: list, save, load and remove; the keyring follows."""

    def __init__(self, page: QWidget, view: ConnectView, settings: QSettings) -> None:
        super().__init__(page)
        self.page = page  # the dialogs' parent
        self.view = view
        self._settings = _owned(settings, self)
        view.save_profile.clicked.connect(self._on_save_profile_clicked)
        view.delete_profile.clicked.connect(self._on_delete_profile_clicked)
        view.profiles.activated.connect(self._on_profile_activated)
        self.load_names()
        self.keyring = ProfileKeyring(page, view, settings)

    @property
    def settings(self) -> QSettings:
        """Where the profiles are kept (the keyring's opt-in flags too)."""
        return self._settings

    @settings.setter
    def settings(self, settings: QSettings) -> None:
        self._settings = self.keyring.settings = _owned(settings, self)

    def load_names(self) -> None:
        """Fill the profile list from the settings."""
        self.settings.beginGroup("profiles")
        names = sorted(self.settings.childGroups())
        self.settings.endGroup()
        self.view.profiles.clear()
        self.view.profiles.addItems(names)

    def values(self) -> dict[str, str]:
        """The current form as a profile: no password field is ever included."""
        v = self.view
        return {
            "kind": v.kind(),
            "host": v.host.text().strip(),
            "user": v.user.text().strip(),
            "port": str(v.port.value()),
            "identity": v.identity.text().strip(),
            "mysql_user": v.mysql_user.text().strip(),
            "instance": v.instance.text().strip(),
        }

    def save(self, name: str) -> None:
        """Store the form under ``name``; passwords only in the system keyring, if opted in."""
        for key, value in self.values().items():
            self.settings.setValue(f"profiles/{name}/{key}", value)
        self.settings.sync()
        self.load_names()
        self.view.profiles.setCurrentText(name)
        self.keyring.profile_saved(name)

    def load(self, name: str) -> None:
        """Fill the form from a saved profile."""
        self.fill_form(
            {k: str(self.settings.value(f"profiles/{name}/{k}", "")) for k in PROFILE_KEYS}
        )
        self.keyring.profile_loaded(name)

    def fill_form(self, profile: dict[str, str]) -> None:
        """Fill the form from profile values (:meth:`values`, never a password)."""
        values = {k: str(profile.get(k, "")) for k in PROFILE_KEYS}
        v = self.view
        kinds = {"practice": v.practice, "local": v.local, "ssh": v.ssh}
        kinds.get(values["kind"], v.practice).setChecked(True)
        v.host.setText(values["host"])
        v.user.setText(values["user"])
        v.port.setValue(int(values["port"] or 0))
        v.identity.setText(values["identity"])
        v.mysql_user.setText(values["mysql_user"])
        v.instance.setText(values["instance"])

    def _on_save_profile_clicked(self) -> None:
        name, ok = QInputDialog.getText(self.page, "Save profile", self.keyring.save_prompt())
        if ok and name.strip():
            self.save(name.strip().replace("/", "-"))

    def _on_delete_profile_clicked(self) -> None:
        name = self.view.profiles.currentText()
        if name:
            self.keyring.profile_removed(name)
            self.settings.remove(f"profiles/{name}")
            self.load_names()

    def _on_profile_activated(self, _index: int) -> None:
        self.load(self.view.profiles.currentText())


def _owned(settings: QSettings, owner: QObject) -> QSettings:
    """``settings`` as a child of ``owner`` when it has no parent.

    It then dies with the page, on the GUI thread, never by the garbage collector
    (app/ui/collector.py).
    """
    if settings.parent() is None:
        settings.setParent(owner)
    return settings
