"""The UI tests run the wizard as the program does: Qt objects die on the GUI thread only.

pytest-qt closes each test's widgets and calls ``deleteLater()``, which Qt carries out only
once an event loop runs again: until then a page left in a reference cycle is garbage the
cyclic collector could find on any thread (app/ui/collector.py says what follows). So after
each test its deferred deletions run at once, on the GUI thread, and the cyclic garbage is
collected there too; while the UI tests run, automatic collection is off, as in the program.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication

from app.ui.collector import install_gui_collector, uninstall_gui_collector


@pytest.fixture(scope="package", autouse=True)
def _collect_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    install_gui_collector()
    yield
    uninstall_gui_collector()


@pytest.fixture(autouse=True)
def _delete_widgets_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    yield
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    gc.collect()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Before pytest-qt closes the test's widgets: not those Qt already deleted.

    A wizard deletes itself once done (``WA_DeleteOnClose``); closing it again would raise.
    """
    widgets = getattr(item, "qt_widgets", None)
    if widgets:
        item.qt_widgets = [  # type: ignore[attr-defined]
            (ref, before) for ref, before in widgets if ref() is None or shiboken6.isValid(ref())
        ]
    return (yield)
