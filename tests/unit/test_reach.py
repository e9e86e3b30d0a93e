"""What the benchmark cannot show of a pool or redo change, from a real "before" report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.bench.reach import (
    cannot_show,
    data_set_bytes,
    data_set_most,
    data_set_text,
    table_peak_bytes,
)
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


POOL = "innodb_buffer_pool_size"
GIB = 1 << 30


def test_a_larger_pool_gets_a_data_set_three_times_the_old_one() -> None:
    plenty = 50 * GIB
    # Debian's default pool to most of a 24 GiB host: 384 MiB, two thirds outside the old pool.
    assert data_set_bytes([(POOL, str(128 * MIB), str(16 * GIB))], plenty) == 384 * MIB
    # Other changes beside it do not matter; the redo log alone gets none.
    both = [("innodb_log_file_size", str(96 * MIB), str(GIB)), (POOL, str(128 * MIB), str(GIB))]
    assert data_set_bytes(both, plenty) == 384 * MIB
    assert data_set_bytes([("innodb_log_file_size", str(96 * MIB), str(GIB))], plenty) == 0


def test_no_data_set_where_it_would_not_fit_or_show_anything() -> None:
    plenty = 50 * GIB
    # Held to half the new pool: 256 MiB → 384 MiB leaves 192 MiB, 1.5 times the old pool.
    assert data_set_bytes([(POOL, str(128 * MIB), str(384 * MIB))], plenty) == 192 * MIB
    assert data_set_bytes([(POOL, str(128 * MIB), str(256 * MIB))], plenty) == 0
    # A large old pool: the 1 GiB cap is not enough of it.
    assert data_set_bytes([(POOL, str(GIB), str(8 * GIB))], plenty) == 0
    # A quarter of the free space under the datadir, at most; unknown free space: none.
    assert data_set_bytes([(POOL, str(128 * MIB), str(16 * GIB))], GIB) == 256 * MIB
    assert data_set_bytes([(POOL, str(128 * MIB), str(16 * GIB))], 600 * MIB) == 0
    assert data_set_bytes([(POOL, str(128 * MIB), str(16 * GIB))], None) == 0
    # A smaller pool, or a size not in bytes: none.
    assert data_set_bytes([(POOL, str(GIB), str(128 * MIB))], plenty) == 0
    assert data_set_bytes([(POOL, "128M", str(GIB))], plenty) == 0


def test_a_binary_log_halves_the_share_of_free_space_a_data_set_may_take() -> None:
    changes = [(POOL, str(128 * MIB), str(16 * GIB))]
    assert data_set_bytes(changes, 2 * GIB) == 384 * MIB
    assert data_set_bytes(changes, 2 * GIB, binlog=True) == 256 * MIB
    assert data_set_bytes(changes, GIB, binlog=True) == 0  # 128 MiB: too little to show it


def test_the_largest_data_set_is_known_before_the_disk_is_read() -> None:
    plenty = 50 * GIB
    for old, new in ((128 * MIB, 16 * GIB), (128 * MIB, 384 * MIB), (GIB, 8 * GIB), (GIB, MIB)):
        changes = [(POOL, str(old), str(new))]
        assert data_set_most(changes) == data_set_bytes(changes, plenty)
    assert data_set_most([("innodb_log_file_size", str(96 * MIB), str(GIB))]) == 0


def test_a_report_with_a_data_set_says_so_and_the_pool_is_not_called_unshowable() -> None:
    # The rows of a 384 MiB data set (1,830,241 of 220 bytes) hold a little under it.
    report = dataclasses.replace(REPORT, pool_free_bytes=100 * MIB, data_bytes=1_830_241 * 220)
    line = data_set_text(report, [(POOL, str(128 * MIB), str(GIB))], 41.4)
    assert "went at random across a data set of 384 MiB, 3 times the old buffer pool" in line
    assert "writing it took 41 s a side, outside the time budget" in line
    assert cannot_show([(POOL, str(128 * MIB), str(GIB))], report) == ()
    assert table_peak_bytes(report) == table_peak_bytes(REPORT) + 1_830_241 * 220
    assert data_set_text(REPORT, [(POOL, str(128 * MIB), str(GIB))], 0.0) == ""
    # A binary log keeps a copy of the rows: how much it grew, both sides, when both were read.
    logged = dataclasses.replace(report, data_binlog_bytes=400 * MIB)
    changes = [(POOL, str(128 * MIB), str(GIB))]
    both = data_set_text(logged, changes, 41.4, dataclasses.replace(logged, data_binlog_bytes=MIB))
    assert "The binary log grew by 401 MiB with both sides' rows" in both, both
    assert "binary log" not in data_set_text(logged, changes, 41.4, report)  # "after" not read
    alone = data_set_text(logged, changes, 41.4)
    assert "grew by 400 MiB with the “before” side's rows" in alone, alone


def test_one_data_set_for_both_interleaved_sides_is_counted_once() -> None:
    report = dataclasses.replace(
        REPORT, pool_free_bytes=100 * MIB, data_bytes=1_830_241 * 220, data_binlog_bytes=400 * MIB
    )
    changes = [(POOL, str(128 * MIB), str(GIB))]
    line = data_set_text(report, changes, 41.4, report, once=True)
    assert "writing it took 41 s once for both sides, outside the time budget" in line, line
    assert "The binary log grew by 400 MiB with the data set's rows" in line, line
