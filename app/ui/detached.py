"""Short blocking calls that might hang, run on a daemon thread with the result sent back.

:class:`app.ui.hostworker.HostWorker` runs a host's tasks on a thread the window waits
for. A keyring call can wait on an unlock prompt for as long as the person leaves it open,
or on a D-Bus peer that never answers, so it runs on a daemon thread of its own: closing
the window never waits for it. The result reaches the GUI thread through a
queued signal; a page closed meanwhile is simply not called (Qt drops a connection whose
receiver is gone).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

log = logging.getLogger(__name__)

# Calls in flight, kept alive until their result has been delivered on the GUI thread.
_in_flight: set[DetachedCall] = set()


class DetachedCall(QObject):
    """One call: ``succeeded(result)`` or ``failed(exception)`` arrives on the GUI thread."""

    succeeded = Signal(object)
    failed = Signal(object)

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__()  # no parent: it must outlive a page closed while it runs
        self._work = work
        self.succeeded.connect(self._on_done)
        self.failed.connect(self._on_done)

    def start(self) -> None:
        """Run the work on a daemon thread."""
        _in_flight.add(self)
        threading.Thread(target=self._run, name="innotune-detached", daemon=True).start()

    def _run(self) -> None:
        try:
            result = self._work()
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the page
            log.warning("a background call failed: %s", exc)
            self.failed.emit(exc)
        else:
            self.succeeded.emit(result)

    @Slot(object)
    def _on_done(self, _outcome: object) -> None:
        _in_flight.discard(self)


def run_detached(
    work: Callable[[], object],
    on_success: Callable[[object], None],
    on_failure: Callable[[object], None],
) -> DetachedCall:
    """Run ``work`` off the GUI thread; call back on the GUI thread with its outcome.

    Call from the GUI thread, with slots of a QObject (a page's methods) as the callbacks.
    """
    call = DetachedCall(work)
    call.succeeded.connect(on_success)
    call.failed.connect(on_failure)
    call.start()
    return call
