"""The Job contract the pages build on: while it says it runs, ``finished`` is still to come."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from app.ui.worker import Job, Progress


def test_running_until_finished_reaches_the_gui_thread(qtbot: QtBot) -> None:
    """The thread ends a moment before its queued ``finished`` is delivered. A page that then
    asked "still running?" and connected to ``finished`` waited forever when the answer came
    from the thread (the Verify page's benchmark never started, a 90 s test timeout)."""
    ran = threading.Event()

    def work(progress: Progress) -> int:
        ran.set()
        return 42

    job = Job(work)
    results: list[object] = []
    job.succeeded.connect(results.append)
    assert not job.is_running()  # not started
    job.start()
    assert job.is_running()
    # Let the thread end without delivering its queued signals to this (GUI) thread.
    assert ran.wait(10)
    job._thread.quit()  # as stop() does, without its "over for the caller"
    assert job._thread.wait(10_000)
    assert job.is_running(), "finished has not been delivered yet"
    called: list[str] = []
    job.finished.connect(lambda: called.append("finished"))
    qtbot.waitUntil(lambda: called == ["finished"], timeout=10_000)
    assert not job.is_running()
    assert results == [42]


def test_stop_cancels_and_returns_when_the_work_has(qtbot: QtBot) -> None:
    """stop() from the GUI thread returns as soon as the work does, not at its timeout."""
    entered = threading.Event()

    def work(progress: Progress) -> str:
        entered.set()
        progress.cancelled.wait(30)
        return "stopped" if progress.cancelled.is_set() else "timed out"

    job = Job(work)
    results: list[object] = []
    job.succeeded.connect(results.append)
    job.start()
    assert entered.wait(10)
    assert job.stop(20_000)
    assert not job.is_running()  # over for the closing window, before any event is handled
    qtbot.waitUntil(lambda: results == ["stopped"], timeout=10_000)
