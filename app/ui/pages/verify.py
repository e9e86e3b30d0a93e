"""The Verify page: the server's current write rate, then a bounded before/after benchmark.

"Before" is measured before the changes are applied (or before a rollback), "after" once
they are: the Apply page's "Measure before and after" runs both as part of applying, and this
page shows them when it opens. Both are kept in the wizard's state so they are saved with the
snapshot, and are shown side by side as charts and a table. Nothing runs here without a click
on a Run button, and on a busy server only after a second, explicit yes.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidgetItem,
    QWizardPage,
)

from app.access.doctor import DoctorResult, Secrets
from app.domain.bench import (
    ROUNDS,
    BenchReport,
    WorkloadResult,
    WriteRate,
    change_text,
    commits_text,
)
from app.domain.drift import drift_held, drift_stands, drift_text
from app.domain.errors import InnoTuneError
from app.domain.pace import pace_text
from app.domain.target import Target
from app.flows.measure import rate_text
from app.ui.hostworker import Progress, Task, TaskHandle
from app.ui.logview import error_html, error_parts, link_to_log, log_error
from app.ui.pages.apply_view import BENCH_TIME_LABEL, bench_time_spin
from app.ui.pages.verify_watch import WatchPanel
from app.ui.state import WizardState
from app.ui.widgets.benchchart import CHART_HEIGHT, BenchChart, run_key
from app.ui.widgets.fittable import FitTable
from app.ui.widgets.scrollpage import scrolling_body

log = logging.getLogger(__name__)
LABELS = ("before", "after")
#: The results table's columns: a short header (two lines at most) and what it means (its
#: tooltip). The headers are short so every one reads in full in the default window.
COLUMNS = (
    ("run", "The workload and how many clients wrote at once, as the charts name the run"),
    ("before\nc/s", "Commits per second, before the changes"),
    ("after\nc/s", "Commits per second, after the changes"),
    (
        "verdict",
        "Faster or slower when every likely change lies on one side of none; no change when "
        "they all lie within ±10%; else undecided: measure longer",
    ),
    (
        "latency ms\np50/p95/p99",
        "Commit latency in ms: median, 95th and 99th percentile; before, then after",
    ),
    ("rows/s\nbefore / after", "Rows written per second: before / after"),
    ("redo MiB\nbefore / after", "Redo log written during the run, in MiB: before / after"),
    (
        "server CPU, cores\nbefore / after",
        "CPU the server process used during the run, in cores busy (1.00: one core busy the whole "
        "run): before / after. Runs whose clients set the pace are named below the table.",
    ),
)
#: Where the verdict and the CPU figures are (they wrap within a fixed width).
VERDICT, CPU = 3, len(COLUMNS) - 1


@dataclass(frozen=True)
class SampleInputs:
    """A write-rate sample: how to log in, and for how long."""

    target: Target
    secrets: Secrets
    seconds: float


@dataclass(frozen=True)
class BenchInputs:
    """One labelled benchmark, as asked for when Run was pressed."""

    target: Target
    secrets: Secrets
    label: str
    seconds: float
    threads: int
    use_sysbench: bool
    rate: WriteRate | None
    rounds: int = ROUNDS
    snapshot_in_force: str = ""


def sample_rate(conn: DoctorResult, inputs: SampleInputs, progress: Progress) -> WriteRate:
    """The current write rate, through a session of its own (a task)."""
    from app.flows.measure import sample_write_rate

    return sample_write_rate(
        conn, inputs.target, inputs.secrets, inputs.seconds, progress.cancelled
    )


def run_bench(conn: DoctorResult, inputs: BenchInputs, progress: Progress) -> BenchReport:
    """One labelled benchmark (a task); progress goes out as fractions, text as ``say``."""
    from app.flows.measure import MeasureOptions, benchmark

    options = MeasureOptions(inputs.seconds, inputs.threads, inputs.rounds, inputs.use_sysbench)
    return benchmark(
        conn,
        inputs.target,
        inputs.secrets,
        inputs.label,
        options,
        cancel=progress.cancelled,
        say=progress.say,
        progress=progress.post,
        rate=inputs.rate,
        snapshot_in_force=inputs.snapshot_in_force,
    )


def cpu_text(result: WorkloadResult | None) -> str:
    """The CPU a run's server used, in cores, e.g. ``0.93`` (— where unmeasured)."""
    if result is None:
        return ""
    cores = result.cpu.server_cores if result.cpu is not None else None
    return "—" if cores is None else f"{cores:.2f}"


class VerifyPage(QWizardPage):
    """Current write rate; Run before / Run after; charts, table, save."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle("Verify")
        self.setSubTitle("A short before/after write benchmark shows what the changes did.")
        self.setObjectName("page_verify")
        self.task: TaskHandle | None = None
        self.rate: WriteRate | None = None
        self.sample_seconds = 3.0
        self._pending: str | None = None  # the label to run once the rate is known
        self.confirm_box: QMessageBox | None = None
        self._shown_reports: tuple[BenchReport, ...] = ()  # the reports drawn (held, not ids)

        self.rate_label = QLabel("The current write rate is measured when the page opens.")
        self.rate_label.setObjectName("write_rate")
        self.rate_label.setWordWrap(True)
        self.seconds = bench_time_spin()
        self.seconds.setRange(2, 3600)  # a run of its own may be as short or long as wanted
        self.seconds.setValue(round(self.state.bench_seconds))
        self.seconds.valueChanged.connect(self._on_seconds_changed)
        self.threads = QSpinBox()
        self.threads.setRange(1, 64)
        self.threads.setValue(4)
        self.threads.setToolTip("Clients of the second run of each workload (the first uses 1).")
        self.threads.setAccessibleName("benchmark clients")
        self.use_sysbench = QCheckBox("Use s&ysbench if the server has it")
        self.use_sysbench.setChecked(True)
        self.run_before = QPushButton("Run bef&ore")
        self.run_after = QPushButton("Run a&fter")
        self.cancel = QPushButton("&Cancel benchmark")
        self.cancel.setEnabled(False)
        self.save = QPushButton("&Save results…")
        self.save.setEnabled(False)
        self.run_before.clicked.connect(self._on_run_before_clicked)
        self.run_after.clicked.connect(self._on_run_after_clicked)
        self.cancel.clicked.connect(self._on_cancel_clicked)
        self.save.clicked.connect(self._on_save_clicked)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.status = QLabel(
            "“Measure before and after” on the Apply page measures both as part of applying. "
            "Here either can run again: “before” only while the changes are not applied. "
            "Each run writes only to a scratch schema that is dropped at the end."
        )
        self.status.setWordWrap(True)
        self.status.setObjectName("verify_status")
        link_to_log(self.status)  # rich text: every text put here is escaped
        self.chart = BenchChart()
        # Its own height, no more: in the scrolling page a stretched chart pushed the table
        # below the window.
        self.chart.setFixedHeight(CHART_HEIGHT)
        self.table = FitTable(0, len(COLUMNS))
        self.table.setObjectName("bench_table")
        self.table.setHorizontalHeaderLabels([short for short, _ in COLUMNS])
        for column, (_, meaning) in enumerate(COLUMNS):
            header_item = self.table.horizontalHeaderItem(column)
            if header_item is not None:
                header_item.setToolTip(meaning)
        # Every column as wide as its header and its cells, the verdicts wrapped: the headers
        # read in full at the default window size.
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        # The verdict and the CPU figures wrap onto a second line within a fixed width.
        chars = header.fontMetrics().averageCharWidth()
        for column, width in ((VERDICT, 18 * chars), (CPU, 11 * chars)):
            title = max(
                header.fontMetrics().horizontalAdvance(x) for x in COLUMNS[column][0].split("\n")
            )
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, max(width, title + 2 * chars))
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        rows.hide()  # row numbers mean nothing here
        self.table.setWordWrap(True)
        self.table.setAccessibleName("benchmark results")
        # Runs whose clients, not the server, set the pace: their change is not the server's.
        self.pace_note = QLabel("")
        self.pace_note.setObjectName("pace_note")
        self.pace_note.setWordWrap(True)
        self.pace_note.setVisible(False)
        # How the pair was measured (interleaved or not, the budget and rounds), and whether
        # before and after ran under the same settings.
        self.settings_note = QLabel("")
        self.settings_note.setObjectName("settings_note")
        self.settings_note.setWordWrap(True)
        self.settings_note.setVisible(False)
        # On a busy server, its own workload watched instead: the default there.
        self.watch_panel = WatchPanel(state, self)
        self.watch_panel.ran.connect(self._on_task_ended)

        options = QGridLayout()
        duration_label = QLabel(BENCH_TIME_LABEL)
        duration_label.setBuddy(self.seconds)
        clients_label = QLabel("C&lients:")
        clients_label.setBuddy(self.threads)
        options.addWidget(duration_label, 0, 0)
        options.addWidget(self.seconds, 0, 1)
        options.addWidget(clients_label, 0, 2)
        options.addWidget(self.threads, 0, 3)
        options.addWidget(self.use_sysbench, 0, 4)
        buttons = QHBoxLayout()
        for b in (self.run_before, self.run_after, self.cancel, self.save):
            buttons.addWidget(b)
        buttons.addStretch(1)
        # The page scrolls as a whole: the chart, every run's row and the notes under them
        # are taller together than the default window.
        layout = scrolling_body(self)
        layout.addWidget(self.rate_label)
        layout.addLayout(options)
        layout.addLayout(buttons)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.chart)
        layout.addWidget(self.table)
        layout.addWidget(self.settings_note)
        layout.addWidget(self.pace_note)
        layout.addWidget(self.watch_panel)

    # -- page life -------------------------------------------------------------------------
    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        self.seconds.setValue(round(self.state.bench_seconds))
        self.show_results()
        self.watch_panel.show_results()
        before, after = self.state.bench_before, self.state.bench_after
        if before is not None and after is not None and not self.running():
            in_force = after.snapshot_in_force
            changes = f"changes of snapshot {in_force}" if in_force else "changes"
            interleaved = after.measurement and after.measurement.method == "interleaved"
            self.status.setText(
                html.escape(
                    f"“Before” and “after” were measured in turn, round by round: the old "
                    f"values set for “before”, the {changes} for “after”."
                    if interleaved
                    else f"“Before” was measured on the unchanged server and “after” with the "
                    f"{changes} in force."
                )
            )
        if self.state.connected and not self.running():
            self._sample(then=None)

    def _on_seconds_changed(self, value: int) -> None:
        self.state.bench_seconds = float(value)

    def cleanupPage(self) -> None:  # noqa: N802 - Qt's name
        self.stop()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return not self.running()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt's name
        # Leaving the page or closing the wizard ends the benchmark (and drops its schema)
        # rather than leaving it writing behind the user's back. QWizard also hides the page
        # for a moment while it switches to it (after initializePage started the write-rate
        # sample), so unless the window itself is going away, look again once the switch is
        # over and stop only if the page really is out of sight.
        if self.window().isHidden():
            self.stop()
        else:
            QTimer.singleShot(0, self, self._stop_if_hidden)
        super().hideEvent(event)

    def _stop_if_hidden(self) -> None:
        if not self.isVisible():
            self.stop()

    def running(self) -> bool:
        return (self.task is not None and self.task.is_running()) or self.watch_panel.running()

    def stop(self, wait_ms: int = 30000) -> None:
        """Cancel the page's tasks and wait for them (the schema is dropped on the way out)."""
        # Every task of the page, not only the last: a sample whose result queued the
        # benchmark may still be ending, and a task outliving its page crashed the suite.
        for task in self.findChildren(TaskHandle):
            if task.is_running():
                task.stop(wait_ms)

    # -- the write rate, and consent -------------------------------------------------------
    def _sample(self, then: str | None) -> None:
        self._pending = then
        seconds = self.sample_seconds
        self.rate_label.setText(f"Measuring the server's current write rate ({seconds:g} s)…")
        inputs = SampleInputs(*self._login(), seconds)
        task = self._start(Task("write rate", sample_rate, inputs))
        task.finished.connect(self._on_rate_finished)

    def _on_rate_finished(self, rate: object) -> None:
        assert isinstance(rate, WriteRate)
        self.rate = rate
        self.rate_label.setText(html.escape(rate_text(rate)))
        label, self._pending = self._pending, None
        if label is None:
            state = self.state
            compare = state.watch_before and state.changes_in_force and not state.watch_after
            if (rate.busy or compare) and not self.watch_panel.running():
                # Busy: watching its own workload is the proof that adds no load.
                busy = "The server is busy, so its own workload is watched."
                again = "Its workload was watched before the changes; now it is watched again."
                self.watch_panel.start(busy if rate.busy else again)
            return
        if rate.busy:
            self._ask(label, rate)
        else:
            self._queue_bench(label)

    def _ask(self, label: str, rate: WriteRate) -> None:
        box = QMessageBox(self)
        box.setObjectName("busy_question")
        # Gone once answered: a hidden old question must never stand in for a new one.
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("The server is busy")
        box.setText(
            f"Others are writing to this server ({html.escape(rate.why)}). The benchmark "
            "would slow them down, and their writes would blur its figures. Run it anyway?"
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.finished.connect(lambda result: self._on_busy_answered(label, result))
        self.confirm_box = box
        box.open()

    def _on_busy_answered(self, label: str, result: int) -> None:
        self.confirm_box = None
        if result == QMessageBox.StandardButton.Yes:
            self._queue_bench(label)
        else:
            self.status.setText(
                "Not run: the server is busy. Its own workload is watched instead, with no "
                "load added (below)."
            )
            self.watch_panel.start()

    # -- the benchmark ---------------------------------------------------------------------
    def _on_run_before_clicked(self) -> None:
        self.start_run("before")

    def _on_run_after_clicked(self) -> None:
        self.start_run("after")

    def start_run(self, label: str) -> None:
        """Sample the write rate, ask if busy, then benchmark (the click is the consent)."""
        if self.running() or label not in LABELS:
            return
        if not self.state.connected:
            problem, fix = "Not connected.", "Go back to the Connect page and check the connection."
            log_error(log, "benchmark", problem, fix)
            self.status.setText(error_html(problem, fix))
            return
        if label == "before" and self.state.changes_in_force:
            problem = (
                "Not run: the changes are applied already (snapshot "
                f"{self.state.changes_in_force}), so a “before” run now would measure the "
                "changed server."
            )
            fix = (
                "Roll the changes back on the Apply page to measure “before”, or run “after” "
                "and compare it with a run saved before the change."
            )
            log_error(log, "benchmark", problem, fix)
            self.status.setText(error_html(problem, fix))
            return
        self._sample(then=label)

    def _queue_bench(self, label: str) -> None:
        # The rate task has not ended yet (its result comes first): start once it has.
        if self.running():
            assert self.task is not None
            self.task.ended.connect(lambda: self._bench(label))
        else:
            self._bench(label)

    def _login(self) -> tuple[Target, Secrets]:
        if self.state.target is None:
            raise InnoTuneError("Not connected.", "Go back to the Connect page.")
        return self.state.target, self.state.secrets

    def _bench(self, label: str) -> None:
        seconds, threads = float(self.seconds.value()), self.threads.value()
        target, secrets = self._login()
        inputs = BenchInputs(
            target,
            secrets,
            label,
            seconds,
            threads,
            self.use_sysbench.isChecked(),
            self.rate,
            snapshot_in_force=self.state.changes_in_force or "",
        )
        self.bar.setValue(0)
        self.status.setText(f"Running “{label}” ({seconds:.0f} s)…")
        task = self._start(Task("benchmark", run_bench, inputs))
        task.finished.connect(self._on_bench_finished)
        task.progress.connect(self._on_bench_progress)
        self.cancel.setEnabled(True)

    def _start(self, task: Task) -> TaskHandle:
        handle = self.task = self.state.worker().submit(task, self)
        handle.say.connect(self._on_task_say)
        handle.failed.connect(self._on_task_failed)
        handle.ended.connect(self._on_task_ended)
        self.run_before.setEnabled(False)
        self.run_after.setEnabled(False)
        self.completeChanged.emit()
        return handle

    def _on_task_say(self, text: str) -> None:
        self.status.setText(html.escape(text) + "…")

    def _on_bench_progress(self, fraction: object) -> None:
        if isinstance(fraction, float):
            self.bar.setValue(round(fraction * 1000))

    def _on_bench_finished(self, report: object) -> None:
        assert isinstance(report, BenchReport)
        if report.label == "before":
            self.state.bench_before = report
        else:
            self.state.bench_after = report
        from app.ui.pages.apply_state import keep_bench

        keep_bench(self.state, report.label, report)
        self.bar.setValue(1000 if not report.cancelled else self.bar.value())
        word = "cancelled; the scratch schema was dropped" if report.cancelled else "done"
        self.status.setText(html.escape(f"“{report.label}” {word}."))
        self.show_results()

    def _on_task_failed(self, exc: object) -> None:
        # The worker has logged it, with its traceback, for the Details… link.
        self._pending = None
        if self.rate_label.text().startswith("Measuring"):
            self.rate_label.setText("The current write rate could not be measured.")
        problem, fix = error_parts(exc)
        self.status.setText(error_html(problem, fix))

    def _on_task_ended(self) -> None:
        self.cancel.setEnabled(False)
        self.completeChanged.emit()
        self.run_before.setEnabled(True)
        self.run_after.setEnabled(True)

    def _on_cancel_clicked(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.status.setText("Cancelling: finishing the current transaction…")

    # -- results ---------------------------------------------------------------------------
    def reports(self) -> list[BenchReport]:
        return [r for r in (self.state.bench_before, self.state.bench_after) if r is not None]

    def show_results(self) -> None:
        reports = self.reports()
        drawn = self._shown_reports
        if len(drawn) == len(reports) and all(a is b for a, b in zip(drawn, reports, strict=True)):
            return  # the same reports: redrawing the charts is most of opening the page
        self._shown_reports = tuple(reports)
        self.chart.show_reports(reports)
        self.save.setEnabled(bool(reports))
        before, after = self.state.bench_before, self.state.bench_after
        keys: list[tuple[str, int]] = []
        for report in reports:
            keys += [
                (r.workload, r.threads)
                for r in report.results
                if (r.workload, r.threads) not in keys
            ]
        self.table.setRowCount(len(keys))
        # Every run both reports have is judged at once (the verdict widens for them).
        comparisons = max(
            1,
            sum(
                1
                for w, t in keys
                if before and after and before.result(w, t) and after.result(w, t)
            ),
        )
        held, stands = drift_held(before, after), drift_stands(before, after)
        for row, (workload, threads) in enumerate(keys):
            b = before.result(workload, threads) if before else None
            a = after.result(workload, threads) if after else None

            def lat(r: WorkloadResult | None) -> str:
                # Without the spaces around "/": two such columns fit the default window.
                return "" if r is None else r.latency.text().replace(" / ", "/")

            def redo(r: object) -> str:
                value = None if r is None else r.counters.redo_bytes  # type: ignore[attr-defined]
                return "—" if value is None else f"{value / 1048576:,.1f}"

            def rows(r: WorkloadResult | None) -> str:
                return "—" if r is None else f"{r.rows_per_s:,.0f}"

            cells = [
                run_key(workload, threads),
                commits_text(b),
                commits_text(a),
                change_text(b, a, comparisons, held, stands),
                "\n".join(f"{side} {lat(r)}" for side, r in zip(LABELS, (b, a), strict=True) if r),
                f"{rows(b)} / {rows(a)}",
                f"{redo(b)} / {redo(a)}",
                f"{cpu_text(b)} / {cpu_text(a)}",
            ]
            for col, text in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.fit()
        note = pace_text(reports)
        self.pace_note.setText(note)
        self.pace_note.setVisible(bool(note))
        same = after.settings_note(before) if before and after else ""
        how = after.measurement if after is not None and before is not None else None
        if how is not None and before is not None and before.measurement == how:
            same = " ".join(x for x in (how.text(), drift_text(before, after), same) if x)
        self.settings_note.setText(same)
        self.settings_note.setVisible(bool(same))

    def save_results(self, path: Path) -> None:
        """Write the before and after reports as JSON (a list, before first)."""
        text = ",\n".join(r.to_json() for r in self.reports())
        path.write_text(f"[\n{text}\n]\n")

    def _on_save_clicked(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Save benchmark results", "innotune-bench.json", "JSON (*.json)"
        )
        if name:
            try:
                self.save_results(Path(name))
            except OSError as exc:
                problem = f"Could not save {name}: {exc.strerror or exc}."
                fix = "Choose another place to save the results."
                log_error(log, "saving the benchmark results", problem, fix)
                self.status.setText(error_html(problem, fix))
            else:
                self.status.setText(f"Saved to {html.escape(name)}.")
