"""The Connect page, driven like a person would, against real hosts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from app.practice.practice import PracticeServer
from app.ui.pages.connect import ConnectPage
from app.ui.state import WizardState
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.sshd import SshServer


def _page(qtbot: QtBot, tmp_path: Path) -> ConnectPage:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    page = ConnectPage(WizardState(), settings)
    page.own_known_hosts = str(tmp_path / "known_hosts")
    page.practice_dir = tmp_path / "practice"
    qtbot.addWidget(page)
    page.show()
    return page


def _wait_job(qtbot: QtBot, page: ConnectPage) -> None:
    assert page.task is not None
    qtbot.waitUntil(
        lambda: (
            page.task is not None and not page.task.is_running() and page.view.check.isEnabled()
        ),
        timeout=120_000,
    )


def test_practice_server_is_offered_first_and_connects(qtbot: QtBot, tmp_path: Path) -> None:
    page = _page(qtbot, tmp_path)
    assert page.view.practice.isChecked()  # the default
    try:
        qtbot.mouseClick(page.view.check, Qt.MouseButton.LeftButton)
        _wait_job(qtbot, page)
        assert page.state.connected, page.view.message.text()
        assert page.isComplete()
        rows = [page.view.steps.topLevelItem(i) for i in range(page.view.steps.topLevelItemCount())]
        assert [r.text(1) for r in rows if r is not None].count("OK") >= 7
    finally:
        if page.state.connection is not None:
            page.state.connection.close()
        PracticeServer(tmp_path / "practice").stop()


def test_ssh_with_new_host_key_accepted_in_the_dialog(
    qtbot: QtBot, tmp_path: Path, sshd: SshServer, debian_mariadb: DebianMariaDB
) -> None:
    page = _page(qtbot, tmp_path)
    v = page.view
    v.ssh.setChecked(True)
    v.host.setText(sshd.host)
    v.user.setText("root")
    v.port.setValue(sshd.port)
    v.identity.setText(str(sshd.client_key))
    v.instance.setText(debian_mariadb.socket)  # other tests' servers may be running too
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.host_key_box is not None and page.host_key_box.isVisible(), timeout=60_000
    )
    box = page.host_key_box
    assert box is not None
    assert sshd.host_key_fingerprint() in box.informativeText()
    assert "ED25519" in box.informativeText()
    assert not page.isComplete()
    qtbot.mouseClick(page.trust_button, Qt.MouseButton.LeftButton)
    _wait_job(qtbot, page)
    assert page.state.connected, page.view.message.text()
    assert page.isComplete()
    stored = Path(page.own_known_hosts or "").read_text()
    assert f"[{sshd.host}]:{sshd.port}" in stored
    page.state.connection.close()  # type: ignore[union-attr]


def test_profiles_never_store_passwords(qtbot: QtBot, tmp_path: Path) -> None:
    page = _page(qtbot, tmp_path)
    v = page.view
    v.ssh.setChecked(True)
    v.host.setText("db1.example.com")
    v.user.setText("admin")
    v.login_password.setText("canary-login-PW")
    v.sudo_password.setText("canary-sudo-PW")
    v.mysql_password.setText("canary-db-PW")
    page.profiles.save("db1")
    page.settings.sync()
    text = (tmp_path / "settings.ini").read_text()
    assert "db1.example.com" in text
    assert "canary" not in text
    v.host.setText("")
    page.profiles.load("db1")
    assert v.host.text() == "db1.example.com" and v.ssh.isChecked()


def test_bad_host_gets_a_clear_message(qtbot: QtBot, tmp_path: Path) -> None:
    page = _page(qtbot, tmp_path)
    page.view.ssh.setChecked(True)
    page.view.host.setText("db1; rm -rf /")
    qtbot.mouseClick(page.view.check, Qt.MouseButton.LeftButton)
    assert "not a valid host name" in page.view.message.text()
    assert page.task is None
