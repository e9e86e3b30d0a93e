"""The guard that keeps blocking calls off the GUI thread.

The UI registers its thread at start-up; the transport and database layers call
:func:`assert_not_gui_thread` before any blocking call. Without a registered GUI
thread (the CLI, tests of the logic) every thread is allowed.
"""

from __future__ import annotations

import threading

_gui_thread_id: int | None = None


def register_gui_thread(ident: int | None = None) -> None:
    """Mark the calling thread (or ``ident``) as the GUI thread."""
    global _gui_thread_id
    _gui_thread_id = threading.get_ident() if ident is None else ident


def unregister_gui_thread() -> None:
    """Forget the GUI thread (used when the application quits)."""
    global _gui_thread_id
    _gui_thread_id = None


def assert_not_gui_thread(what: str) -> None:
    """Raise :class:`OnGuiThreadError` when called on the registered GUI thread."""
    from app.domain.errors import OnGuiThreadError

    if _gui_thread_id is not None and threading.get_ident() == _gui_thread_id:
        raise OnGuiThreadError(f"{what} must run in a worker, not on the GUI thread")
