"""The exercises' words and the recorded power-cut run: complete, strict, labelled."""

from __future__ import annotations

from app.exercises import RUNNERS
from app.exercises.model import load_texts, unwrap
from app.exercises.powercut import recorded


def test_every_exercise_has_its_texts_and_every_text_an_exercise() -> None:
    texts = load_texts()
    assert [t.id for t in texts] == ["crash", "powercut", "bufferpool", "restart", "badchange"]
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
