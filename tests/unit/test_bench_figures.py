"""The benchmark's figures: percentiles, rates, counter deltas (also across a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.bench.figures import (
    CounterTrack,
    counter_delta,
    geometric_mean,
    latency_from_histogram,
    latency_of,
    median,
    percentile,
    rate,
    spread,
)
from app.bench.rate import judge_busy
from app.bench.runner import BenchOptions
from app.bench.sysbench import parse_output
from app.domain.bench import BenchReport, Counters, Latency, WorkloadResult, WriteRate

FIXTURES = Path(__file__).parents[1] / "fixtures/bench"


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 50) == 50
    assert percentile(values, 95) == 95
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile(values, 0) == 1
    assert percentile([], 50) == 0
    # Few samples: p99 is the largest measured value, never beyond it.
    assert percentile([1.0, 2.0, 3.0], 99) == 3.0
    with pytest.raises(ValueError):
        percentile(values, 101)


@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), min_size=1))
def test_latency_is_ordered(seconds: list[float]) -> None:
    lat = latency_of(seconds)
    assert lat.p50_ms <= lat.p95_ms <= lat.p99_ms <= lat.max_ms
    assert min(seconds) * 1000 <= lat.mean_ms * (1 + 1e-9) + 1e-9
    assert lat.max_ms == max(seconds) * 1000


def test_latency_in_milliseconds() -> None:
    lat = latency_of([0.001] * 90 + [0.010] * 9 + [0.100])
    assert (lat.p50_ms, lat.p95_ms, lat.p99_ms, lat.max_ms) == pytest.approx((1, 10, 10, 100))
    assert latency_of([]) == Latency()


def test_rates() -> None:
    assert rate(500, 2.0) == 250
    assert rate(10, 0) == 0


def test_counter_delta_plain_and_across_a_restart() -> None:
    assert counter_delta([100, 150, 400]) == (300, False)
    # The server restarted between 400 and 30: 30 were counted since the restart.
    assert counter_delta([100, 400, 30, 80]) == (300 + 30 + 50, True)
    assert counter_delta([5]) == (0, False)
    assert counter_delta([]) == (0, False)


def test_counter_track_prefers_the_lsn_and_flags_a_restart() -> None:
    track = CounterTrack()
    track.add(
        {
            "Innodb_lsn_current": "1000",
            "Innodb_os_log_written": "10",
            "Innodb_pages_written": "5",
            "Innodb_data_fsyncs": "7",
        }
    )
    track.add(
        {
            "Innodb_lsn_current": "5000",
            "Innodb_os_log_written": "20",
            "Innodb_pages_written": "9",
            "Innodb_data_fsyncs": "17",
        }
    )
    # After a restart every counter starts again from (near) zero.
    track.add(
        {
            "Innodb_lsn_current": "800",
            "Innodb_os_log_written": "2",
            "Innodb_pages_written": "1",
            "Innodb_data_fsyncs": "3",
        }
    )
    c = track.counters()
    assert c == Counters(
        redo_bytes=4000 + 800,
        pages_written=4 + 1,
        data_fsyncs=10 + 3,
        log_fsyncs=None,
        restarted=True,
    )


def test_counter_track_falls_back_to_os_log_written() -> None:
    track = CounterTrack()
    track.add({"Innodb_os_log_written": "100", "Innodb_os_log_fsyncs": "1"})
    track.add({"Innodb_os_log_written": "350", "Innodb_os_log_fsyncs": "4"})
    c = track.counters()
    assert (c.redo_bytes, c.log_fsyncs, c.pages_written, c.restarted) == (250, 3, None, False)


def test_median_spread_geomean() -> None:
    assert median([3.0, 1.0, 2.0]) == 2
    assert median([1.0, 2.0, 3.0, 4.0]) == 2.5
    assert spread([90.0, 100.0, 110.0]) == pytest.approx(0.2)
    assert spread([5.0]) == 0
    assert geometric_mean([1.0, 100.0]) == pytest.approx(10)
    assert geometric_mean([0.0, 5.0]) == 0


def test_sysbench_histogram_gives_the_same_figures() -> None:
    out = parse_output((FIXTURES / "sysbench-1.0.20-autocommit-2threads.txt").read_text())
    assert out.transactions == 15489
    assert out.seconds == pytest.approx(2.0041)
    assert out.ignored_errors == 0
    assert sum(n for _, n in out.histogram) == out.transactions
    lat = latency_from_histogram(out.histogram)
    assert lat.p50_ms <= lat.p95_ms <= lat.p99_ms <= lat.max_ms
    # sysbench's own summary: 95th percentile 0.35 ms, max 8.00 ms, avg 0.26 ms.
    assert lat.p95_ms == pytest.approx(0.35, abs=0.01)
    assert lat.max_ms == pytest.approx(8.0, abs=0.05)
    assert lat.mean_ms == pytest.approx(0.26, abs=0.02)
    with pytest.raises(ValueError):
        parse_output("FATAL: unable to connect")


def test_options_share_the_budget() -> None:
    opts = BenchOptions(seconds=60, threads=(4, 1))
    assert opts.runs[:2] == [("autocommit", 1), ("autocommit", 4)]
    assert len(opts.runs) == 6 and opts.seconds_per_run == 10
    assert BenchOptions(threads=(1, 1)).runs == [("autocommit", 1), ("small_tx", 1), ("bulk", 1)]
    assert BenchOptions(max_rows=10**9, max_bytes=220 * 1000).row_cap == 1000
    for bad in ({"seconds": 0}, {"threads": (0,)}, {"workloads": ("read_only",)}):
        with pytest.raises(ValueError):
            BenchOptions(**bad)  # type: ignore[arg-type]


def test_busy_judgement() -> None:
    assert judge_busy(0, 0, 0) == ""
    assert "rows written" in judge_busy(5000, None, 0)
    assert "redo" in judge_busy(0, 10 * 1024 * 1024, 0)
    assert "other queries" in judge_busy(0, 0, 8)


def test_report_json_round_trip() -> None:
    result = WorkloadResult(
        workload="small_tx",
        threads=4,
        seconds=9.5,
        commits=950,
        rows=3800,
        commits_per_s=100.0,
        rows_per_s=400.0,
        latency=Latency(1.0, 2.0, 3.0, 9.0, 1.2),
        counters=Counters(123, 4, 5, None, True),
        stopped="rows",
        errors=2,
    )
    report = BenchReport(
        target="practice",
        started_at="2026-11-22T11:00:00+00:00",
        engine="innotune",
        seconds_per_run=10.0,
        results=(result,),
        settings={"innodb_flush_log_at_trx_commit": "1"},
        rate_before=WriteRate(3.0, 1.0, 2.0, None, 0, False, "quiet"),
        label="before",
    )
    again = BenchReport.from_json(report.to_json())
    assert again == report
    assert again.result("small_tx", 4) == result and again.result("bulk", 1) is None
    with pytest.raises(ValueError):
        BenchReport.from_json(report.to_json().replace("innotune-bench/1", "other/9"))


def test_refuses_the_one_process_per_statement_route() -> None:
    from app.bench.runner import BenchError, Benchmark
    from app.mysql.session import ClientBatchSession

    calls: list[list[str]] = []

    def runner(argv: object, stdin: object) -> tuple[int, str, str]:
        calls.append(list(argv))  # type: ignore[call-overload]
        return 0, "", ""

    bench = Benchmark(lambda: ClientBatchSession(runner, "mariadb", "/run/mysqld/mysqld.sock"))
    with pytest.raises(BenchError, match="stays open"):
        bench.run()
    assert calls == []  # nothing was created, so nothing is left behind


def test_a_mean_only_latency_shows_no_percentiles() -> None:
    """mysqlslap's runs: the mean (Little's law), never a 0.00 shown as a percentile."""
    from app.bench.report import comparison_text, report_text

    def run(latency: Latency) -> WorkloadResult:
        return WorkloadResult("autocommit", 1, 2.0, 200, 200, 100.0, 100.0, latency, Counters())

    slap = run(Latency(mean_ms=10.0, percentiles=False))
    timed = run(Latency(1.0, 2.0, 3.0, 9.0, 1.2))
    assert slap.latency.text() == "mean 10.00 (no percentiles)"
    assert timed.latency.text() == "1.00 / 2.00 / 3.00"
    report = BenchReport("t", "2026-11-25T09:00:00+00:00", "mysqlslap", 2.0, (slap,), {})
    text = report_text(report)
    line = next(x for x in text.splitlines() if x.startswith("autocommit"))
    assert "~10.00" in line and "0.00" not in line.replace("~10.00", "")
    assert "no percentiles" in text
    assert BenchReport.from_json(report.to_json()) == report
    before = BenchReport("t", "2026-11-25T09:00:00+00:00", "sysbench", 2.0, (timed,), {})
    compared = comparison_text(before, report)
    row = compared.splitlines()[1]
    assert row.split()[:6] == ["autocommit", "1", "100.0", "100.0", "3.00", "-"]
    # sysbench before, mysqlslap after: said, as part of the change is the clients'.
    assert compared.splitlines()[-1].startswith("Not like for like: before ran with sysbench")
