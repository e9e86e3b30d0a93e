"""The exercises' words and the recorded power-cut run: complete, strict, labelled."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.exercises import RUNNERS
from app.exercises.model import load_texts, loss_result, nice_ticks, text_for, unwrap
from app.exercises.powercut import WRITEBACK, recorded, writeback_notice


def test_every_exercise_has_its_texts_and_every_text_an_exercise() -> None:
    texts = load_texts()
    assert [t.id for t in texts] == [
        "crash",
        "powercut",
        "bufferpool",
        "restart",
        "badchange",
        "redolog",
        "doublewrite",
        "flushing",
    ]
    assert {t.id for t in texts} == set(RUNNERS)
    for text in texts:
        assert text.title and len(text.intro) > 100 and "{" in text.happened


def test_hard_wrapped_text_becomes_paragraphs() -> None:
    assert unwrap("one\ntwo\n\n three\nfour \n") == "one two\n\nthree four"


def test_the_recorded_power_cut_is_a_real_run_and_says_so() -> None:
    result = recorded()
    assert result.exercise == "powercut"
    assert result.recorded and result.recorded.startswith("Recorded result of a real run")
    runs = {r["level"]: r for r in result.figures["runs"]}
    assert runs[1]["lost"] == 0 and runs[2]["lost"] <= runs[2]["window"]
    assert "{" not in result.explanation  # filled in when it was recorded
    assert result.chart is not None  # drawn as a run here draws it: nothing at risk at 1
    assert result.chart.series["at risk (last window)"][0] == 0.0


def test_every_exercise_says_how_long_it_takes_before_it_starts() -> None:
    for text in load_texts():
        assert re.fullmatch(r"about \d+ s", text.duration), text.id
        assert text.before_start.endswith(f"It takes {text.duration}.")
        assert "`" not in text.intro + text.happened, text.id  # shown as plain text


def test_the_power_cut_says_which_kernel_settings_of_this_machine_it_changes_first() -> None:
    intro = text_for("powercut").intro
    for path, value in WRITEBACK.items():
        assert f"vm.{Path(path).name}" in intro
        assert value in intro
    notice = writeback_notice({p: "500" for p in WRITEBACK})
    assert "vm.dirty_writeback_centisecs from 500 to 0" in notice
    assert "vm.dirty_expire_centisecs from 500 to 360000" in notice


def test_value_axis_ticks_are_round() -> None:
    assert nice_ticks(39576.1) == (50000.0, 10000.0, 0)
    assert nice_ticks(0.31) == (0.4, 0.1, 1)
    for top in (0.0, 0.1006, 0.27, 3, 7.3, 12, 1234, 39576.1, 250000):
        end, step, decimals = nice_ticks(top)
        assert end >= top and round(end / step, 6) == round(end / step)
        assert f"{step:.{decimals}f}" != f"{0:.{decimals}f}"
        assert float(f"{step:.{decimals}f}") == step  # every tick prints exactly


@dataclass
class _Run:
    level: int
    acked: int
    lost: int
    window: int
    within_bound: bool = True


def test_nothing_is_at_risk_at_trx_commit_1() -> None:
    runs = [_Run(1, 900, 0, 300), _Run(2, 950, 0, 310), _Run(0, 990, 12, 330)]
    result = loss_result(
        "crash",
        runs,
        lost_header="lost",
        chart_title="t",
        figures={"window_seconds": 2.0},
        explanation="",
    )
    assert result.chart is not None
    assert result.chart.series["at risk (last window)"] == [0.0, 310.0, 330.0]
