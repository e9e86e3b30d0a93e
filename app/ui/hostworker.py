"""One worker per host: it owns the connection and runs the wizard's tasks one at a time.

Modelled on Vorta's ``borg/jobs_manager.py`` (a queue per site, worked off by one thread)
and qutebrowser's ``misc/guiprocess.py`` (a QObject with typed signals and an outcome).

- A :class:`Task` is a function and its inputs: a frozen dataclass copied from the wizard
  when the person pressed the button, never the live state, so changing the wizard while
  the task waits or runs cannot change what it does.
- :meth:`HostWorker.submit` queues it and returns a :class:`TaskHandle`, whose signals
  arrive on the GUI thread: ``started``, ``say(str)``, ``progress(object)``, then
  ``finished(result)`` or ``failed(error)``, then ``ended``.
- The worker's connection (SSH transport, doctor result, database session) is used only by
  the task that runs, one task at a time: never by two threads at once.

One queue per host, no second lane: a second lane would need a second SSH connection and
database session. The long tasks (a benchmark, a write-rate sample, an inspection's sample)
are bounded and check their cancel event often; the page that started one cancels it when
it is left, and what was queued behind it runs next. A task blocked in a remote call is cut
off by closing the connection under it (:meth:`HostWorker.close_in_background`).

The thread runs while there is work and ends when the queue is empty (as Vorta's site
workers do), so an idle host holds no thread that could outlive its window.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from app.access.doctor import DoctorResult
from app.domain.errors import InnoTuneError

log = logging.getLogger(__name__)


class TaskCancelled(InnoTuneError):
    """A task cancelled before it started: it never ran."""

    def __init__(self) -> None:
        super().__init__("Cancelled before it started: nothing was done.", "")


class Progress:
    """Handed to a running task: report what it does, post partial results, see a cancel."""

    def __init__(
        self,
        say: Callable[[str], None],
        post: Callable[[object], None],
        cancelled: threading.Event | None = None,
    ) -> None:
        self._say = say
        self._post = post
        self.cancelled = cancelled or threading.Event()

    def say(self, text: str) -> None:
        """Report what is happening now, as text."""
        self._say(text)

    def post(self, item: object) -> None:
        """Hand a partial result (a finished step, a sample, a fraction) to the window."""
        self._post(item)


def _is_frozen(value: object) -> bool:
    params = getattr(type(value), "__dataclass_params__", None)
    return dataclasses.is_dataclass(value) and params is not None and bool(params.frozen)


@dataclasses.dataclass(frozen=True)
class Task:
    """What to run on a host: ``run(connection, inputs, progress)`` returns the result.

    ``inputs`` must be a frozen dataclass: the values the task works from, copied when it
    was asked for.
    """

    name: str
    run: Callable[[DoctorResult, Any, Progress], Any]
    inputs: Any

    def __post_init__(self) -> None:
        if not _is_frozen(self.inputs):
            raise TypeError(f"task {self.name}: inputs must be a frozen dataclass")


class TaskHandle(QObject):
    """One submitted task; its signals arrive on the GUI thread, in order."""

    started = Signal()
    say = Signal(str)
    progress = Signal(object)
    finished = Signal(object)  # the task's result
    failed = Signal(object)  # the exception it raised (with __innotune_trace__)
    ended = Signal()  # after finished or failed

    # Emitted on the worker's thread; delivered queued, as the public signals above.
    _started_x = Signal()
    _say_x = Signal(str)
    _progress_x = Signal(object)
    _finished_x = Signal(object)
    _failed_x = Signal(object)
    _ended_x = Signal()

    def __init__(self, task: Task, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.task = task
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._claimed = False  # taken by the worker's thread
        self._dropped = False  # cancelled before it was taken: it never runs
        self._returned = threading.Event()  # the task's function has returned (or never will)
        self._over = False  # ``ended`` delivered, or a caller waited for the return
        queued = Qt.ConnectionType.QueuedConnection
        self._started_x.connect(self.started, queued)
        self._say_x.connect(self.say, queued)
        self._progress_x.connect(self.progress, queued)
        self._finished_x.connect(self.finished, queued)
        self._failed_x.connect(self.failed, queued)
        self._ended_x.connect(self._on_ended, queued)

    # -- the GUI side ------------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the task to stop at its next check; a task still queued never starts."""
        self.cancelled.set()
        with self._lock:
            if self._claimed or self._dropped:
                return
            self._dropped = True
        self._send(self._failed_x, TaskCancelled())
        self._send(self._ended_x)
        self._returned.set()

    def is_running(self) -> bool:
        """True from :meth:`HostWorker.submit` until ``ended`` has reached the GUI thread.

        Judged on the GUI thread, so a slot connected to ``ended`` now will still be called.
        """
        return not self._over

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the task's function has returned; then it is over for the caller."""
        returned = self._returned.wait(msecs / 1000)
        if returned:
            self._over = True
        return returned

    def stop(self, msecs: int = 30000) -> bool:
        """Cancel and wait for the task to return (a page or window going away)."""
        self.cancel()
        return self.wait(msecs)

    @Slot()
    def _on_ended(self) -> None:
        self._over = True
        self.ended.emit()

    # -- the worker's side -------------------------------------------------------------------
    def _claim(self) -> bool:
        with self._lock:
            if self._dropped:
                return False
            self._claimed = True
            return True

    def _execute(self, connection: DoctorResult, host: str = "host") -> None:
        if not self._claim():
            return
        name = self.task.name
        # The session's log (Log…) holds every step a person started, not only the check:
        # what each task said, each step of a job on the target, and how it ended. Secrets
        # are masked by the log's filter on the way to the file.
        log.info("%s on %s: started", name, host)
        self._send(self._started_x)

        def say(text: str) -> None:
            log.info("%s: %s", name, text)
            self._send(self._say_x, text)

        def post(item: object) -> None:
            line = _journal_line(item)
            if line:
                log.info("%s: %s", name, line)
            self._send(self._progress_x, item)

        progress = Progress(say, post, self.cancelled)
        try:
            result = self.task.run(connection, self.task.inputs, progress)
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the page
            exc.__innotune_trace__ = traceback.format_exc()  # type: ignore[attr-defined]
            log.warning("task %s failed", name, exc_info=True)
            self._send(self._failed_x, exc)
        else:
            log.info("%s: finished%s", name, _outcome(result))
            self._send(self._finished_x, result)
        finally:
            self._send(self._ended_x)
            self._returned.set()

    @staticmethod
    def _send(signal: Any, *args: object) -> None:
        # A handle whose page is already gone: nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            signal.emit(*args)


def _journal_line(item: object) -> str:
    """A job's journal step (apply, restore) as one log line; "" for anything else.

    The doctor's steps are logged by the doctor itself, a benchmark's fractions not at all.
    """
    step, status = getattr(item, "step", None), getattr(item, "status", None)
    if isinstance(step, str) and isinstance(status, str) and hasattr(item, "seq"):
        detail = getattr(item, "detail", "")
        return f"{step} {status}" + (f": {detail}" if detail else "")
    return ""


def _outcome(result: object) -> str:
    """A job's state at its end ("job 2026… applied"), for the log line that ends a task."""
    job_id, state = getattr(result, "job_id", None), getattr(result, "state", None)
    if isinstance(job_id, str) and isinstance(state, str):
        return f" (job {job_id}: {state})"
    return ""


class HostWorker:
    """The worker of one host: its connection, and a queue of tasks run one at a time."""

    def __init__(self, connection: DoctorResult | None = None, name: str = "host") -> None:
        self.connection = connection if connection is not None else DoctorResult()
        self.name = name
        self._queue: collections.deque[TaskHandle] = collections.deque()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running: TaskHandle | None = None
        self._submitted: list[TaskHandle] = []  # until over for the GUI thread
        self._closer: threading.Thread | None = None

    def submit(self, task: Task, parent: QObject) -> TaskHandle:
        """Queue ``task``; its handle (a child of ``parent``, e.g. the page) tells its story.

        A parent, always: the handle then dies with its page, on the GUI thread. Without
        one, the worker's thread could drop its last reference and delete it there.
        """
        handle = TaskHandle(task, parent)
        with self._lock:
            self._submitted = [h for h in self._submitted if h.is_running()]
            self._submitted.append(handle)
            self._queue.append(handle)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name=f"innotune-{self.name}", daemon=True
                )
                self._thread.start()
        return handle

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._thread = None
                    return
                handle = self._running = self._queue.popleft()
            try:
                handle._execute(self.connection, self.name)
            finally:
                with self._lock:
                    self._running = None

    def busy(self) -> bool:
        """True while a task runs or waits."""
        with self._lock:
            return self._thread is not None

    def idle(self) -> bool:
        """True when no task runs or waits and its connection is not being closed."""
        return not self.busy() and not (self._closer is not None and self._closer.is_alive())

    def thread(self) -> threading.Thread | None:
        """The thread working off the queue now (None when idle)."""
        with self._lock:
            return self._thread

    def cancel_all(self) -> None:
        """Cancel the running task and drop the queued ones."""
        with self._lock:
            handles = [*self._queue, *([self._running] if self._running else [])]
        for handle in handles:
            handle.cancel()

    def stop(self, msecs: int = 30000) -> bool:
        """Cancel everything and wait for the thread (and a closing connection) to end."""
        with self._lock:
            handles = list(self._submitted)
        ended = True
        for handle in handles:
            ended = handle.stop(msecs) and ended  # over for the caller once it has returned
        for thread in (self.thread(), self._closer):
            if thread is not None:
                thread.join(msecs / 1000)
                ended = ended and not thread.is_alive()
        return ended

    def close_in_background(self) -> threading.Thread:
        """Close the connection from a thread of its own; a blocked task's call returns.

        SSH waits for its reader thread to end, so this never runs on the GUI thread.
        """
        closer = threading.Thread(
            target=close_quietly, args=(self.connection,), name="innotune-close", daemon=True
        )
        closer.start()
        self._closer = closer
        return closer


def close_quietly(result: DoctorResult) -> None:
    """Close a connection's session and transport; a connection already gone is fine.

    Closing ends the relay on the target too: it stops when its stdin (the SSH channel)
    closes, and a local relay when its socket does.
    """
    with contextlib.suppress(Exception):
        result.close()
    result.session = None
    result.transport = None
