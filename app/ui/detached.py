"""Short blocking calls that might hang, run on a daemon thread with the result sent back.

:class:`app.ui.hostworker.HostWorker` runs a host's tasks on a thread the window waits
for. A keyring call can wait on an unlock prompt for as long as the person leaves it open,
or on a D-Bus peer that never answers, so it runs on a daemon thread of its own: closing
the window never waits for it.

The thread holds no Qt object, only the work and a number. Its outcome travels through one
long-lived relay (a child of the application) to the GUI thread, where the call's callbacks
wait in a table; a call whose receiver was deleted meanwhile is simply dropped. A Qt object
whose last reference went with the thread would be deleted on that thread, under whatever
the GUI thread is doing with it.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal, Slot

log = logging.getLogger(__name__)


@dataclass
class _Waiting:
    receiver: QObject  # the callbacks' owner: gone means nobody is left to tell
    on_success: Callable[[object], None]
    on_failure: Callable[[object], None]


class _Relay(QObject):
    """Carries outcomes from the daemon threads to the GUI thread (queued)."""

    arrived = Signal(int, bool, object)  # call number, succeeded, result or exception

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.waiting: dict[int, _Waiting] = {}
        self.arrived.connect(self._on_arrived, Qt.ConnectionType.QueuedConnection)

    @Slot(int, bool, object)
    def _on_arrived(self, number: int, ok: bool, outcome: object) -> None:
        waiting = self.waiting.pop(number, None)
        if waiting is None or not shiboken6.isValid(waiting.receiver):
            return
        (waiting.on_success if ok else waiting.on_failure)(outcome)


_relay: _Relay | None = None
_numbers = itertools.count(1)


def _the_relay() -> _Relay:
    global _relay
    if _relay is None or not shiboken6.isValid(_relay):
        app = QCoreApplication.instance()
        assert app is not None, "a QApplication must exist first"
        _relay = _Relay(app)
    return _relay


def _run(relay: _Relay, number: int, work: Callable[[], object]) -> None:
    try:
        result = work()
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the page
        log.warning("a background call failed: %s", exc)
        relay.arrived.emit(number, False, exc)
    else:
        relay.arrived.emit(number, True, result)


def run_detached(
    work: Callable[[], object],
    receiver: QObject,
    on_success: Callable[[object], None],
    on_failure: Callable[[object], None],
) -> int:
    """Run ``work`` off the GUI thread; call back on the GUI thread while ``receiver`` lives.

    Call from the GUI thread. ``work`` must not hold a Qt object; the callbacks may (they
    never leave the GUI thread). Returns the call's number.
    """
    relay = _the_relay()
    number = next(_numbers)
    relay.waiting[number] = _Waiting(receiver, on_success, on_failure)
    threading.Thread(
        target=_run, args=(relay, number, work), name="innotune-detached", daemon=True
    ).start()
    return number
