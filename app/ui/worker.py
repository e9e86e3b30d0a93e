"""Running blocking work off the GUI thread: one QThread per job, results over signals."""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot


class Progress:
    """Handed to a job so it can report what it is doing now, and see a cancel request."""

    def __init__(self, emit: Callable[[str], None], post: Callable[[object], None]) -> None:
        self._emit = emit
        self._post = post
        self.cancelled = threading.Event()

    def say(self, text: str) -> None:
        """Report what is happening now, as text."""
        self._emit(text)

    def post(self, item: object) -> None:
        """Hand a partial result (a finished step, a sample) to the window."""
        self._post(item)


class _Runner(QObject):
    progress = Signal(str)
    partial = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)
    done = Signal()

    def __init__(self, job: Callable[[Progress], Any]) -> None:
        super().__init__()
        self._job = job
        self.handle = Progress(self.progress.emit, self.partial.emit)

    @Slot()
    def run(self) -> None:
        try:
            result = self._job(self.handle)
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the page
            exc.__innotune_trace__ = traceback.format_exc()  # type: ignore[attr-defined]
            logging.getLogger(__name__).warning("a background job failed", exc_info=True)
            self.failed.emit(exc)
        else:
            self.succeeded.emit(result)
        finally:
            self.done.emit()


class Job(QObject):
    """A blocking callable run in its own QThread.

    Signals arrive on the GUI thread: ``progress(str)`` and ``partial(object)`` while it
    runs, then ``succeeded(object)`` or ``failed(Exception)``, then ``finished()``.
    """

    progress = Signal(str)
    partial = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, job: Callable[[Progress], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._runner = _Runner(job)
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        self._runner.progress.connect(self.progress)
        self._runner.partial.connect(self.partial)
        self._runner.succeeded.connect(self.succeeded)
        self._runner.failed.connect(self.failed)
        self._runner.done.connect(self._thread.quit)
        self._thread.finished.connect(self._on_thread_finished)
        self._started = False
        self._finished_delivered = False

    def start(self) -> None:
        """Start the work."""
        self._started = True
        self._thread.start()

    def cancel(self) -> None:
        """Ask the work to stop at its next check."""
        self._runner.handle.cancelled.set()

    def stop(self, msecs: int = 30000) -> bool:
        """Cancel and block until the work has returned (when its window closes).

        The thread is told to quit here: the usual quit is queued to the GUI thread, which
        is the one waiting, so :meth:`wait` alone would sit out its whole timeout.
        """
        self.cancel()
        self._thread.quit()  # takes effect as soon as the job returns to the thread's loop
        ended = self._thread.wait(msecs)
        if ended:  # over for whoever stopped it (a closing window), though finished is queued
            self._finished_delivered = True
        return ended

    def is_running(self) -> bool:
        """True from :meth:`start` until ``finished`` has reached the GUI thread.

        Not the thread's own state: ``finished`` is queued from the thread, which may still
        count as running after the signal was delivered (or be stopped before it is), so a
        caller that judged by the thread and then connected to ``finished`` could wait for a
        signal already gone. Judged on the GUI thread, as here, "running" means a slot
        connected now to ``finished`` will still be called.
        """
        return self._started and not self._finished_delivered

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the thread ends (used at shutdown)."""
        return self._thread.wait(msecs)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._finished_delivered = True
        self.finished.emit()
