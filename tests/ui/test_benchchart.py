"""The benchmark charts: a palette change, each run's name and verdict, the latency axis."""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCharts import (
    QAbstractAxis,
    QBarCategoryAxis,
    QChart,
    QLogValueAxis,
    QValueAxis,
)
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from pytestqt.qtbot import QtBot

from app.domain.bench import BenchReport, Counters, Latency, WorkloadResult
from app.ui.widgets.benchchart import BenchChart, latency_axis


def _report(label: str, rate: float, spread: float = 0.0, count: int = 3) -> BenchReport:
    lat = Latency(p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
    n = int(rate * 10)
    # ``count`` rounds evenly over the spread around the rate.
    step = spread / max(1, count - 1)
    rounds = tuple(rate * (1 - spread / 2 + i * step) for i in range(count))
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
    # Five rounds a side, every "after" one faster: the change of commits/s, whole.
    five = [_report("before", 100.0, 0.02, 5), _report("after", 634.0, 0.02, 5)]
    chart.show_reports(five)
    axis = chart.throughput.axes(Qt.Orientation.Horizontal)[0]
    assert isinstance(axis, QBarCategoryAxis)
    assert axis.categories() == ["autocommit<br>×1<br>+534%"]
    assert chart.run_box.itemText(0) == "autocommit ×1"  # the box has no room for the verdict
    # Rounds that cannot tell: the table's verdict, never the -28 %.
    chart.show_reports([_report("before", 100.0, 0.4), _report("after", 72.0, 0.4)])
    axis = chart.throughput.axes(Qt.Orientation.Horizontal)[0]
    assert isinstance(axis, QBarCategoryAxis)
    assert axis.categories() == ["autocommit<br>×1<br>undecided"]
    assert "its change of commits/s" in chart.throughput.title()


BENCH = Path(__file__).parents[1] / "fixtures" / "bench" / "sid-mysql-9.7"


def _ticks(axis: QAbstractAxis) -> list[float]:
    """The values the axis labels, as QtCharts places them."""
    if isinstance(axis, QLogValueAxis):
        low, high = math.log10(axis.min()), math.log10(axis.max())
        return [10.0**k for k in range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1)]
    assert isinstance(axis, QValueAxis)
    step = (axis.max() - axis.min()) / (axis.tickCount() - 1)
    return [axis.min() + i * step for i in range(axis.tickCount())]


def _round(value: float) -> bool:
    """1, 2, 2.5 or 5 times a power of ten (or zero)."""
    if value == 0:
        return True
    mantissa = value / 10 ** math.floor(math.log10(value))
    return any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))


def test_the_latency_axis_has_several_round_ticks_in_ms(qtbot: QtBot) -> None:
    """Recorded before/after runs of the sid host (MySQL 9.7): every run's latency chart has
    at least three labelled ticks at round values covering its bars, in ms."""
    chart = BenchChart()
    qtbot.addWidget(chart)
    reports = [
        BenchReport.from_json((BENCH / f"bench-{label}.json").read_text())
        for label in ("before", "after")
    ]
    chart.show_reports(reports)
    assert "in ms" in chart.latency.title()
    for index in range(chart.run_box.count()):
        chart.run_box.setCurrentIndex(index)
        workload, threads = chart.run_box.itemData(index)
        axis = chart.latency.axes(Qt.Orientation.Vertical)[0]
        ticks = _ticks(axis)
        assert len(ticks) >= 3, f"{workload} ×{threads}: ticks {ticks}"
        steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
        assert isinstance(axis, QLogValueAxis) or all(_round(s) for s in steps), ticks
        bars = [
            v
            for r in reports
            if (found := r.result(workload, threads)) is not None
            for v in (found.latency.p50_ms, found.latency.p95_ms, found.latency.p99_ms)
        ]
        assert axis.min() <= min(bars) and max(bars) <= axis.max()  # type: ignore[attr-defined]


def test_a_wide_spread_of_latencies_gets_a_log_axis_over_whole_decades() -> None:
    axis = latency_axis(0.3, 120.0)  # a stall in the tail: 400 times the median
    assert isinstance(axis, QLogValueAxis)
    assert (axis.min(), axis.max()) == (0.1, 1000.0)
    assert _ticks(axis) == [0.1, 1.0, 10.0, 100.0, 1000.0]
    # A bar starts at the axis' bottom: a p50 of 0.10 ms at a bottom of 0.1 would not show.
    low = latency_axis(0.10, 5.72)
    assert isinstance(low, QLogValueAxis) and low.min() < 0.1 / 2
    linear = latency_axis(5.8, 27.0)
    assert isinstance(linear, QValueAxis) and linear.min() == 0 and linear.max() >= 27.0


def test_labels_under_both_charts_are_whole_at_their_smallest(qtbot: QtBot) -> None:
    """At the charts' minimum height the labels under the bars are laid out whole (issue 35,
    37): never cut at the bottom, never shortened with "…"."""
    chart = BenchChart()
    qtbot.addWidget(chart)
    # As a squeezed page gives it: no more than the throughput chart's own minimum.
    chart.resize(860, chart.throughput_view.minimumHeight())
    chart.show()
    assert chart.minimumSizeHint().height() <= chart.throughput_view.minimumHeight()
    wide = [_report("before", 100.0, 1.9), _report("after", 280.0, 1.9)]
    chart.show_reports(wide)
    assert not chart.latency.legend().isVisible()  # the chart beside it names the colours

    def whole() -> None:
        for drawn in (chart.throughput, chart.latency):
            [axis] = drawn.axes(Qt.Orientation.Horizontal)
            assert isinstance(axis, QBarCategoryAxis) and not axis.truncateLabels()
            lines = max(label.count("<br>") + 1 for label in axis.categories())
            room = drawn.size().height() - drawn.plotArea().bottom()
            needed = lines * QFontMetrics(axis.labelsFont()).height()
            assert room >= needed, (axis.categories(), room, needed)

    qtbot.waitUntil(whole, timeout=5_000)  # once the charts are laid out at their size
    inside = chart.latency_view.geometry().bottom() < chart.height()
    assert inside, (chart.latency_view.geometry(), chart.height())  # not drawn past its widget
