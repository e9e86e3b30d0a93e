"""The Connect page, driven like a person would, against real hosts."""

from __future__ import annotations

import re
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
    # The steps table words the way out for the window: the dialog, never a flag.
    rows = [v.steps.topLevelItem(i) for i in range(v.steps.topLevelItemCount())]
    texts = [r.text(2) + r.toolTip(2) for r in rows if r is not None] + [v.message.text()]
    assert not [t for t in texts if re.search(r"(^|\s)--[a-z]", t)], texts
    assert any("trust the key in the dialog" in t for t in texts), texts
    # Another port typed while the question is open: the question was about the old server.
    v.port.setText(str(sshd.port + 1))
    assert not box.isVisible() and page.host_key_box is None
    assert "press Check connection" in v.message.text() and not page.isComplete()
    v.port.setValue(sshd.port)
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.host_key_box is not None and page.host_key_box.isVisible(), timeout=60_000
    )
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


def test_a_passed_check_is_forgotten_when_the_target_changes(qtbot: QtBot, tmp_path: Path) -> None:
    """A check belongs to what it checked: any change of kind, host, port, user, key or
    instance clears it, so Next never inspects the server checked before."""
    page = _page(qtbot, tmp_path)
    v = page.view
    try:

        def check_passes() -> None:
            qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
            _wait_job(qtbot, page)
            assert page.isComplete(), v.message.text()
            assert "Every step passed" in v.message.text()
            rows = [v.steps.topLevelItem(i) for i in range(v.steps.topLevelItemCount())]
            details = [r.text(2) for r in rows if r is not None]
            # "1 server instance running", "4 server instances running"; never "instance(s)"
            assert not [d for d in details if "(s)" in d or ".." in d.replace("...", "")]
            found = [d for d in details if "server instance" in d]
            n = int(found[0].split()[0])
            assert found[0].startswith(f"{n} server instance{'' if n == 1 else 's'} running")

        def forgotten(what: str) -> None:
            assert not page.isComplete(), what
            assert not page.state.connected, what
            assert "Every step passed" not in v.message.text(), what
            assert "press Check connection" in v.message.text(), what
            assert v.steps.topLevelItemCount() == 0, what

        check_passes()
        v.ssh.setChecked(True)  # Host still empty: the practice server must not stay checked
        forgotten("kind")
        v.practice.setChecked(True)
        forgotten("kind back")  # a new check is needed, even for the same server
        # The practice kind ignores the SSH fields, so the check passes again after each.
        for field, text in (
            (v.host, "db1.example.com"),
            (v.user, "admin"),
            (v.port, "2222"),
            (v.identity, str(tmp_path / "key")),
            (v.mysql_user, "someone"),
        ):
            check_passes()
            field.setText(text)
            forgotten(field.accessibleName())
            field.setText("")
        check_passes()
        v.instance.setText("/run/other.sock")
        forgotten("instance")
    finally:
        page.state.drop_host()
        PracticeServer(tmp_path / "practice").stop()


def test_a_port_with_letters_is_refused_and_an_empty_one_is_the_default(
    qtbot: QtBot, tmp_path: Path
) -> None:
    page = _page(qtbot, tmp_path)
    v = page.view
    v.ssh.setChecked(True)
    v.host.setText("db1.example.com")
    v.port.setFocus()
    qtbot.keyClicks(v.port, "2x2y5")  # typed, as a person would
    assert v.port.text() == "2x2y5"  # kept as typed, never silently 225
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    assert page.task is None
    assert '"2x2y5" is not a number' in v.message.text()
    assert "1 to 65535" in v.message.text()
    v.port.setText("70000")
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    assert page.task is None and "out of range" in v.message.text()
    v.port.setText("225")
    assert page.build_target().port == 225
    v.port.clear()  # cleared: the default, never the value typed before
    assert page.build_target().port is None


def test_closing_the_window_stops_the_practice_server_it_started_and_says_so_first(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from tests.ui.wizards import open_wizard

    wizard, page = open_wizard(qtbot, tmp_path)
    page.own_known_hosts = str(tmp_path / "known_hosts")
    page.practice_dir = tmp_path / "practice"
    practice = PracticeServer(tmp_path / "practice")
    try:
        assert page.view.practice.isChecked()
        assert "stops it when you close InnoTune" in page.view.practice_note.text()
        qtbot.mouseClick(page.view.check, Qt.MouseButton.LeftButton)
        _wait_job(qtbot, page)
        assert page.state.connected, page.view.message.text()
        pid = practice.server.running_pid()
        assert pid is not None
        wizard.close()
        assert practice.server.running_pid() is None
        assert not Path(f"/proc/{pid}").exists()  # gone, not still ending
    finally:
        practice.stop()


def test_a_practice_server_started_elsewhere_stays_when_the_window_closes(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from tests.ui.wizards import open_wizard

    practice = PracticeServer(tmp_path / "practice")
    practice.start()  # as innotune practice start does
    try:
        wizard, page = open_wizard(qtbot, tmp_path)
        page.own_known_hosts = str(tmp_path / "known_hosts")
        page.practice_dir = tmp_path / "practice"
        qtbot.mouseClick(page.view.check, Qt.MouseButton.LeftButton)
        _wait_job(qtbot, page)
        assert page.state.connected, page.view.message.text()
        wizard.close()
        assert practice.server.running_pid() is not None
    finally:
        practice.stop()
