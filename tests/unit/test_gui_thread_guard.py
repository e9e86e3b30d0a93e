"""The transport and database layers refuse to block the GUI thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from app.domain.errors import OnGuiThreadError
from app.domain.threads import register_gui_thread, unregister_gui_thread
from app.mysql.session import PyMySQLSession
from app.remote.local import LocalTransport


@pytest.fixture
def on_gui_thread() -> Iterator[None]:
    register_gui_thread()
    try:
        yield
    finally:
        unregister_gui_thread()


def test_commands_refused_on_the_gui_thread(on_gui_thread: None) -> None:
    with pytest.raises(OnGuiThreadError):
        LocalTransport().run(["true"])
    with pytest.raises(OnGuiThreadError):
        LocalTransport().read_file("/etc/hostname")


def test_database_login_refused_on_the_gui_thread(on_gui_thread: None) -> None:
    with pytest.raises(OnGuiThreadError):
        PyMySQLSession.direct(user="root", socket_path="/nonexistent.sock")


def test_the_same_calls_work_in_a_worker(on_gui_thread: None) -> None:
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(LocalTransport().run(["true"]).ok))
    worker.start()
    worker.join()
    assert results == [True]
