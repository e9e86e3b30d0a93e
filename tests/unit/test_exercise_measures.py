"""The measuring exercises' pure parts: verdicts on rounds, settling, slider links, the CLI."""

from __future__ import annotations

import json
import re

import pytest

from app.cli import run_cli
from app.commands.exercise import render
from app.exercises import QUICK, RUNNERS
from app.exercises.flushing import FlushRun
from app.exercises.model import ExerciseResult, load_texts
from app.exercises.tools import judge, size_words
from app.knobs.sliders import load_sliders


def test_a_side_whose_every_round_beats_the_other_is_judged_even_with_zero_counts() -> None:
    # A 1 GiB log writes no page at all during the rounds: ratios of zero mean nothing.
    small = [1800.0, 2500, 900, 3000, 400]
    word, change = judge(small, [0.0] * 5, higher_is_better=False)
    assert (word, round(change)) == ("better", -100)
    assert judge([0.0, *small[1:]], [0.0] * 5, higher_is_better=False)[0] == "undecided"
    # Four rounds a side, every one beaten, happen by luck 3 % of the time: not enough.
    assert judge(small[:4], [0.0] * 4, higher_is_better=False)[0] == "undecided"


def test_rounds_above_zero_are_judged_by_compare_rounds() -> None:
    steady = [100.0, 101, 99, 100, 102]
    assert judge(steady, [150.0, 152, 149, 151, 150], higher_is_better=True)[0] == "better"
    assert judge(steady, [150.0, 152, 149, 151, 150], higher_is_better=False)[0] == "worse"
    spread = [110.0, 60, 150, 90, 105]
    assert judge([100.0, 140, 70, 120, 95], spread, higher_is_better=True)[0] == "undecided"


def test_dirty_share_settles_when_it_stays_in_its_band_and_drains_after_the_load() -> None:
    climbing = FlushRun(100, [10, 17, 22, 26, 29, 31, 32, 32, 32, 31, 25, 12, 4], 10)
    assert round(climbing.level) == 32 and climbing.settled_after == 5
    assert climbing.drained_after == 3
    flat = FlushRun(9900, [3, 1, 2, 3, 3, 2, 3, 2, 3, 2, 1, 1], 10)
    assert flat.settled_after == 1 and flat.drained_after == 1
    still = FlushRun(100, [5, 10, 15, 20, 25, 30, 35, 40], 8)
    assert still.settled_after is None and still.drained_after is None


def test_sizes_are_said_in_mib_or_gib() -> None:
    assert size_words(16 << 20) == "16 MiB" and size_words(1 << 30) == "1 GiB"


def test_sliders_name_the_exercise_that_shows_their_trade_off() -> None:
    titles = {t.title for t in load_texts()}
    named: dict[str, list[str]] = {}
    for slider in load_sliders():
        found = re.findall(r"Exercises → (.+?)(?=, and |\.$|\. )", slider.explanation)
        assert all(t in titles for t in found), (slider.key, found)
        named[slider.key] = found
    assert named["redo"] == ["Redo log size"]
    assert named["doublewrite"] == ["Doublewrite's cost"]
    assert named["fit_disks"] == ["Flushing and io_capacity"]
    assert named["memory"] == ["Why buffer pool size matters"]
    assert named["crash_loss"] == ["What a server crash costs", "What a power cut costs"]


def test_every_exercise_has_a_quick_form_of_its_own_arguments() -> None:
    assert set(QUICK) <= set(RUNNERS)


def test_exercise_list_names_every_exercise(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["exercise", "list"]) == 0
    listed = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()]
    assert listed == [t.id for t in load_texts()]
    assert run_cli(["exercise", "list", "--json"]) == 0
    assert [e["name"] for e in json.loads(capsys.readouterr().out)] == listed
    assert run_cli(["exercise", "nosuch"]) == 2
    assert "redolog" in capsys.readouterr().err


def test_the_result_table_is_aligned_under_its_headers() -> None:
    result = ExerciseResult("x", ["size", "pages"], [["16 MiB", "1851"], ["1 GiB", "0"]], "Why.")
    assert render(result).splitlines()[:4] == [
        "size    pages",
        "------  -----",
        "16 MiB  1851",
        "1 GiB   0",
    ]
