"""The benchmark charts follow a palette change without being asked to redraw."""

from __future__ import annotations

from PySide6.QtCharts import QBarCategoryAxis, QChart
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from pytestqt.qtbot import QtBot

from app.domain.bench import BenchReport, Counters, Latency, WorkloadResult
from app.ui.widgets.benchchart import BenchChart


def _report(label: str, rate: float, spread: float = 0.0) -> BenchReport:
    lat = Latency(p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
    n = int(rate * 10)
    rounds = (rate * (1 - spread / 2), rate, rate * (1 + spread / 2))
    result = WorkloadResult("autocommit", 1, 10.0, n, n, rate, rate, lat, Counters(), rounds=rounds)
    return BenchReport("t", "now", "innotune", 10.0, (result,), label=label)


def test_a_dark_palette_redraws_in_the_dark_theme(qtbot: QtBot) -> None:
    chart = BenchChart()
    qtbot.addWidget(chart)
    light = QPalette(QColor("#efefef"))
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    chart.setPalette(light)
    chart.show_reports([_report("before", 100.0), _report("after", 150.0)])
    assert chart.throughput.theme() == QChart.ChartTheme.ChartThemeLight
    dark = QPalette(QColor("#2b2b2b"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    chart.setPalette(dark)
    assert chart.throughput.theme() == QChart.ChartTheme.ChartThemeDark
    assert chart.latency.theme() == QChart.ChartTheme.ChartThemeDark
    assert chart.series_names() == ["before", "after"]  # the same results, drawn again


def test_each_run_names_its_change_under_its_bars(qtbot: QtBot) -> None:
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.show_reports([_report("before", 100.0)])
    axis = chart.throughput.axes(Qt.Orientation.Horizontal)[0]
    assert isinstance(axis, QBarCategoryAxis)
    # The table's name for the run (autocommit, not a nickname); one report: no comparison.
    assert axis.categories() == ["autocommit<br>×1"]
    chart.show_reports([_report("before", 100.0), _report("after", 634.0)])
    axis = chart.throughput.axes(Qt.Orientation.Horizontal)[0]
    assert isinstance(axis, QBarCategoryAxis)
    assert axis.categories() == ["autocommit<br>×1<br>+534%"]
    assert chart.run_box.itemText(0) == "autocommit ×1"  # the box has no room for the verdict
    # Inside the noise the chart gives the band, never the -28 %: the table's verdict.
    chart.show_reports([_report("before", 100.0, 0.4), _report("after", 72.0, 0.4)])
    axis = chart.throughput.axes(Qt.Orientation.Horizontal)[0]
    assert isinstance(axis, QBarCategoryAxis)
    assert axis.categories() == ["autocommit<br>×1<br>noise ±80%"]  # 40 % a side
