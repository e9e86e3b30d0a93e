"""The Exercises window: short guided experiments run for real on the practice server.

One tab per exercise: a plain introduction, Start (and Stop), live progress from a worker,
the measured result as a table and a chart, and what just happened. The exercises
themselves live in ``app.exercises`` (no Qt); their words in
``resources/exercises/*.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCharts import QBarCategoryAxis, QBarSeries, QBarSet, QChart, QChartView, QValueAxis
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.access.doctor import DoctorResult
from app.exercises.model import (
    Chart,
    ExerciseCancelled,
    ExerciseResult,
    ExerciseText,
    Lab,
    load_texts,
    nice_ticks,
)
from app.flows.exercising import practice_lab as lab_at
from app.flows.exercising import run_exercise
from app.ui.hostworker import HostWorker, Progress, Task, TaskHandle

#: Builds the lab an exercise runs in (called in the task: it may start the server).
LabFactory = Callable[[Progress], Lab]


@dataclass(frozen=True)
class ExerciseInputs:
    """Which exercise, in which lab, at which scale (the tests shorten the runs)."""

    exercise: str
    lab_factory: LabFactory
    scale: tuple[tuple[str, object], ...] = ()


def exercise_task(_conn: DoctorResult, inputs: ExerciseInputs, progress: Progress) -> object:
    """Build the lab (it may start the practice server), then run the exercise in it."""
    lab = inputs.lab_factory(progress)
    return run_exercise(inputs.exercise, lab, dict(inputs.scale))


def practice_lab(progress: Progress) -> Lab:
    """The user's practice server, started if needed; scratch space next to it."""
    from app.places import default_practice_dir

    progress.say("Starting the practice server (the first start takes a few seconds) …")
    return lab_at(default_practice_dir(), progress.say, progress.cancelled)


class ExerciseChart(QChartView):
    """A bar chart of an exercise's result."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(280)
        self.setChart(QChart())

    def show_chart(self, spec: Chart) -> None:
        """Draw ``spec`` (replacing what was shown)."""
        chart = QChart()
        chart.setTitle(spec.title)
        series = QBarSeries()
        for name, values in spec.series.items():
            bars = QBarSet(name)
            bars.append([float(v) for v in values])
            series.append(bars)
        # A figure on each bar while the bars are wide enough to hold one (the flushing
        # chart's 18 seconds are not: its values are in the table).
        series.setLabelsVisible(len(spec.categories) <= 8)
        chart.addSeries(series)
        x = QBarCategoryAxis()
        x.append(spec.categories)
        y = QValueAxis()
        top = max((v for vs in spec.series.values() for v in vs), default=0.0)
        end, step, decimals = nice_ticks(top)  # round ticks: 0, 10000, 20000; never 39576.1
        y.setRange(0, end)
        y.setTickType(QValueAxis.TickType.TicksDynamic)
        y.setTickAnchor(0)
        y.setTickInterval(step)
        y.setLabelFormat(f"%.{decimals}f")
        y.setTitleText(spec.y_label)
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)
        chart.legend().setVisible(len(spec.series) > 1)
        self.setChart(chart)

    def clear_chart(self) -> None:
        """Show nothing (a new run's numbers are on their way)."""
        self.setChart(QChart())

    def axis_labels(self) -> list[str]:
        """The value axis's tick labels as drawn (for tests)."""
        axes = [a for a in self.chart().axes() if isinstance(a, QValueAxis)]
        if not axes:
            return []
        axis = axes[0]
        fmt, step = axis.labelFormat(), axis.tickInterval()
        count = round((axis.max() - axis.min()) / step) if step else 0
        return [fmt % (axis.min() + i * step) for i in range(count + 1)]

    def series_names(self) -> list[str]:
        """The names of the bar sets shown (for tests)."""
        return [
            bars.label()
            for series in self.chart().series()
            if isinstance(series, QBarSeries)
            for bars in series.barSets()
        ]


class ExercisePanel(QWidget):
    """One exercise: introduction, Start/Stop, progress, result table and chart, explanation."""

    finished = Signal(object)  # the ExerciseResult, or the exception

    def __init__(
        self,
        text: ExerciseText,
        lab_factory: LabFactory,
        scale: dict[str, object] | None = None,
        parent: QWidget | None = None,
        worker: HostWorker | None = None,
    ) -> None:
        super().__init__(parent)
        self.text = text
        self.setObjectName(f"exercise_{text.id}")
        self._lab_factory = lab_factory
        self._scale = dict(scale or {})
        # The practice server's worker (one for every exercise of the dialog).
        self.worker = worker or HostWorker(name="exercises")
        self.task: TaskHandle | None = None
        self.result: ExerciseResult | None = None

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        content = QWidget()
        scroll.setWidget(content)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        self.intro = QLabel(text.before_start)
        self.intro.setWordWrap(True)
        self.intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("&Start")
        self.start_button.setAccessibleName(f"start {text.title}")
        self.stop_button = QPushButton("S&top")
        self.stop_button.setEnabled(False)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        self.progress = QPlainTextEdit()
        self.progress.setReadOnly(True)
        self.progress.setAccessibleName("progress")
        self.progress.setMaximumHeight(110)
        self.recorded = QLabel()
        self.recorded.setWordWrap(True)
        self.recorded.setStyleSheet("QLabel { background: #fff3cd; padding: 4px; }")
        self.recorded.hide()
        self.table = QTableWidget()
        self.table.setAccessibleName("result table")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # Long headers ("pages written per 1,000 transactions") wrap instead of being cut.
        self.table.horizontalHeader().setDefaultAlignment(
            Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
        )
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.chart = ExerciseChart()
        self.happened = QLabel()
        self.happened.setWordWrap(True)
        self.happened.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.happened.setAccessibleName("what just happened")
        layout.addWidget(self.intro)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.recorded)
        layout.addWidget(self.table)
        layout.addWidget(self.chart)
        layout.addWidget(QLabel("<b>What just happened</b>"))
        layout.addWidget(self.happened)
        self.table.hide()
        self.chart.hide()
        self.start_button.clicked.connect(self._on_start_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)

    def _on_start_clicked(self) -> None:
        if self.task is not None and self.task.is_running():
            return
        self.progress.clear()
        self.happened.clear()
        self.recorded.hide()
        # A rerun shows none of the last run's numbers while the new ones are measured.
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.table.hide()
        self.chart.clear_chart()
        self.chart.hide()
        self.result = None
        inputs = ExerciseInputs(self.text.id, self._lab_factory, tuple(self._scale.items()))
        self.task = self.worker.submit(Task("exercise", exercise_task, inputs), self)
        self.task.say.connect(self._on_task_say)
        self.task.finished.connect(self._on_task_finished)
        self.task.failed.connect(self._on_task_failed)
        self.task.ended.connect(self._on_task_ended)
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)

    def _on_stop_clicked(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.progress.appendPlainText("Stopping after the current step …")

    def _on_task_say(self, text: str) -> None:
        self.progress.appendPlainText(text)

    def _on_task_finished(self, result: object) -> None:
        assert isinstance(result, ExerciseResult)
        self.result = result
        self.show_result(result)
        self.finished.emit(result)

    def _on_task_failed(self, exc: object) -> None:
        if isinstance(exc, ExerciseCancelled):
            self.happened.setText("Stopped. Start again whenever you like.")
        else:
            problem = getattr(exc, "problem", None) or str(exc)
            fix = getattr(exc, "fix", None)
            self.happened.setText(f"The exercise failed: {problem}" + (f"\n{fix}" if fix else ""))
        self.finished.emit(exc)

    def _on_task_ended(self) -> None:
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    def show_result(self, result: ExerciseResult) -> None:
        """Fill the table, the chart and the explanation."""
        if result.recorded:
            self.recorded.setText(
                "<b>Recorded result, not measured here.</b> " + result.recorded.replace("\n", " ")
            )
            self.recorded.show()
        self.table.clear()
        self.table.setColumnCount(len(result.headers))
        self.table.setHorizontalHeaderLabels(result.headers)
        self.table.setRowCount(len(result.rows))
        for r, row in enumerate(result.rows):
            for c, cell in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(cell))
        self.table.resizeRowsToContents()
        # A header longer than its share of the width gets two lines (it wraps, see above).
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        share = max(1, self.table.viewport().width() // max(1, len(result.headers)))
        lines = 2 if any(metrics.horizontalAdvance(h) + 12 > share for h in result.headers) else 1
        header.setFixedHeight(lines * metrics.lineSpacing() + 10)
        # As tall as its rows: the panel scrolls, the table does not.
        height = self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height)
        self.table.show()
        if result.chart is not None:
            self.chart.show_chart(result.chart)
            self.chart.show()
        else:
            self.chart.hide()
        self.happened.setText(result.explanation)

    def stop_and_wait(self) -> None:
        """Ask a running exercise to stop and wait for it (the window is closing)."""
        if self.task is not None and self.task.is_running():
            self.task.stop(300_000)


class ExercisesDialog(QDialog):
    """Every exercise in a tab of its own."""

    def __init__(
        self,
        parent: QWidget | None = None,
        lab_factory: LabFactory = practice_lab,
        scale: dict[str, dict[str, object]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("exercises_dialog")
        self.setWindowTitle("Exercises: see each trade-off happen")
        self.resize(1060, 760)
        layout = QVBoxLayout(self)
        about = QLabel(
            "Each exercise runs for real on the practice server (never on a server you "
            "connected to) and ends with what it measured. A practice server started here "
            "stops when you close InnoTune."
        )
        about.setWordWrap(True)
        layout.addWidget(about)
        # The exercises in a list beside the one shown: eight tabs in a row were wider than
        # a 1280-pixel screen, and tabs behind scroll arrows hide exercises.
        self.chooser = QListWidget()
        self.chooser.setObjectName("exercise_list")
        self.tabs = QStackedWidget()
        worker = HostWorker(name="exercises")  # the practice server's
        self.panels: dict[str, ExercisePanel] = {}
        self.panels_texts = load_texts()
        for text in self.panels_texts:
            panel = ExercisePanel(text, lab_factory, (scale or {}).get(text.id), worker=worker)
            self.panels[text.id] = panel
            self.tabs.addWidget(panel)
            self.chooser.addItem(text.title)
        metrics = self.chooser.fontMetrics()
        widest = max(metrics.horizontalAdvance(t.title) for t in self.panels_texts)
        width = widest + 2 * self.chooser.frameWidth() + 16
        self.chooser.setFixedWidth(width)
        self.chooser.currentRowChanged.connect(self.tabs.setCurrentIndex)
        self.tabs.currentChanged.connect(self.chooser.setCurrentRow)
        self.chooser.setCurrentRow(0)
        row = QHBoxLayout()
        row.addWidget(self.chooser)
        row.addWidget(self.tabs, 1)
        layout.addLayout(row, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def done(self, result: int) -> None:
        """Let a running exercise clean up (restore settings, stop its servers) first."""
        for panel in self.panels.values():
            panel.stop_and_wait()
        super().done(result)


def scratch_lab(server_base: Path, workdir: Path) -> LabFactory:
    """A lab factory for a private server at ``server_base`` (tests, demonstrations)."""
    from app.practice.server import PrivateServer

    def make(progress: Progress) -> Lab:
        server = PrivateServer(server_base)
        server.start()
        return Lab(server, workdir, say=progress.say, cancelled=progress.cancelled)

    return make
