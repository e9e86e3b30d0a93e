"""Python's cyclic garbage collector, run on the GUI thread only, between events.

Left to itself, the collector runs on whichever thread allocates past its threshold: a
host's worker, the keyring probe, paramiko's reader. When it finds Qt wrappers in a cycle,
shiboken cannot delete their C++ objects on that thread, so it queues the deletion as a
Python "pending call" for the main thread, which runs it at the next bytecode boundary,
wherever the GUI thread happens to be (seen: halfway through building the next wizard, in
``BindingManager::runDeletionInMainThread``, a segmentation fault). So automatic collection
is off while the wizard runs, and a timer on the GUI thread collects by the same thresholds
Python uses, at a point where no Qt call is in progress.

Widgets themselves never wait for the collector: the wizard deletes itself on the GUI
thread when it is done (``WA_DeleteOnClose``), after its workers ended.
"""

from __future__ import annotations

import gc

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot

# Often enough that garbage never piles up, rarely enough to cost nothing: a check of three
# counters when there is nothing to do.
INTERVAL_MS = 250

_installed: GuiThreadCollector | None = None


class GuiThreadCollector(QObject):
    """A timer on the GUI thread that collects as Python would have, had it been allowed."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.collections = [0, 0, 0]  # by generation, for tests and the curious
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.collect_due()

    def collect_due(self) -> int:
        """Collect the oldest generation whose count passed its threshold; -1 when none did."""
        counts, limits = gc.get_count(), gc.get_threshold()
        generation = -1
        for gen in range(3):
            if counts[gen] > limits[gen]:
                generation = gen
        if generation >= 0:
            gc.collect(generation)
            self.collections[generation] += 1
        return generation


def install_gui_collector() -> GuiThreadCollector:
    """Turn automatic collection off and collect on the GUI thread instead (idempotent).

    Call on the GUI thread, once a QApplication exists; the collector lives as long as it.
    """
    global _installed
    app = QCoreApplication.instance()
    assert app is not None, "a QApplication must exist first"
    if _installed is None or not shiboken6.isValid(_installed):
        _installed = GuiThreadCollector(app)
    gc.disable()
    return _installed


def uninstall_gui_collector() -> None:
    """Give collection back to Python (tests leaving the wizard behind)."""
    global _installed
    if _installed is not None:
        _installed.deleteLater()
        _installed = None
    gc.enable()
