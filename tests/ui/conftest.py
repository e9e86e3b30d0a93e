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
    """Close the test's widgets here, before pytest-qt would, and never stop the teardown.

    A wizard deletes itself once done (``WA_DeleteOnClose``), possibly while pytest-qt runs
    the pending events just before closing: closing it then raised "Internal C++ object
    (MainWizard) already deleted", and an error raised there skipped the rest of the
    teardown, so the next test failed with "previous item was not torn down properly". Each
    widget is checked at the moment it is closed, and a failure is raised only after the
    teardown has run.
    """
    failure: BaseException | None = None
    try:
        close_live_widgets(item)
    except Exception as exc:  # noqa: BLE001 - raised below, once the teardown has run
        failure = exc
    result = yield
    if failure is not None:
        raise failure
    return result


def close_live_widgets(item: pytest.Item) -> None:
    """Close and delete the widgets ``qtbot.addWidget`` registered that Qt has not deleted.

    Raises:
        Exception: the first failure, after every widget has had its turn.
    """
    widgets = getattr(item, "qt_widgets", None) or []
    item.qt_widgets = []  # type: ignore[attr-defined] - nothing left for pytest-qt to close
    first: Exception | None = None
    for ref, before_close in widgets:
        widget = ref()
        try:
            if widget is None or not shiboken6.isValid(widget):
                continue
            if before_close is not None:
                before_close(widget)
            if shiboken6.isValid(widget):
                widget.close()
            if shiboken6.isValid(widget):
                widget.deleteLater()
        except Exception as exc:  # noqa: BLE001 - the other widgets are closed all the same
            first = first or exc
    if first is not None:
        raise first
