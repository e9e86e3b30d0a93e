"""The Connect page's "Remember passwords in the system keyring" box, against a real keyring.

GNOME Keyring runs on a private D-Bus session bus (tests/hosts/secret_service.py). The GUI
thread is registered for these tests, so a keyring call made on it would fail them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.access.doctor import Secrets
from app.access.keyring_store import Account, KeyringStore
from app.domain.threads import register_gui_thread, unregister_gui_thread
from app.ui.pages.connect import ConnectPage
from app.ui.state import WizardState
from tests.hosts.secret_service import SecretService, secret_service

PASSWORDS = {
    "login_password": "canary-kr-login-4b1",
    "sudo_password": "canary-kr-sudo-8e0",
    "mysql_password": "canary-kr-db-2d7",
}
ACCOUNT = Account(kind="ssh", host="db1.example.com", user="admin", port=2222, mysql_user="tuner")


@pytest.fixture
def gui_thread() -> Iterator[None]:
    register_gui_thread()
    try:
        yield
    finally:
        unregister_gui_thread()


@pytest.fixture
def keyring_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no keyringrc.cfg


def _page(qtbot: QtBot, tmp_path: Path) -> ConnectPage:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    page = ConnectPage(WizardState(), settings)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.profiles.keyring.status is not None, timeout=60_000)
    return page


def _settled(qtbot: QtBot, page: ConnectPage) -> None:
    qtbot.waitUntil(lambda: page.profiles.keyring.pending == 0, timeout=60_000)


def _in_worker(call: Callable[[], object]) -> object:
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(call()))
    worker.start()
    worker.join(120)
    return box[0]


def test_disabled_with_the_reason_when_there_is_no_keyring(
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    keyring_env: None,
    gui_thread: None,
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/innotune-no-bus")
    page = _page(qtbot, tmp_path)
    box = page.view.remember
    assert not box.isEnabled() and not box.isChecked()
    assert box.toolTip().startswith("No system keyring found: install and unlock GNOME Keyring")
    assert "KWallet" in box.toolTip()
    v = page.view
    v.ssh.setChecked(True)
    v.host.setText("db1.example.com")
    v.login_password.setText(PASSWORDS["login_password"])
    page.profiles.save("db1")
    _settled(qtbot, page)
    text = (tmp_path / "settings.ini").read_text()
    assert "keyring=false" in text and "canary" not in text


def test_passwords_come_back_from_the_keyring_and_go_when_unticked(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyring_env: None
) -> None:
    with secret_service(tmp_path / "keyring") as service:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", service.address)
        register_gui_thread()
        try:
            _remember_reload_forget(qtbot, tmp_path, service)
        finally:
            unregister_gui_thread()


def _remember_reload_forget(qtbot: QtBot, tmp_path: Path, service: SecretService) -> None:
    page = _page(qtbot, tmp_path)
    v = page.view
    assert v.remember.isEnabled() and not v.remember.isChecked()  # opt-in: off by default
    assert "Secret Service" in v.remember.toolTip()
    v.ssh.setChecked(True)
    v.host.setText("db1.example.com")
    v.user.setText("admin")
    v.port.setValue(2222)
    v.mysql_user.setText("tuner")
    v.login_password.setText(PASSWORDS["login_password"])
    v.sudo_password.setText(PASSWORDS["sudo_password"])
    v.mysql_password.setText(PASSWORDS["mysql_password"])
    v.remember.click()
    assert page.profiles.keyring.save_prompt().endswith("(passwords go to the system keyring):")
    page.profiles.save("db1")
    _settled(qtbot, page)
    assert "its passwords are in the Secret Service" in v.message.text()
    settings_file = tmp_path / "settings.ini"
    assert "keyring=true" in settings_file.read_text()
    assert "canary" not in settings_file.read_text()
    stored = _in_worker(lambda: KeyringStore.open().lookup(ACCOUNT))
    assert stored == Secrets(**PASSWORDS)

    # The wizard again, later: a new page on the same settings file, the profile chosen.
    page.close()
    page = _page(qtbot, tmp_path)
    v = page.view
    assert not v.remember.isChecked() and v.login_password.text() == ""
    v.profiles.setCurrentIndex(v.profiles.findText("db1"))
    v.profiles.activated.emit(v.profiles.currentIndex())
    _settled(qtbot, page)
    assert v.remember.isChecked()
    assert v.host.text() == "db1.example.com" and v.user.text() == "admin"
    assert v.login_password.text() == PASSWORDS["login_password"]
    assert v.sudo_password.text() == PASSWORDS["sudo_password"]
    assert v.mysql_password.text() == PASSWORDS["mysql_password"]
    assert "Read the passwords of db1" in v.message.text()
    assert page.build_secrets().sudo_password == PASSWORDS["sudo_password"]

    # Unticking deletes them from the keyring at once.
    v.remember.click()
    _settled(qtbot, page)
    assert "Removed the passwords of db1" in v.message.text()
    assert _in_worker(lambda: KeyringStore.open().lookup(ACCOUNT)) == Secrets()
    text = settings_file.read_text()
    assert "keyring=false" in text and "canary" not in text

    # A keyring gone away (the session ended) is a message, not a crash.
    v.remember.click()
    page.profiles.save("db1")
    _settled(qtbot, page)
    service.stop()
    page.profiles.load("db1")
    _settled(qtbot, page)
    assert "The system keyring failed while reading" in v.message.text()
    assert "canary" not in v.message.text()
