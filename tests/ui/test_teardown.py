"""Every page's work ends before its page does, and no Qt object is left to the collector.

The crash these guard against (issue 25): a wizard closed with ``done(0)`` lived on in
reference cycles; a garbage collection that happened to start on another thread (the keyring
probe's) found its widgets, shiboken queued their deletion to the main thread, and that ran
in the middle of building the next wizard: a segmentation fault. A collection on a worker
thread is the exact path, so each test below ends with one, after checking that the garbage
holds no live Qt object. Each page is opened, its work started, and closed at once, many
times, against a real private server.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.practice.server import PrivateServer
from app.ui.collector import install_gui_collector
from app.ui.pages.connect import ConnectPage
from app.ui.pages.inspect import InspectPage
from app.ui.pages.verify import VerifyPage
from app.ui.wizard import MainWizard
from tests.ui.test_verify_page import connected_state
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"
ROUNDS = 4


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    srv = PrivateServer(tmp_path_factory.mktemp("teardown") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _workers() -> list[str]:
    """Threads of the wizard's hosts still alive (the detached keyring calls hold no Qt)."""
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("innotune-") and t.name != "innotune-detached"
    ]


def _collect_like_the_crash() -> None:
    """No live Qt object in the garbage; then a collection on a worker thread, as in the crash."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        live = [
            type(o).__name__ for o in gc.garbage if isinstance(o, QObject) and shiboken6.isValid(o)
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not live, f"Qt objects left to the garbage collector: {live}"
    collector = threading.Thread(target=gc.collect)
    collector.start()
    collector.join(30)


def _gone(qtbot: QtBot, top: QWidget) -> None:
    """``top`` deleted by Qt on this thread, every worker ended, the garbage free of Qt."""
    qtbot.waitUntil(lambda: not shiboken6.isValid(top), timeout=30_000)
    assert not _workers(), f"worker threads outlived their window: {_workers()}"
    _collect_like_the_crash()


def _connect_local(qtbot: QtBot, connect: ConnectPage, server: PrivateServer) -> None:
    v = connect.view
    v.local.setChecked(True)
    v.instance.setText(str(server.socket_path))
    qtbot.mouseClick(v.check, Qt.MouseButton.LeftButton)


def _rounds(qtbot: QtBot, start: Callable[[], QWidget], close: Callable[[QWidget], None]) -> None:
    for _ in range(ROUNDS):
        top = start()
        close(top)
        _gone(qtbot, top)
        del top


def test_the_collector_runs_on_the_gui_thread_only(qtbot: QtBot, tmp_path: Path) -> None:
    """While a wizard exists, automatic collection is off and the GUI thread collects."""
    wizard, _connect = open_wizard(qtbot, tmp_path)
    collector = install_gui_collector()
    assert not gc.isenabled()

    class Cycle:
        me: object = None

    for _ in range(3000):  # past generation 0's threshold
        cycle = Cycle()
        cycle.me = cycle
    seen = gc.get_count()[0]
    assert seen > gc.get_threshold()[0]
    before = sum(collector.collections)
    qtbot.waitUntil(lambda: sum(collector.collections) > before, timeout=5_000)
    assert gc.get_count()[0] < seen
    wizard.done(0)
    _gone(qtbot, wizard)


def test_connect_closed_during_its_check(
    qtbot: QtBot, tmp_path: Path, server: PrivateServer
) -> None:
    def start() -> QWidget:
        wizard, connect = open_wizard(qtbot, tmp_path)
        _connect_local(qtbot, connect, server)
        assert connect.task is not None
        return wizard

    _rounds(qtbot, start, lambda w: w.done(0))  # type: ignore[attr-defined]


def test_inspect_closed_during_its_inspection(
    qtbot: QtBot, tmp_path: Path, server: PrivateServer
) -> None:
    def start() -> QWidget:
        wizard, connect = open_wizard(qtbot, tmp_path)
        _connect_local(qtbot, connect, server)
        qtbot.waitUntil(connect.isComplete, timeout=120_000)
        inspect = wizard.pages["Inspect"]
        assert isinstance(inspect, InspectPage)
        inspect.sample.setValue(5)  # a status sample long enough to be cut off
        wizard.next()
        assert inspect.task is not None and inspect.task.is_running()
        return wizard

    _rounds(qtbot, start, lambda w: w.done(0))  # type: ignore[attr-defined]


def test_tradeoffs_preview_and_done_closed_while_they_fill(qtbot: QtBot, tmp_path: Path) -> None:
    """Offline, from a saved facts file: Trade-offs fills ahead on timers, Preview builds."""
    for stop_at in ("Trade-offs", "Preview", "Done"):

        def start(stop_at: str = stop_at) -> QWidget:
            wizard, connect = open_wizard(qtbot, tmp_path)
            connect.saved.open_facts_file(FACTS)
            wizard.next()
            while wizard.currentPage() is not wizard.pages[stop_at]:
                if stop_at == "Done" and wizard.currentPage() is wizard.pages["Preview"]:
                    qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)
                wizard.next()
            return wizard

        _rounds(qtbot, start, lambda w: w.done(0))  # type: ignore[attr-defined]


def test_apply_closed_while_it_lists_snapshots(
    qtbot: QtBot, tmp_path: Path, server: PrivateServer
) -> None:
    def start() -> QWidget:
        wizard, connect = open_wizard(qtbot, tmp_path)
        connect.view.restore.setChecked(True)
        _connect_local(qtbot, connect, server)
        qtbot.waitUntil(connect.isComplete, timeout=120_000)
        wizard.next()
        assert wizard.currentPage() is wizard.pages["Apply"]
        return wizard

    _rounds(qtbot, start, lambda w: w.done(0))  # type: ignore[attr-defined]


def test_verify_closed_while_it_samples(qtbot: QtBot, server: PrivateServer) -> None:
    pages: list[VerifyPage] = []

    def start() -> QWidget:
        state = connected_state(server)
        page = VerifyPage(state)
        page.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        page.show()
        page.initializePage()  # the write-rate sample starts
        assert page.running()
        pages.append(page)
        return page

    def close(page: QWidget) -> None:
        assert isinstance(page, VerifyPage)
        page.close()  # hidden with its window: the sample is cancelled and waited for
        assert not page.running() if shiboken6.isValid(page) else True
        page.state.stop_hosts(15_000)

    _rounds(qtbot, start, close)
    del pages[:]


def test_a_closed_wizard_survives_a_collection_on_another_thread(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """The crash's exact path, many times: before the fix, the first round died."""
    for _ in range(10):
        wizard, _connect = open_wizard(qtbot, tmp_path)
        wizard.done(0)
        _gone(qtbot, wizard)
        del wizard, _connect


def test_the_wizard_is_deleted_by_qt_when_done(qtbot: QtBot, tmp_path: Path) -> None:
    wizard, _connect = open_wizard(qtbot, tmp_path)
    assert isinstance(wizard, MainWizard)
    assert wizard.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    wizard.done(0)
    qtbot.waitUntil(lambda: not shiboken6.isValid(wizard), timeout=10_000)
