"""Cancel on the Connect and Inspect pages stops the work and leaves the target clean.

Over the real sshd (as root, so the database login goes through a socat relay on the
target) to a private server: a check cancelled after the login, an inspection cancelled in
the middle of a long status sample, and one cancelled during the disk probe (a command that
only returns when its connection is closed). After each: the worker has ended, the page can
be used again, and no relay process or probe file is left on the target.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.access.doctor import Step
from app.practice.server import PrivateServer
from app.ui.hostworker import TaskHandle
from app.ui.pages.connect import ConnectPage
from app.ui.pages.inspect import InspectPage
from app.ui.wizard import MainWizard
from tests.hosts.sshd import SshServer
from tests.hosts.util import need_root
from tests.ui.wizards import open_wizard

# Generous: the machine is shared with other test sessions. Cancel itself takes well under 1 s.
ENDS_WITHIN_MS = 15_000


def relays_to(socket_path: Path) -> list[int]:
    """Relay processes (socat or the python3 relay) joined to ``socket_path``."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        argv = proc.info["cmdline"] or []
        if (
            argv
            and Path(argv[0]).name in ("socat", "python3")
            and any(str(socket_path) in a for a in argv)
        ):
            found.append(proc.info["pid"])
    return found


def probe_files(datadir: Path) -> list[Path]:
    return list(datadir.glob(".innotune-probe-*"))


def _connected_wizard(
    qtbot: QtBot, tmp_path: Path, sshd: SshServer, server: PrivateServer
) -> tuple[MainWizard, ConnectPage]:
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.own_known_hosts = str(tmp_path / "known_hosts")
    v = connect.view
    v.ssh.setChecked(True)
    v.host.setText(sshd.host)
    v.user.setText("root")
    v.port.setValue(sshd.port)
    v.identity.setText(str(sshd.client_key))
    v.instance.setText(str(server.socket_path))
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: connect.host_key_box is not None and connect.host_key_box.isVisible(),
        timeout=60_000,
    )
    qtbot.mouseClick(connect.trust_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    qtbot.waitUntil(connect.view.check.isEnabled)  # the worker's thread has ended too
    return wizard, connect


def _recorder(job: TaskHandle) -> list[str]:
    """Every progress text ``job`` sends from now on (queued signals: none is missed)."""
    said: list[str] = []
    job.say.connect(said.append)
    return said


def _ends(qtbot: QtBot, job: TaskHandle) -> float:
    started = time.monotonic()
    qtbot.waitUntil(lambda: not job.is_running(), timeout=ENDS_WITHIN_MS)
    return time.monotonic() - started


def test_cancel_a_check_after_the_login(
    qtbot: QtBot, tmp_path: Path, sshd: SshServer, private_server: PrivateServer
) -> None:
    need_root()
    wizard, connect = _connected_wizard(qtbot, tmp_path, sshd, private_server)
    v = connect.view
    assert relays_to(private_server.socket_path)  # the connection's own relay, while connected

    # Check again, and cancel the moment the login step is reported: the relay is running.
    cancelled: list[TaskHandle | None] = []
    shown = connect._on_check_progress

    def on_partial(step: object) -> None:
        shown(step)
        if isinstance(step, Step) and step.name == "login" and not cancelled:
            cancelled.append(connect.cancel_check())

    connect._on_check_progress = on_partial  # type: ignore[method-assign]
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(cancelled), timeout=120_000)
    job = cancelled[0]
    assert job is not None
    # The page is usable at once: not connected, Check enabled, Cancel not.
    assert wizard.state.connection is None and not connect.isComplete()
    assert v.check.isEnabled() and not v.cancel_check.isEnabled()
    assert "Cancelled" in v.message.text()
    _ends(qtbot, job)
    qtbot.waitUntil(lambda: not relays_to(private_server.socket_path), timeout=ENDS_WITHIN_MS)

    # And it can be tried again: the next check connects.
    connect._on_check_progress = shown  # type: ignore[method-assign]
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    wizard.done(0)
    qtbot.waitUntil(lambda: not relays_to(private_server.socket_path), timeout=ENDS_WITHIN_MS)


def test_cancel_an_inspection_in_its_status_sample_and_in_the_disk_probe(
    qtbot: QtBot, tmp_path: Path, sshd: SshServer, private_server: PrivateServer
) -> None:
    need_root()
    wizard, connect = _connected_wizard(qtbot, tmp_path, sshd, private_server)
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)

    # A ten-minute sample, cancelled while it runs: the worker ends at once and the
    # connection stays open for another try.
    inspect.sample.setValue(600)
    wizard.next()
    assert wizard.currentPage() is inspect
    job = inspect.task
    assert job is not None and inspect.cancel.isEnabled()
    said = _recorder(job)  # the status line moves on quickly; the signals are all kept
    qtbot.waitUntil(lambda: any("Sampling write rates" in t for t in said), timeout=120_000)
    qtbot.mouseClick(inspect.cancel, Qt.MouseButton.LeftButton)
    _ends(qtbot, job)
    qtbot.waitUntil(inspect.again.isEnabled, timeout=ENDS_WITHIN_MS)  # the page's turn
    assert "cancelled" in inspect.status.text()
    assert wizard.state.connected and wizard.state.facts is None
    assert inspect.again.isEnabled() and not inspect.cancel.isEnabled()
    assert not probe_files(private_server.datadir)

    # The disk probe is one long command on the target: cancelling it closes the connection
    # (after a grace period), and the probe's file is removed on the target.
    inspect.sample.setValue(0)
    inspect.probe.setChecked(True)
    qtbot.mouseClick(inspect.again, Qt.MouseButton.LeftButton)
    job = inspect.task
    assert job is not None
    said = _recorder(job)
    qtbot.waitUntil(lambda: any("Measuring synced writes" in t for t in said), timeout=120_000)
    qtbot.mouseClick(inspect.cancel, Qt.MouseButton.LeftButton)
    _ends(qtbot, job)
    qtbot.waitUntil(inspect.again.isEnabled, timeout=ENDS_WITHIN_MS)
    assert "cancelled" in inspect.status.text() and wizard.state.facts is None
    qtbot.waitUntil(lambda: not probe_files(private_server.datadir), timeout=60_000)
    if wizard.state.connection is None:  # the probe did not end within the grace period
        assert "Back" in inspect.status.text()
        qtbot.waitUntil(lambda: not relays_to(private_server.socket_path), timeout=ENDS_WITHIN_MS)
    wizard.done(0)
    qtbot.waitUntil(lambda: not relays_to(private_server.socket_path), timeout=ENDS_WITHIN_MS)


def test_closing_the_wizard_stops_a_running_inspection(
    qtbot: QtBot, tmp_path: Path, private_server: PrivateServer
) -> None:
    need_root()
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.view.local.setChecked(True)
    connect.view.instance.setText(str(private_server.socket_path))
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(connect.isComplete, timeout=120_000)
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(600)
    wizard.next()
    job = inspect.task
    assert job is not None
    said = _recorder(job)
    qtbot.waitUntil(lambda: any("Sampling write rates" in t for t in said), timeout=120_000)
    started = time.monotonic()
    wizard.done(0)  # waits for the worker: its thread must end before its window goes
    assert not job.is_running() and time.monotonic() - started < ENDS_WITHIN_MS / 1000
    assert wizard.state.connection is None
