"""Connect to a server, then the Inspect page shows its facts; several servers → a chooser."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QGroupBox, QLabel
from pytestqt.qtbot import QtBot

from app.practice.server import PrivateServer
from app.ui.pages.connect import ConnectPage
from app.ui.pages.inspect import InspectPage
from tests.ui.wizards import open_wizard


def _wait(qtbot: QtBot, page: ConnectPage) -> None:
    qtbot.waitUntil(
        lambda: (
            page.task is not None and not page.task.is_running() and page.view.check.isEnabled()
        ),
        timeout=120_000,
    )


def _nothing_drawn_over(qtbot: QtBot, page: ConnectPage) -> None:
    """The step list, the chooser and the message each have their own room, whole.

    At the default window size a long answer (several servers) squeezed the page until the
    chooser was drawn over the step list; the page scrolls instead.
    """
    v = page.view
    qtbot.waitUntil(lambda: v.message.isVisible() and v.message.width() > 0)
    widgets = [v.steps, v.chooser_label, v.chooser, v.message]

    def overlaps() -> list[tuple[str, str]]:
        rects = {w: QRect(w.mapTo(v, QPoint(0, 0)), w.size()) for w in widgets}
        return [
            (a.objectName(), b.objectName())
            for i, a in enumerate(widgets)
            for b in widgets[i + 1 :]
            if rects[a].intersects(rects[b])
        ]

    # Qt lays the page out again on its next event-loop turns after the answer grows it (the
    # chooser and the message appear at once); what is checked is the layout it settles on.
    qtbot.waitUntil(lambda: not overlaps(), timeout=5_000)
    assert v.steps.height() >= v.steps.minimumHeight()
    assert v.message.height() >= v.message.heightForWidth(v.message.width())
    # Scrolled into sight, and never wider than the window.
    qtbot.waitUntil(
        lambda: not v.chooser.visibleRegion().isEmpty() and not v.message.visibleRegion().isEmpty()
    )
    assert v.width() <= page.scroll_area.viewport().width()
    # The message names the count and where to choose, without a third copy of the list.
    assert "server instances run here" in v.message.text()
    assert v.message.text().count("mariadbd") == 0
    # A skipped step names the failed one as the list does, not by its internal key.
    skipped = [v.steps.topLevelItem(i).text(2) for i in range(v.steps.topLevelItemCount())]
    assert "not checked: an earlier step failed (Which server)" in skipped
    shots = os.environ.get("INNOTUNE_SCREENSHOTS")
    if shots:
        page.window().grab().save(str(Path(shots) / "connect-choose-server.png"))


def test_choose_among_servers_then_inspect(
    qtbot: QtBot, tmp_path: Path, private_servers: list[PrivateServer]
) -> None:
    a = PrivateServer(tmp_path / "a")
    b = PrivateServer(tmp_path / "b", server_cnf="[mysqld]\ninnodb_buffer_pool_size = 80M\n")
    private_servers += [a, b]
    a.start()
    b.start()
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.view.local.setChecked(True)
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    _wait(qtbot, connect)
    assert not connect.isComplete()
    assert connect.view.chooser.isVisible()
    _nothing_drawn_over(qtbot, connect)
    labels = [connect.view.chooser.itemText(i) for i in range(connect.view.chooser.count())]
    index = next(i for i, t in enumerate(labels) if str(b.socket_path) in t)
    connect.view.chooser.setCurrentIndex(index)
    connect.view.chooser.activated.emit(index)
    _wait(qtbot, connect)
    assert connect.isComplete(), connect.view.message.text()

    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(1)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
    facts = wizard.state.facts
    assert facts is not None and facts.server is not None
    assert facts.server.variable("innodb_buffer_pool_size") == str(80 * 1024 * 1024)
    server_box = inspect.findChild(QGroupBox, "facts_server")
    text = server_box.findChild(QLabel).text()  # type: ignore[union-attr]
    assert "80.0 MiB" in text and str(b.datadir) in text
    column = inspect.picture.columns[0]
    assert column[0][0] == str(b.datadir).rstrip("/")
    assert len(column) >= 3  # directory, filesystem, at least one device
    assert inspect.isComplete()
    wizard.done(0)


def test_inspect_again_after_the_server_restarted_logs_in_again(
    qtbot: QtBot, tmp_path: Path, private_server: PrivateServer
) -> None:
    """The check's database session dies with the server: Inspect again logs in again and
    shows the new pid; while it inspects, and after a cancel, the old facts are not shown."""
    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.view.local.setChecked(True)
    connect.view.instance.setText(str(private_server.socket_path))
    qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
    _wait(qtbot, connect)
    assert connect.isComplete(), connect.view.message.text()
    inspect = wizard.pages["Inspect"]
    assert isinstance(inspect, InspectPage)
    inspect.sample.setValue(0)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
    server_box = inspect.findChild(QGroupBox, "facts_server")
    assert server_box is not None and server_box.isVisible()
    old = wizard.state.facts
    assert old is not None and old.server is not None
    old_pid = old.server.instance.pid

    private_server.restart()
    new_pid = private_server.running_pid()
    assert new_pid is not None and new_pid != old_pid
    # A person can press it once the first inspection has ended (the facts come a moment
    # before the end reaches the page; on a busy machine, more than a moment).
    qtbot.waitUntil(inspect.again.isEnabled, timeout=60_000)
    qtbot.mouseClick(inspect.again, Qt.MouseButton.LeftButton)
    assert not server_box.isVisible()  # the old facts are not shown as current
    assert inspect.task is not None
    qtbot.waitUntil(lambda: not inspect.task.is_running(), timeout=120_000)  # type: ignore[union-attr]
    assert "2006" not in inspect.status.text() and "Done" in inspect.status.text()
    facts = wizard.state.facts
    assert facts is not None and facts.server is not None
    assert facts.server.instance.pid == new_pid
    assert server_box.isVisible() and str(new_pid) in server_box.findChild(QLabel).text()  # type: ignore[union-attr]

    # Cancelled: no facts are shown as if they were current.
    inspect.sample.setValue(600)
    qtbot.waitUntil(inspect.again.isEnabled, timeout=60_000)
    qtbot.mouseClick(inspect.again, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(inspect.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(inspect.again.isEnabled, timeout=30_000)
    assert "cancelled" in inspect.status.text()
    assert wizard.state.facts is None and not server_box.isVisible()
    wizard.done(0)
