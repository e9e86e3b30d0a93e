"""A before/after pair measured beside changing other work is held back as undecided."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.domain.bench import BenchReport, change_text
from app.domain.drift import BUSY_DRIFT, drift_held, drift_stands, drift_text
from app.domain.measurement import Measurement

FIXTURES = Path(__file__).parents[1] / "fixtures/bench/sid-mysql-9.7"
BEFORE = BenchReport.from_json((FIXTURES / "bench-before.json").read_text())
AFTER = BenchReport.from_json((FIXTURES / "bench-after.json").read_text())


def _pair(method: str, before: tuple[float, ...], after: tuple[float, ...]):  # type: ignore[no-untyped-def]
    found = Measurement(method, 250.0, 200.0, 6, 7, "decided")
    b = dataclasses.replace(BEFORE, measurement=found, machine_busy=before)
    a = dataclasses.replace(AFTER, measurement=found, machine_busy=after)
    return b, a


def _eight_rounds(report: BenchReport) -> BenchReport:
    """The recorded runs with eight steady rounds each (the fixture has one a side)."""
    results = tuple(
        dataclasses.replace(r, rounds=tuple(r.commits_per_s * (1 + i / 100) for i in range(8)))
        for r in report.results
    )
    return dataclasses.replace(report, results=results)


def test_steady_other_work_keeps_the_verdicts() -> None:
    b, a = _pair("before-after", (0.30, 0.35), (0.32, 0.30))
    assert drift_held(b, a) == ""


def test_other_work_that_moved_holds_every_decided_verdict_back() -> None:
    b, a = _pair("before-after", (0.30, 0.35), (0.30, 0.30 + BUSY_DRIFT + 0.1))
    held = drift_held(b, a)
    assert held == "other work on the machine changed (30% → 65% of its CPUs)", held
    assert "busy at one moment and 65% at another" in drift_text(b, a)
    assert drift_text(*_pair("before-after", (0.3,), (0.3,))) == ""
    b, a = _eight_rounds(b), _eight_rounds(a)
    plain = dataclasses.replace(a, machine_busy=(0.3, 0.3))
    decided = [v for v in plain.verdicts(b) if v.verdict in ("faster", "slower", "no_change")]
    assert decided, "the recorded pair decides some runs when the machine is steady"
    for v in a.verdicts(b):
        assert v.verdict in ("undecided", "unmeasured"), v
        if v.verdict == "undecided":
            assert v.text().startswith("undecided: other work on the machine changed"), v.text()
    run = b.results[0]
    text = change_text(run, a.result(run.workload, run.threads), 6, held)
    assert text.startswith("undecided: other work"), text


def _scaled(report: BenchReport, base: BenchReport, factor: float) -> BenchReport:
    """``report`` with ``base``'s runs at ``factor`` times their rate, eight steady rounds each."""
    results = tuple(
        dataclasses.replace(
            r, rounds=tuple(r.commits_per_s * factor * (1 + i / 100) for i in range(8))
        )
        for r in base.results
    )
    return dataclasses.replace(report, results=results)


def test_a_gain_made_beside_more_other_work_stands_and_a_loss_does_not() -> None:
    """Other work rose between the sides: a faster run was faster despite it."""
    b, a = _pair("before-after", (0.10, 0.15), (0.60, 0.70))
    assert drift_held(b, a) and drift_stands(b, a) == "faster"
    before = _scaled(b, b, 1.0)
    faster = {v.verdict for v in _scaled(a, b, 3.0).verdicts(before)}
    assert faster == {"faster"}, faster
    slower = _scaled(a, b, 0.3).verdicts(before)
    assert {v.verdict for v in slower} == {"undecided"}
    assert all(v.held.startswith("other work on the machine changed") for v in slower)
    same = {v.verdict for v in _scaled(a, b, 1.0).verdicts(before)}
    assert same == {"undecided"}, "unchanged beside more work may hide a gain"
    text = drift_text(b, a)
    assert "up to 15% of the machine's CPUs busy before the change and at least 60%" in text
    assert "A run measured faster was faster despite it" in text


def test_a_loss_made_beside_less_other_work_stands_and_a_gain_does_not() -> None:
    b, a = _pair("before-after", (0.70, 0.60), (0.20, 0.10))
    assert drift_stands(b, a) == "slower"
    before = _scaled(b, b, 1.0)
    assert {v.verdict for v in _scaled(a, b, 0.3).verdicts(before)} == {"slower"}
    assert {v.verdict for v in _scaled(a, b, 3.0).verdicts(before)} == {"undecided"}
    assert "at least 60%" in drift_text(b, a) and "up to 20% after it" in drift_text(b, a)


def test_samples_that_cross_hold_every_answer() -> None:
    b, a = _pair("before-after", (0.10, 0.70), (0.40, 0.45))
    assert drift_held(b, a) and drift_stands(b, a) == ""
    before = _scaled(b, b, 1.0)
    assert {v.verdict for v in _scaled(a, b, 3.0).verdicts(before)} == {"undecided"}
    assert "no run is called faster, slower or unchanged" in drift_text(b, a)


def test_interleaved_rounds_and_unsampled_sides_are_not_held() -> None:
    b, a = _pair("interleaved", (0.1,), (0.9,))
    assert drift_held(b, a) == ""
    b, a = _pair("before-after", (), (0.1, 0.9))
    assert drift_held(b, a) == ""


def test_the_samples_survive_json() -> None:
    b, _ = _pair("before-after", (0.25, 0.5), ())
    assert BenchReport.from_json(b.to_json()).machine_busy == (0.25, 0.5)
