"""What the benchmark cannot show of a pool or redo change, from a real "before" report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.bench.reach import cannot_show, table_peak_bytes
from app.domain.bench import BenchReport

REPORT = BenchReport.from_json(
    (Path(__file__).parents[1] / "fixtures/bench/sid-mysql-9.7/bench-before.json").read_text()
)
MIB = 1 << 20


def test_the_tables_peak_follows_the_rows_written() -> None:
    peak = table_peak_bytes(REPORT)
    most_rows = max(r.rows for r in REPORT.results)
    # Never less than the seed tables; never more than every row written plus them.
    assert 20_000 * 220 <= peak <= (most_rows + 20_000) * 220


def test_a_pool_the_tables_fit_in_says_the_benchmark_cannot_show_it() -> None:
    peak = table_peak_bytes(REPORT)
    old = str(128 * MIB)
    roomy = dataclasses.replace(REPORT, pool_free_bytes=100 * MIB)
    (line,) = cannot_show([("innodb_buffer_pool_size", old, str(1 << 30))], roomy)
    assert "old buffer pool (128 MiB) had 100 MiB free" in line, line
    assert "pages read from disk per commit" in line
    # Tables near the old pool's size: the pool may matter, nothing is said.
    near = str(peak + peak // 2)
    assert cannot_show([("innodb_buffer_pool_size", near, str(1 << 30))], roomy) == ()
    # A pool other data fills (its free pages too few), or not read: nothing is said.
    full = dataclasses.replace(REPORT, pool_free_bytes=peak)
    assert cannot_show([("innodb_buffer_pool_size", old, str(1 << 30))], full) == ()
    unread = dataclasses.replace(REPORT, pool_free_bytes=None)
    assert cannot_show([("innodb_buffer_pool_size", old, str(1 << 30))], unread) == ()
    # A smaller pool: nothing.
    assert cannot_show([("innodb_buffer_pool_size", str(1 << 30), old)], roomy) == ()


def test_a_redo_log_the_benchmark_never_pressed_says_so() -> None:
    total = sum(r.counters.redo_bytes or 0 for r in REPORT.results)
    assert total > 0
    roomy = str(total * 20)
    (line,) = cannot_show([("innodb_redo_log_capacity", roomy, str(int(roomy) * 4))], REPORT)
    assert "under a tenth of the old redo log" in line
    tight = str(total * 5)  # the log was a fifth full: it may have pressed for flushing
    assert cannot_show([("innodb_redo_log_capacity", tight, str(1 << 30))], REPORT) == ()
    assert cannot_show([("innodb_flush_log_at_trx_commit", "1", "2")], REPORT) == ()
