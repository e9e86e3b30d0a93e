"""The one verdict on a before/after change: faster, slower or noise, weighed by the rounds."""

from __future__ import annotations

import json
import re

import pytest

from app.bench.figures import merge_rounds
from app.bench.report import comparison_text
from app.bench.runner import BenchOptions
from app.domain.bench import (
    NOISE_FLOOR_PERCENT,
    BenchReport,
    Counters,
    CpuUse,
    Latency,
    WorkloadResult,
    change_text,
    verdict,
)


def run(cps: float, rounds: tuple[float, ...] = (), workload: str = "autocommit") -> WorkloadResult:
    return WorkloadResult(
        workload, 1, 10.0, int(cps * 10), int(cps * 10), cps, cps, Latency(1, 2, 3, 4, 1.5),
        Counters(), rounds=rounds,
    )  # fmt: skip


def word(before: WorkloadResult, after: WorkloadResult) -> str:
    found = verdict(before, after)
    assert found is not None
    return found.verdict


def test_the_floor_holds_when_the_rounds_agree() -> None:
    same = (100.0, 100.0, 100.0)
    assert NOISE_FLOOR_PERCENT == 5.0
    # Exactly at the band: still noise; just beyond it: faster or slower.
    assert word(run(100, same), run(105, (105.0,) * 3)) == "noise"
    assert word(run(100, same), run(105.1, (105.1,) * 3)) == "faster"
    assert word(run(100, same), run(95, (95.0,) * 3)) == "noise"
    assert word(run(100, same), run(94.9, (94.9,) * 3)) == "slower"
    found = verdict(run(100, same), run(105.1, (105.1,) * 3))
    assert found is not None and found.spread_percent == NOISE_FLOOR_PERCENT
    assert found.before_spread_percent == found.after_spread_percent == 0


def test_the_band_adds_both_sides_spreads() -> None:
    before = run(100, (90.0, 100.0, 110.0))  # (110 - 90) / 100: 20 %
    found = verdict(before, run(120, (120.0, 120.0, 120.0)))
    assert found is not None and found.spread_percent == pytest.approx(20)
    assert found.verdict == "noise"  # +20 % is inside ±20 %
    assert word(before, run(121, (121.0, 121.0, 121.0))) == "faster"
    # 20 % and 10 %: ±30 %, though each side alone would allow less.
    after = (126.0, 131.0, 139.1)  # (139.1 - 126) / 131: 10 %
    found = verdict(before, run(130, after))
    assert found is not None and found.spread_percent == pytest.approx(30)
    assert found.after_spread_percent == pytest.approx(10)
    assert found.verdict == "noise"  # +30 %: inside
    assert word(before, run(131, after)) == "faster"  # +31 %: beyond, and no round overlaps
    # The after side's spread counts as much as the before side's.
    assert word(run(100, (100.0,) * 3), run(130, (100.0, 130.0, 160.0))) == "noise"


def test_overlapping_rounds_are_noise_even_past_the_band() -> None:
    # The aggregate says +66 % against a 50 % band, but one after round is no faster than
    # every before round: not a change a person can count on.
    before, after = run(100, (100.0,) * 3), run(166, (100.0, 200.0, 200.0))
    found = verdict(before, after)
    assert found is not None and found.change_percent == pytest.approx(66)
    assert found.spread_percent == pytest.approx(50) and found.verdict == "noise"


def test_one_round_a_side_claims_nothing_and_one_measured_side_is_enough() -> None:
    assert word(run(100), run(300)) == "unmeasured"
    assert "no change claimed" in change_text(run(100), run(300))
    # A report saved before rounds existed, against a new one: the new side's spread counts.
    found = verdict(run(100), run(150, (149.0, 150.0, 151.0)))
    assert found is not None and found.verdict == "faster"
    assert found.before_spread_percent is None and found.spread_percent == NOISE_FLOOR_PERCENT
    assert verdict(None, run(1)) is None and verdict(run(1), None) is None
    # No transaction before: nothing to compare with, and it says so (not "faster").
    empty = verdict(run(0, (0.0, 0.0)), run(5, (5.0, 5.0)))
    assert empty is not None and empty.verdict == "unmeasured" and empty.too_short == ("before",)


def test_noise_is_never_printed_as_a_gain_or_a_loss() -> None:
    # The case: the same settings twice on a busy host, -28 % apart.
    before = run(3270, (3000.0, 3270.0, 4200.0))
    after = run(2357, (2357.0, 2900.0, 3100.0))
    text = change_text(before, after)
    assert text == "no change beyond the noise (±62%)"  # 37 % and 26 %
    assert not re.search(r"[+-]\d", text)
    assert change_text(run(100, (100.0,) * 3), run(250, (250.0,) * 3)) == (
        "faster: +150% (noise ±5%)"
    )
    bound = run(40, (40.0,) * 3)
    bound = WorkloadResult(**{**bound.__dict__, "cpu": CpuUse(client_bound=True, why="x")})
    assert change_text(run(100, (100.0,) * 3), bound) == "slower: -60% (noise ±5%) (client-bound)"


def test_the_comparison_and_its_json_carry_each_verdict() -> None:
    before = BenchReport(
        "t", "then", "innotune", 10.0,
        (run(100, (95.0, 100.0, 105.0)), run(50, (50.0,) * 3, "bulk")), label="before",
    )  # fmt: skip
    after = BenchReport(
        "t", "now", "innotune", 10.0,
        (run(98, (97.0, 98.0, 99.0)), run(80, (80.0,) * 3, "bulk")), label="after",
    )  # fmt: skip
    rows = comparison_text(before, after).splitlines()
    assert rows[0].split()[-1] == "verdict"
    assert rows[1].startswith("autocommit") and rows[1].endswith(
        "no change beyond the noise (±12%)"
    )
    assert "-2%" not in rows[1]
    assert rows[2].startswith("bulk") and rows[2].endswith("faster: +60% (noise ±5%)")
    data = json.loads(json.dumps([v.as_dict() for v in after.verdicts(before)]))
    assert [(d["workload"], d["threads"], d["verdict"]) for d in data] == [
        ("autocommit", 1, "noise"),
        ("bulk", 1, "faster"),
    ]
    assert data[0]["spread_percent"] == 12.04 and data[1]["spread_percent"] == 5.0


def test_rounds_merge_into_one_run() -> None:
    def one(cps: float, p99: float, stopped: str = "time") -> WorkloadResult:
        return WorkloadResult(
            "small_tx", 4, 2.0, int(cps * 2), int(cps * 8), cps, cps * 4,
            Latency(1.0, 2.0, p99, p99 * 2, 1.0), Counters(100, 10, 5, None),
            stopped=stopped, errors=1,
            cpu=CpuUse(0.5, 1.0, 0.5, 2, "target", p99 > 8, "slow" if p99 > 8 else ""),
        )  # fmt: skip

    merged = merge_rounds([one(100, 3.0), one(200, 9.0), one(300, 4.0, "rows")])
    assert merged.rounds == (100.0, 200.0, 300.0)
    assert merged.seconds == 6.0 and merged.commits == 1200 and merged.commits_per_s == 200
    assert merged.rows == 4800 and merged.errors == 3 and merged.stopped == "rows"
    assert merged.latency.p99_ms == 4.0 and merged.latency.max_ms == 18.0  # median; highest
    assert merged.counters == Counters(300, 30, 15, None)
    assert merged.cpu is not None and merged.cpu.client_bound and merged.cpu.why == "slow"
    assert merged.cpu.server_cores == 1.0
    assert merge_rounds([one(100, 3.0)]).rounds == (100.0,)
    again = BenchReport("t", "now", "x", 1.0, (merged,))
    assert BenchReport.from_json(again.to_json()) == again
    with pytest.raises(ValueError):
        merge_rounds([])


def test_rounds_take_turns() -> None:
    opts = BenchOptions(seconds=12, threads=(1,), workloads=("autocommit", "bulk"), rounds=2)
    assert opts.steps == [
        (1, "autocommit", 1),
        (1, "bulk", 1),
        (2, "autocommit", 1),
        (2, "bulk", 1),
    ]
    assert opts.seconds_per_run == 6  # a run's share holds all its rounds
    # A budget too small for the rounds asked for gets fewer, none shorter than half a second.
    assert BenchOptions(seconds=6, threads=(1, 4), rounds=3).rounds_run == 2
    assert BenchOptions(seconds=1, threads=(1, 4), rounds=3).steps == [
        (1, w, t) for w in ("autocommit", "small_tx", "bulk") for t in (1, 4)
    ]
    with pytest.raises(ValueError):
        BenchOptions(rounds=0)


def test_a_report_records_every_server_variable_a_plan_may_touch() -> None:
    from app.bench.runner import SETTINGS
    from app.knobs import default_catalogue

    touched = {k.name for k in default_catalogue().knobs if k.is_server_variable}
    assert touched <= set(SETTINGS), touched - set(SETTINGS)
    assert "version" in SETTINGS


def test_the_same_settings_are_said_plainly() -> None:
    settings = {"version": "9.7.0", "innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1"}
    results = (run(100, (100.0, 101.0, 99.0)),)
    before = BenchReport("t", "then", "x", 1.0, results, settings=settings)
    after = BenchReport("t", "now", "x", 1.0, results, settings=dict(settings))
    assert after.settings_changed(before) == {}
    same = "Both runs used the same settings (3 server values compared): any difference is noise."
    assert after.settings_note(before) == same
    assert comparison_text(before, after).splitlines()[-1] == same
    changed = BenchReport(
        "t", "now", "x", 1.0, results,
        settings={**settings, "innodb_flush_log_at_trx_commit": "2", "new_one": "x"},
    )  # fmt: skip
    assert changed.settings_changed(before) == {"innodb_flush_log_at_trx_commit": ("1", "2")}
    assert changed.settings_note(before) == (
        "Settings changed between the runs: innodb_flush_log_at_trx_commit 1 → 2."
    )
    unrecorded = BenchReport("t", "now", "x", 1.0, results)
    assert unrecorded.settings_note(before) == "The settings each run used were not recorded."


def test_a_report_shows_each_runs_spread() -> None:
    from app.bench.report import report_text, rounds_text

    report = BenchReport(
        "t", "now", "x", 1.0, (run(100, (90.0, 100.0, 110.0)), run(50, (50.0, 51.0, 49.0), "bulk"))
    )  # fmt: skip
    expected = "Spread of commits/s over each run's 3 rounds: autocommit ×1 ±20%, bulk ×1 ±4%."
    assert rounds_text(report) == expected
    assert expected in report_text(report).splitlines()
    assert rounds_text(BenchReport("t", "now", "x", 1.0, (run(100),))) == ""


def test_a_run_that_completed_no_transaction_is_too_short_to_measure_everywhere() -> None:
    from app.bench.report import report_text
    from app.domain.bench import TOO_SHORT, commits_text

    empty = WorkloadResult(
        "bulk", 4, 1.2, 0, 0, 0.0, 0.0, Latency(), Counters(), rounds=(0.0, 0.0, 0.0)
    )
    full = run(40, (39.0, 40.0, 41.0), workload="bulk")
    full = WorkloadResult(**{**full.__dict__, "threads": 4})
    for before, after, side in ((empty, full, "before"), (full, empty, "after")):
        found = verdict(before, after)
        assert found is not None and found.verdict == "unmeasured"
        assert found.too_short == (side,) and found.change_percent is None
        assert found.text() == (
            f"unmeasured: the “{side}” run completed no transaction; no change claimed"
        )
        assert found.short() == "too short"
        assert found.as_dict()["verdict"] == "unmeasured"
        assert found.as_dict()["change_percent"] is None
        assert "0.0" not in found.text() and "%" not in found.text()
    assert commits_text(empty) == TOO_SHORT and commits_text(full) == "40.0"
    reports = [
        BenchReport("t", "now", "innotune", 10.0, (r,), label=label)
        for r, label in ((empty, "before"), (full, "after"))
    ]
    table = comparison_text(*reports)
    assert "too short" in table and " 0.0 " not in table
    assert TOO_SHORT in report_text(reports[0]) and " 0.0 " not in report_text(reports[0])


def test_a_changed_size_reads_as_a_size_in_the_settings_note() -> None:
    from app.domain.bench import setting_words

    assert setting_words("innodb_buffer_pool_size", "4966055936") == "4.6 GiB"
    assert setting_words("innodb_redo_log_capacity", "104857600") == "100 MiB"
    assert setting_words("innodb_flush_log_at_trx_commit", "2") == "2"
    assert setting_words("sync_binlog", None) == "unset"
