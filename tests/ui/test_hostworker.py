"""The host worker: tasks in order on one thread, frozen inputs, cancel, failure, stop."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from app.access.doctor import DoctorResult
from app.domain.target import parse_target
from app.ui.hostworker import HostWorker, Progress, Task, TaskCancelled, TaskHandle
from app.ui.state import WizardState


@dataclass(frozen=True)
class Note:
    """A task's inputs: what to return, and an event to wait for first."""

    text: str
    gate: threading.Event | None = None


# The handles' parent, as a page is: it lives for the whole module.
OWNER = QObject()


def note(_conn: DoctorResult, inputs: Note, progress: Progress) -> tuple[str, int]:
    """Wait for the gate (or a cancel); say and post something; return the text and thread."""
    if inputs.gate is not None:
        while not inputs.gate.wait(0.01):
            if progress.cancelled.is_set():
                return ("cancelled", threading.get_ident())
    progress.say(f"saying {inputs.text}")
    progress.post(inputs.text)
    return (inputs.text, threading.get_ident())


def _results(task: TaskHandle) -> list[object]:
    got: list[object] = []
    task.finished.connect(got.append)
    return got


def test_tasks_run_in_order_on_one_thread_that_is_not_the_gui_thread(qtbot: QtBot) -> None:
    worker = HostWorker(name="test")
    gate = threading.Event()
    tasks = [worker.submit(Task(t, note, Note(t, gate)), OWNER) for t in ("a", "b", "c")]
    events: list[str] = []
    for t in tasks:
        t.started.connect(lambda name=t.task.name: events.append(f"started {name}"))
        t.say.connect(events.append)
        t.progress.connect(lambda item: events.append(f"posted {item}"))
        t.finished.connect(lambda result: events.append(f"finished {result[0]}"))
        t.ended.connect(lambda name=t.task.name: events.append(f"ended {name}"))
    threads = [_results(t) for t in tasks]
    assert all(t.is_running() for t in tasks)
    gate.set()
    qtbot.waitUntil(lambda: not any(t.is_running() for t in tasks), timeout=10_000)
    expected = []
    for name in ("a", "b", "c"):
        expected += [
            f"started {name}",
            f"saying {name}",
            f"posted {name}",
            f"finished {name}",
            f"ended {name}",
        ]
    assert events == expected
    idents = {result[0][1] for result in threads}  # type: ignore[index]
    assert len(idents) == 1 and threading.get_ident() not in idents
    qtbot.waitUntil(lambda: worker.thread() is None, timeout=10_000)  # idle: no thread held


def test_a_task_sees_the_inputs_of_when_it_was_asked_for(qtbot: QtBot) -> None:
    """Inputs are copied from the wizard when the button is pressed: changing the wizard's
    state afterwards, while the task waits or runs, does not change what it sees."""

    @dataclass(frozen=True)
    class Seen:
        target: str
        persisted: str

    def look(_conn: DoctorResult, inputs: Seen, _progress: Progress) -> Seen:
        gate.wait(10)
        return inputs

    state = WizardState(target=parse_target("practice"), persisted="reset")
    worker = HostWorker()
    gate = threading.Event()
    assert state.target is not None
    task = worker.submit(Task("look", look, Seen(state.target.label, state.persisted)), OWNER)
    got = _results(task)
    state.persisted = "persist"
    state.target = parse_target("local")
    gate.set()
    qtbot.waitUntil(lambda: not task.is_running(), timeout=10_000)
    assert got == [Seen(parse_target("practice").label, "reset")]
    # The live state itself is refused as inputs: it is not a frozen dataclass.
    with pytest.raises(TypeError, match="frozen dataclass"):
        Task("look", look, state)


def test_cancel_stops_the_running_task_and_drops_a_queued_one(qtbot: QtBot) -> None:
    worker = HostWorker()
    running = worker.submit(Task("long", note, Note("long", threading.Event())), OWNER)
    with qtbot.waitSignal(running.started, timeout=10_000):
        pass
    queued = worker.submit(Task("next", note, Note("next")), OWNER)
    after = worker.submit(Task("after", note, Note("after")), OWNER)
    ran, dropped, later = _results(running), _results(queued), _results(after)
    failures: list[object] = []
    queued.failed.connect(failures.append)
    queued.cancel()
    running.cancel()
    qtbot.waitUntil(lambda: not after.is_running(), timeout=10_000)
    assert [r[0] for r in ran] == ["cancelled"]  # type: ignore[index]
    assert dropped == [] and len(failures) == 1 and isinstance(failures[0], TaskCancelled)
    assert [r[0] for r in later] == ["after"]  # type: ignore[index]  # the queue goes on
    assert not queued.is_running()


def test_a_failure_arrives_as_a_signal_with_the_error(qtbot: QtBot) -> None:
    def broken(_conn: DoctorResult, _inputs: Note, _progress: Progress) -> None:
        raise ValueError("the disk said no")

    worker = HostWorker()
    task = worker.submit(Task("broken", broken, Note("x")), OWNER)
    results = _results(task)
    with qtbot.waitSignal(task.failed, timeout=10_000) as failed:
        pass
    error = failed.args[0]
    assert isinstance(error, ValueError) and str(error) == "the disk said no"
    assert "ValueError" in error.__innotune_trace__
    qtbot.waitUntil(lambda: not task.is_running(), timeout=10_000)
    assert results == []
    # The worker goes on with the next task.
    again = worker.submit(Task("fine", note, Note("fine")), OWNER)
    with qtbot.waitSignal(again.finished, timeout=10_000) as done:
        pass
    assert done.args[0][0] == "fine"


def test_the_workers_thread_is_gone_after_stop(qtbot: QtBot) -> None:
    """stop() cancels, waits for the task to return, and the thread has ended: no thread
    outlives the window that closes (one did, and crashed the suite)."""
    worker = HostWorker()
    entered = threading.Event()

    def wait_for_cancel(_conn: DoctorResult, _inputs: Note, progress: Progress) -> str:
        entered.set()
        progress.cancelled.wait(30)
        return "stopped"

    task = worker.submit(Task("wait", wait_for_cancel, Note("x")), OWNER)
    queued = worker.submit(Task("queued", note, Note("queued")), OWNER)
    thread = worker.thread()
    assert thread is not None and thread.is_alive()
    assert entered.wait(10)
    assert worker.stop(20_000)
    assert not thread.is_alive() and worker.thread() is None
    # Over for the closing window at once, before any queued signal is handled.
    assert not task.is_running() and not queued.is_running()


def test_running_until_ended_reaches_the_gui_thread(qtbot: QtBot) -> None:
    """A page that asks "still running?" and then connects to ``ended`` must get it: the
    answer comes from what the GUI thread has seen, not from the worker's thread."""
    ran_on: list[threading.Thread] = []

    def quick(_conn: DoctorResult, _inputs: Note, _progress: Progress) -> None:
        ran_on.append(threading.current_thread())

    task = HostWorker().submit(Task("quick", quick, Note("quick")), OWNER)
    while not ran_on:
        threading.Event().wait(0.01)  # not qtbot.wait: no signal may be handled yet
    ran_on[0].join(10)  # the task has returned; its signals wait for this (GUI) thread
    assert not ran_on[0].is_alive()
    assert task.is_running(), "ended has not been delivered yet"
    called: list[str] = []
    task.ended.connect(lambda: called.append("ended"))
    qtbot.waitUntil(lambda: called == ["ended"], timeout=10_000)
    assert not task.is_running()
