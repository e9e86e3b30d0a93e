"""The plan-quality benchmark's pass rule and grid, and the benchmark's text report."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bench.report import comparison_text, rate_text, report_text
from app.domain.bench import BenchReport, Counters, Latency, WorkloadResult, WriteRate
from tests.benchmarks.bench_plans import GRID, MAX_GRID, Measured, load_grid, verdict


def item(kind: str, name: str, scores: list[float]) -> Measured:
    return Measured("none", kind, name, {}, scores=scores)


def test_plan_within_five_percent_of_the_best_passes() -> None:
    v = verdict(
        [
            item("defaults", "defaults", [100, 100, 100]),
            item("plan", "plan", [96, 96, 96]),
            item("grid", "g", [100.5, 100.5, 100.5]),
        ]
    )
    assert v["best"] == "g" and v["near_best"] and v["not_below_defaults"] and v["passed"]


def test_plan_far_below_the_best_fails() -> None:
    v = verdict(
        [
            item("defaults", "defaults", [100, 100, 100]),
            item("plan", "plan", [110, 110, 110]),
            item("grid", "g", [150, 150, 150]),
        ]
    )
    assert not v["near_best"] and v["not_below_defaults"] and not v["passed"]


def test_a_noisy_measurement_widens_the_margin() -> None:
    # Spread of the best: (130 - 70) / 100 = 60 %: the plan at 80 is within it.
    v = verdict(
        [
            item("defaults", "defaults", [80, 80, 80]),
            item("plan", "plan", [80, 80, 80]),
            item("grid", "g", [70, 100, 130]),
        ]
    )
    assert v["margin_best"] == pytest.approx(0.6) and v["passed"]


def test_plan_below_the_defaults_fails() -> None:
    v = verdict([item("defaults", "defaults", [100, 100]), item("plan", "plan", [80, 80])])
    assert v["best"] == "defaults" and not v["not_below_defaults"] and not v["passed"]


def test_the_committed_grid_keeps_the_risk_level(tmp_path: Path) -> None:
    grid = load_grid(GRID)
    assert 1 <= len(grid) <= MAX_GRID
    bad = tmp_path / "g.toml"
    bad.write_text('[[config]]\nname = "x"\nsettings = { innodb_flush_log_at_trx_commit = "0" }\n')
    with pytest.raises(SystemExit):
        load_grid(bad)


def _report(label: str, cps: float) -> BenchReport:
    r = WorkloadResult(
        "autocommit",
        1,
        10.0,
        int(cps * 10),
        int(cps * 10),
        cps,
        cps,
        Latency(1.0, 2.0, 3.0, 4.0, 1.5),
        Counters(2 * 1048576, 3, 4, None, False),
    )
    return BenchReport(
        "practice",
        "2026-11-22T11:00:00+00:00",
        "innotune",
        10.0,
        (r,),
        {
            "version": "10.11.19",
            "innodb_flush_log_at_trx_commit": "1",
            "innodb_buffer_pool_size": str(128 << 20),
            "innodb_log_file_size": str(96 << 20),
        },
        WriteRate(3.0, 0.5, 0.0, 0.0, 0, False, "no noticeable writes by others"),
        label=label,
    )


def test_report_and_comparison_text() -> None:
    text = report_text(_report("before", 100.0))
    assert "innodb_flush_log_at_trx_commit=1, buffer pool 128 MiB, redo log 96 MiB" in text
    assert "autocommit        1      100.0" in text and "quiet" in text
    both = comparison_text(_report("before", 100.0), _report("after", 150.0))
    # One round a side decides nothing: the +50% is not claimed as a gain.
    assert "+50%" not in both and "unmeasured: fewer than 3 rounds a side" in both
    busy = WriteRate(3.0, 900.0, 5000.0, 2e6, 4, True, "5,000 rows written per second")
    assert "busy: 5,000 rows written per second" in rate_text(busy)
