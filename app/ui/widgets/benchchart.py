"""Before/after charts of a write benchmark, drawn with QtCharts.

Two charts side by side: commits per second of every run (workload × clients), one bar per
report; and the commit latency (p50, p95, p99) of the run chosen in a box, one bar per
report, on an axis in ms with round ticks (logarithmic when the three are far apart).
"""

from __future__ import annotations

import math

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QLogValueAxis,
    QValueAxis,
)
from PySide6.QtCore import QEvent, QMargins, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.domain.bench import BenchReport, measured, verdict
from app.domain.drift import drift_held, drift_stands

# What the labels under the bars are: the change of commits/s from the first report to the
# last (faster or slower), else the verdict's word.
THROUGHPUT_TITLE = (
    "Commits per second (higher is better)<br>under each run: its change of commits/s, "
    "or “no change” / “undecided”"
)
# On two lines: the latency chart is a third of the page wide, and one line was cut.
LATENCY_TITLE = "Commit latency in ms<br>(lower is better)"


def chart_theme(palette: QPalette) -> QChart.ChartTheme:
    """QtCharts' own theme matching the system palette: charts do not follow it by themselves."""
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    return QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight


def run_key(workload: str, threads: int) -> str:
    """The name of one run, as the table names it: its workload and client count."""
    return f"{workload} ×{threads}"


def category_label(workload: str, threads: int, reports: list[BenchReport]) -> str:
    """A run's name under its bars, and the verdict from the first report to the last.

    The verdict (:func:`app.domain.bench.verdict`, as in the table) is written out because a
    bulk run's bars are too short to read it from: the change of commits/s where it is
    faster or slower, else "no change" or "undecided".
    """
    first = reports[0].result(workload, threads) if reports else None
    last = reports[-1].result(workload, threads) if len(reports) > 1 else None
    # The client count on a line of its own: a category is only as wide as its bars.
    name = f"{workload}<br>×{threads}"
    # As in the table: every run both reports have is judged at once.
    both = (
        sum(1 for r in reports[0].results if reports[-1].result(r.workload, r.threads))
        if len(reports) > 1
        else 1
    )
    pair = (reports[0], reports[-1]) if len(reports) > 1 else (None, None)
    held, stands = drift_held(*pair), drift_stands(*pair)
    found = verdict(first, last, comparisons=max(1, both), held=held, stands=stands)
    if found is None:
        # One report: a run that completed no transaction has an empty bar, and says why.
        short = any(r is not None and not measured(r) for r in (first, last))
        return f"{name}<br>too short" if short else name
    # "client-bound" on two more lines, for the same reason.
    bound = "<br>client-<br>bound" if found.client_bound else ""
    return f"{name}<br>{found.short()}{bound}"


#: The charts' smallest height: the six runs' names (up to five lines) stay whole under it.
CHART_HEIGHT = 260

#: Above this ratio of the highest to the lowest latency shown, the axis is logarithmic.
LOG_RATIO = 30.0


def latency_axis(low: float, high: float) -> QValueAxis | QLogValueAxis:
    """The latency chart's value axis in ms (its title says so), with several round ticks.

    A run's p50, p95 and p99 usually lie within a factor of ten or so: a linear axis from
    zero with round ticks (0, 5, 10, 15 ms) reads best. A wider spread (a stall in the tail)
    gets a logarithmic axis over whole decades, so that it has a tick at each power of ten
    (0.1, 1, 10, 100 ms) rather than the single "1" a range inside one decade left it.
    """
    if high <= 0:
        empty = QValueAxis()
        empty.setRange(0, 1)
        empty.setLabelFormat("%g")
        return empty
    if high / low > LOG_RATIO:
        axis = QLogValueAxis()
        axis.setBase(10)
        axis.setLabelFormat("%g")
        bottom = math.floor(math.log10(low))
        if low < 2 * 10**bottom:
            bottom -= 1  # a bar starts at the axis' bottom: one at it would not show at all
        axis.setRange(10**bottom, 10 ** math.ceil(math.log10(high)))
        axis.setMinorTickCount(8)  # 2, 3, … 9 within each decade, as grid lines
        return axis
    linear = QValueAxis()
    linear.setRange(0, high * 1.1)
    linear.setTickCount(5)
    linear.applyNiceNumbers()  # round ticks
    step = (linear.max() - linear.min()) / max(linear.tickCount() - 1, 1)
    linear.setLabelFormat("%.0f" if step >= 1 else "%g")
    return linear


def _runs(reports: list[BenchReport]) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for report in reports:
        for r in report.results:
            if (r.workload, r.threads) not in runs:
                runs.append((r.workload, r.threads))
    return runs


class BenchChart(QWidget):
    """Commits/s per run and the latency distribution, for up to a few labelled reports."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reports: list[BenchReport] = []
        self.throughput = QChart()
        self.throughput.setTitle(THROUGHPUT_TITLE)
        self.latency = QChart()
        self.latency.setTitle(LATENCY_TITLE)
        self.throughput_view = QChartView(self.throughput)
        self.latency_view = QChartView(self.latency)
        for view in (self.throughput_view, self.latency_view):
            view.setRenderHint(QPainter.RenderHint.Antialiasing)
            view.setMinimumHeight(CHART_HEIGHT)
            view.chart().setTheme(chart_theme(self.palette()))
        self.throughput_view.setAccessibleName("commits per second chart")
        self.latency_view.setAccessibleName("commit latency chart")
        self.run_box = QComboBox()
        self.run_box.setObjectName("latency_run")
        self.run_box.setAccessibleName("latency of which run")
        self.run_box.currentIndexChanged.connect(self._on_run_box_changed)
        right = QVBoxLayout()
        pick = QHBoxLayout()
        pick_label = QLabel("La&tency of:")
        pick_label.setBuddy(self.run_box)
        pick.addWidget(pick_label)
        pick.addWidget(self.run_box, 1)
        right.addLayout(pick)
        right.addWidget(self.latency_view, 1)
        # Both columns need the same height: below the picker, the latency chart is that much
        # shorter. Needing more, it overflowed a squeezed page and its p50/p95/p99 were cut.
        right.setSpacing(4)
        picker = max(self.run_box.sizeHint().height(), pick_label.sizeHint().height())
        self.latency_view.setMinimumHeight(CHART_HEIGHT - picker - right.spacing())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # Three quarters for the six runs, whose names must read whole under their bars.
        layout.addWidget(self.throughput_view, 3)
        layout.addLayout(right, 1)

    def show_reports(self, reports: list[BenchReport]) -> None:
        """Draw ``reports`` (each labelled: before, after, …) side by side."""
        self.reports = [r for r in reports if r.results]
        runs = _runs(self.reports)
        self._draw_throughput(runs)
        self.run_box.blockSignals(True)
        current = self.run_box.currentText()
        self.run_box.clear()
        for w, t in runs:
            self.run_box.addItem(run_key(w, t), (w, t))
        if current:
            index = self.run_box.findText(current)
            self.run_box.setCurrentIndex(max(0, index))
        self.run_box.blockSignals(False)
        self._draw_latency()

    def _fresh(self, view: QChartView, title: str) -> QChart:
        # A new chart each time: axes removed from a chart may still be drawn. The theme
        # follows this widget's palette: on a palette change the views' own palettes are
        # updated only after this widget has handled it.
        old = view.chart()
        chart = QChart()
        chart.setTheme(chart_theme(self.palette()))
        chart.setTitle(title)
        # Narrow margins: at the default window size the six runs' names need the room.
        chart.setMargins(QMargins(4, 4, 4, 4))
        view.setChart(chart)
        old.deleteLater()
        return chart

    def _draw_throughput(self, runs: list[tuple[str, int]]) -> None:
        self.throughput = self._fresh(self.throughput_view, self.throughput.title())
        series = QBarSeries()
        top = 0.0
        for report in self.reports:
            bars = QBarSet(report.label or report.started_at)
            for workload, threads in runs:
                found = report.result(workload, threads)
                value = found.commits_per_s if found else 0.0
                top = max(top, value)
                bars.append(value)
            series.append(bars)
        self.throughput.addSeries(series)
        x = QBarCategoryAxis()
        x.append([category_label(w, t, self.reports) for w, t in runs])
        small = x.labelsFont()
        small.setPointSizeF(small.pointSizeF() * 0.85)  # six runs side by side, names whole
        x.setLabelsFont(small)
        x.setTruncateLabels(False)  # a verdict is read whole, never "+2…"
        self.throughput.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        series.attachAxis(x)
        y = QValueAxis()
        y.setRange(0, top * 1.1 if top > 0 else 1)
        y.applyNiceNumbers()  # ticks at round figures
        y.setLabelFormat("%.0f")
        self.throughput.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(y)

    def _on_run_box_changed(self, _index: int) -> None:
        self._draw_latency()

    def _draw_latency(self) -> None:
        self.latency = self._fresh(self.latency_view, self.latency.title())
        data = self.run_box.currentData()
        if not data:
            return
        workload, threads = data
        series = QBarSeries()
        low, high = float("inf"), 0.0
        for report in self.reports:
            bars = QBarSet(report.label or report.started_at)
            found = report.result(workload, threads)
            values = (
                [found.latency.p50_ms, found.latency.p95_ms, found.latency.p99_ms]
                if found and found.latency.percentiles
                else [0.0, 0.0, 0.0]  # none measured (mysqlslap times no transaction)
            )
            for v in values:
                bars.append(v)
                if v > 0:
                    low, high = min(low, v), max(high, v)
            series.append(bars)
        self.latency.addSeries(series)
        x = QBarCategoryAxis()
        x.append(["p50", "p95", "p99"])
        x.setTruncateLabels(False)
        # The chart beside it names the same colours: the room a legend took here goes to
        # the bars and to the p50/p95/p99 under them, which it left cut at the bottom.
        self.latency.legend().setVisible(False)
        self.latency.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        series.attachAxis(x)
        y = latency_axis(low, high)
        self.latency.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(y)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        # The desktop switched between light and dark: draw again in the matching theme
        # (the Verify page no longer redraws unchanged results each time it opens).
        if event.type() == QEvent.Type.PaletteChange:
            self.show_reports(self.reports)
        super().changeEvent(event)

    def series_names(self) -> list[str]:
        """The labels of the throughput chart's bar sets (one per report)."""
        names = []
        for series in self.throughput.series():
            assert isinstance(series, QBarSeries)
            names += [bars.label() for bars in series.barSets()]
        return names
