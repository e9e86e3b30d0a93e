"""The Verify page against a real private server: before/after runs, charts, busy, cancel."""

from __future__ import annotations

import getpass
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.bench.runner import Benchmark, BenchOptions
from app.domain.bench import ROUNDS, BenchReport, WriteRate
from app.domain.target import ConnectOptions, Target
from app.mysql.session import PyMySQLSession
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.ui.hostworker import HostWorker
from app.ui.pages.verify import COLUMNS, CPU, VERDICT, VerifyPage
from app.ui.state import WizardState
from tests.verdicts import VERDICT as VERDICT_TEXT


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    srv = PrivateServer(tmp_path_factory.mktemp("verify") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def connected_state(server: PrivateServer) -> WizardState:
    """What the Connect page leaves behind, made by the doctor off the GUI thread."""
    target = Target("local", options=ConnectOptions(instance=str(server.socket_path)))
    result = DoctorResult()

    def doctor() -> None:
        for _ in run_doctor(target, Secrets(), result, opener=open_transport):
            pass

    worker = threading.Thread(target=doctor)
    worker.start()
    worker.join(120)
    assert result.ok, [s.line() for s in result.steps]
    return WizardState(target=target, host=HostWorker(result))


@pytest.fixture
def page(qtbot: QtBot, server: PrivateServer) -> Iterator[VerifyPage]:
    state = connected_state(server)
    page = VerifyPage(state)
    qtbot.addWidget(page)
    page.sample_seconds = 0.3
    page.seconds.setValue(2)
    page.threads.setValue(2)
    page.use_sysbench.setChecked(False)
    page.watch_panel.seconds.setValue(5)  # the watch a busy server gets instead
    page.show()
    yield page
    page.stop()
    assert state.connection is not None
    state.connection.close()


def scratch(server: PrivateServer) -> list[str]:
    return server.query("SHOW DATABASES LIKE 'innotune_bench%'").split()[1:]


def wait_idle(qtbot: QtBot, page: VerifyPage, timeout: int = 60_000) -> None:
    qtbot.waitUntil(lambda: not page.running() and page._pending is None, timeout=timeout)


def test_before_and_after_side_by_side(
    qtbot: QtBot, page: VerifyPage, server: PrivateServer, tmp_path: Path
) -> None:
    page.seconds.setValue(9)  # six runs of three rounds of half a second
    page.initializePage()
    qtbot.waitUntil(lambda: page.rate is not None, timeout=30_000)
    assert "quiet" in page.rate_label.text()
    wait_idle(qtbot, page)

    page.run_before.click()

    # The rate sample may find the fresh server still busy (purge, its first writes) and ask:
    # answer Yes, as a person would.
    def before_answered_or_done() -> bool:
        for box in page.findChildren(QMessageBox, "busy_question"):
            if box.isVisible():
                box.button(QMessageBox.StandardButton.Yes).click()
        return page.state.bench_before is not None

    qtbot.waitUntil(before_answered_or_done, timeout=90_000)
    wait_idle(qtbot, page)
    before = page.state.bench_before
    assert before is not None and before.label == "before" and not before.cancelled
    assert before.settings["innodb_flush_log_at_trx_commit"] == "1"

    drop_in = server.include_dir / "90-verify-test.cnf"
    drop_in.write_text("[mysqld]\ninnodb_flush_log_at_trx_commit = 2\n")
    try:
        server.restart()
        page.run_after.click()

        # Just after a restart InnoDB may still be purging the "before" run's rows, and the
        # page then asks before benchmarking a busy server: answer Yes, as a person would.
        def answered_or_done() -> bool:
            for box in page.findChildren(QMessageBox, "busy_question"):
                if box.isVisible():
                    box.button(QMessageBox.StandardButton.Yes).click()
            return page.state.bench_after is not None

        qtbot.waitUntil(answered_or_done, timeout=90_000)
        wait_idle(qtbot, page)
    finally:
        drop_in.unlink()
        server.restart()
    after = page.state.bench_after
    assert after is not None and after.settings["innodb_flush_log_at_trx_commit"] == "2"
    assert page.bar.value() == 1000

    # Both reports in the chart, every run in the table.
    assert page.chart.series_names() == ["before", "after"]
    assert page.chart.latency.series(), "the latency chart shows the chosen run"
    assert page.chart.run_box.count() == 6
    assert page.chart.run_box.itemData(0) == ("autocommit", 1)
    assert page.table.rowCount() == 6
    row = [page.table.item(0, c).text() for c in range(page.table.columnCount())]  # type: ignore[union-attr]
    # The verdict: a change with its interval, no change within the band, or undecided;
    # "(client-bound)" follows it when either run's clients set the pace (a busy machine can
    # make them so).
    assert row[0] == "autocommit ×1" and COLUMNS[0][0] == "run"
    assert re.fullmatch(VERDICT_TEXT, row[VERDICT]), row[VERDICT]
    assert all(len(r.rounds) == ROUNDS for r in before.results + after.results)
    # What changed between the two runs is said under the table.
    assert page.settings_note.isVisible()
    assert "innodb_flush_log_at_trx_commit 1 → 2" in page.settings_note.text()
    for report in (before, after):
        for r in report.results:
            assert r.commits > 0 and r.latency.p50_ms <= r.latency.p95_ms <= r.latency.p99_ms

    out = tmp_path / "bench.json"
    page.save_results(out)
    saved = [BenchReport.from_json(json.dumps(x)) for x in json.loads(out.read_text())]
    assert saved == [before, after]
    assert scratch(server) == []


def test_cancel_stops_the_run(qtbot: QtBot, page: VerifyPage, server: PrivateServer) -> None:
    page.seconds.setValue(120)
    page.run_before.click()
    qtbot.waitUntil(lambda: page.cancel.isEnabled() and bool(scratch(server)), timeout=30_000)
    assert not page.isComplete()
    with qtbot.waitSignal(page.task.ended, timeout=15_000):  # type: ignore[union-attr]
        page.cancel.click()
    report = page.state.bench_before
    assert report is not None and report.cancelled
    assert "cancelled" in page.status.text()
    assert page.isComplete()
    assert scratch(server) == []


def test_asks_before_running_on_a_busy_server(
    qtbot: QtBot, page: VerifyPage, server: PrivateServer
) -> None:
    def opener() -> PyMySQLSession:
        return PyMySQLSession.direct(user=getpass.getuser(), socket_path=str(server.socket_path))

    load = Benchmark(opener, BenchOptions(seconds=60, threads=(2,), workloads=("autocommit",)))
    worker = threading.Thread(target=load.run)
    worker.start()
    try:
        qtbot.waitUntil(lambda: bool(scratch(server)), timeout=30_000)
        page.sample_seconds = 1.0
        page.run_before.click()
        qtbot.waitUntil(lambda: page.confirm_box is not None, timeout=30_000)
        box = page.confirm_box
        assert box is not None and "Others are writing" in box.text()
        box.done(QMessageBox.StandardButton.No)
        qtbot.waitUntil(lambda: "Not run" in page.status.text(), timeout=5_000)
        # No benchmark: its own workload is watched instead, with no load added.
        assert "watched instead" in page.status.text()
        wait_idle(qtbot, page)
        assert page.state.bench_before is None
        assert page.state.watch_before is not None and page.state.watch_before.rounds == 5
        assert "busy" in page.rate_label.text()
    finally:
        load.cancel.set()
        worker.join(30)
    assert scratch(server) == []


def test_an_answered_busy_question_is_gone_before_the_next(qtbot: QtBot, page: VerifyPage) -> None:
    """A hidden old question left among the page's children once stood in for the new one,
    and the test waiting to answer it timed out."""
    busy = WriteRate(
        seconds=1.0,
        commits_per_s=500.0,
        rows_per_s=500.0,
        redo_bytes_per_s=None,
        threads_running=3,
        busy=True,
        why="500 commits/s",
    )
    page._ask("before", busy)
    first = page.confirm_box
    assert first is not None and first.isVisible()
    first.button(QMessageBox.StandardButton.No).click()
    qtbot.waitUntil(lambda: not page.findChildren(QMessageBox, "busy_question"), timeout=10_000)
    assert "server is busy" in page.status.text()
    page._ask("after", busy)
    boxes = page.findChildren(QMessageBox, "busy_question")
    assert len(boxes) == 1 and boxes[0].isVisible() and boxes[0] is page.confirm_box
    boxes[0].button(QMessageBox.StandardButton.No).click()


def test_says_when_the_clients_were_the_limit(
    qtbot: QtBot, page: VerifyPage, server: PrivateServer
) -> None:
    """A real run whose clients set the pace (InnoTune's own client, judged as over a link)
    next to a normal one: the table marks the change and the note says why."""
    import dataclasses

    from app.bench.cpu import CpuProbe
    from app.remote.local import LocalTransport

    def opener() -> PyMySQLSession:
        return PyMySQLSession.direct(user=getpass.getuser(), socket_path=str(server.socket_path))

    options = BenchOptions(seconds=1, threads=(1,), workloads=("autocommit",))
    probe = CpuProbe(LocalTransport(), server.running_pid(), "link")
    before = Benchmark(opener, dataclasses.replace(options, label="before"), cpu_probe=probe).run()
    after = Benchmark(opener, dataclasses.replace(options, label="after")).run()
    first = before.results[0]
    assert first.cpu is not None and first.cpu.client_bound and first.cpu.server_cores
    page.state.bench_before, page.state.bench_after = before, after
    page.show_results()
    note = page.pace_note
    assert note.isVisible()
    assert "The clients, not the server, were the limit" in note.text()
    assert "before: autocommit ×1" in note.text() and "SSH link" in note.text()
    row = [page.table.item(0, c).text() for c in range(page.table.columnCount())]  # type: ignore[union-attr]
    assert row[VERDICT].endswith("(client-bound)")
    # The server's cores, before / after (the clients' CPU is the note's to name).
    assert row[CPU] == f"{first.cpu.server_cores:.2f} / —"

    page.state.bench_before = after
    page.show_results()
    assert not page.pace_note.isVisible()
    # The same settings on both sides (the same server, untouched): said plainly.
    assert page.settings_note.text().startswith("Both runs used the same settings")
    assert page.settings_note.text().endswith(
        "any difference between them is the host's, not a setting's."
    )


def test_before_is_refused_once_the_changes_are_applied(
    qtbot: QtBot, page: VerifyPage, server: PrivateServer
) -> None:
    """The issue's flow: Verify after Apply, "before" on the already-tuned server."""
    page.initializePage()
    wait_idle(qtbot, page)
    page.state.changes_in_force = "20261127-snap"
    page.run_before.click()
    text = page.status.text()
    assert "Not run: the changes are applied already (snapshot 20261127-snap)" in text
    assert "Roll the changes back on the Apply page" in text
    assert not page.running() and page._pending is None
    assert page.state.bench_before is None and scratch(server) == []
