"""resources/sliders.toml: every slider checked, and the strict loader's refusals."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from app.commands.sliders import add_slider_arguments
from app.domain.plan import CRASH_LOSS, SliderPositions
from app.knobs import default_catalogue
from app.knobs.model import SLIDERS as KNOB_SLIDERS
from app.knobs.sliders import DEFAULT_FILE, Slider, SliderError, load_sliders, slider, sliders
from app.planner import default_positions, describe
from tests.unit.planner_profiles import PROFILES

FACTS = PROFILES["practice-mariadb1011"].facts
DECLARED = sliders()


def test_the_page_order_and_every_position_field() -> None:
    assert [s.key for s in DECLARED] == [
        "crash_loss",
        "memory",
        "redo",
        "doublewrite",
        "fit_disks",
        "fit_os",
        "myisam",
        "binlog",
    ]
    fields = {f.name for f in dataclasses.fields(SliderPositions)} - {"rejected"}
    assert sorted(s.field for s in DECLARED) == sorted(fields)
    assert KNOB_SLIDERS == (*(s.key for s in DECLARED), "none")


@pytest.mark.parametrize("declared", DECLARED, ids=lambda s: s.key)
def test_each_slider(declared: Slider) -> None:
    assert declared.heading.startswith(f"{declared.number}. ")
    assert len(declared.explanation) > 80
    assert getattr(SliderPositions(), declared.field) == declared.default
    positions = default_positions(FACTS)
    values = [p.value for p in declared.positions]
    if declared.range is not None:
        values += list(declared.range)
    for value in values:
        moved = dataclasses.replace(positions, **{declared.field: value})
        # Every position has a sentence, declared or worded from the facts.
        assert describe(declared.key, getattr(moved, declared.field), FACTS)
    if declared.range is not None:
        low, high = declared.range
        for outside in (low - 1, high + 1):
            with pytest.raises(ValueError):
                SliderPositions(**{declared.field: outside})
    if declared.kind == "switch":
        assert declared.checkbox and "&" in declared.checkbox  # a keyboard shortcut
        assert {p.value for p in declared.positions} == {True, False}
    else:
        assert all(p.label for p in declared.positions)


def test_the_crash_positions_are_the_domains_and_set_trx_commit() -> None:
    crash = slider("crash_loss")
    assert tuple(p.name for p in crash.positions) == CRASH_LOSS
    assert {p.name: p.knobs["innodb_flush_log_at_trx_commit"] for p in crash.positions} == {
        "none": "1",
        "os": "2",
        "any": "0",
    }
    for spot in crash.positions:
        assert spot.why and spot.risk and spot.help
        assert "{seconds}" in spot.risk or spot.name == "none"


def test_declared_knob_values_are_catalogue_knobs() -> None:
    catalogue = default_catalogue()
    for declared in DECLARED:
        for spot in declared.positions:
            for name in spot.knobs:
                assert catalogue.knob(name).slider == declared.key


def test_the_cli_offers_one_option_per_slider() -> None:
    parser = argparse.ArgumentParser(prog="test", exit_on_error=False)
    add_slider_arguments(parser)
    options = {o for a in parser._actions for o in a.option_strings}
    assert {f"--{s.option}" for s in DECLARED} <= options
    helps = {a.option_strings[0]: a.help or "" for a in parser._actions if a.option_strings}
    assert helps["--crash-loss"].startswith("1. what a crash may cost: none (nothing if the disk")
    assert "fast-recovery 15, balanced 60, smooth 120" in helps["--redo"]
    assert "1-90" in helps["--memory-share"]
    assert helps["--fit-os"].endswith("(default on)")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sliders.toml"
    path.write_text(DEFAULT_FILE.read_text() + text)
    return path


def test_the_shipped_file_loads() -> None:
    assert load_sliders(DEFAULT_FILE) == DECLARED


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("[crash_loss]\n", "[crash_loss]\ncolour = 'red'\n"), "unknown key 'colour'"),
        (('number = "2"\n', ""), "missing field 'number'"),
        (('kind = "choice"\n', 'kind = "dial"\n'), "'dial' is not one of"),
        (('name = "any"\n', 'name = "some"\n'), "SliderPositions refuses 'some'"),
        (('default = "none"\n', 'default = "os"\n'), "SliderPositions() starts at 'none'"),
        (("default = 50\n", "default = 95\n"), "must be a whole number in 1-90"),
        (("range = [1, 90]\n", "range = [1, 95]\n"), "SliderPositions refuses 95"),
        (('field = "memory_share"\n', 'field = "memory"\n'), "SliderPositions has no 'memory'"),
        (("value = 15\n", "value = 60\n"), "two positions share a value"),
        (('label = "Nothing"\n', ""), "missing field 'label'"),
        (
            ("{seconds} of commits that clients", "{minutes} of commits that clients"),
            "quotes 'minutes' (allowed: {seconds})",
        ),
        (("step = 5\n", 'step = 5\ncheckbox = "x"\n'), "a percent slider has no 'checkbox'"),
        (
            ('option = "fit-os"\n', 'option = "fit-disks"\n'),
            "two sliders share the option 'fit-disks'",
        ),
    ],
)
def test_mistakes_fail_loudly(tmp_path: Path, change: tuple[str, str], error: str) -> None:
    text = DEFAULT_FILE.read_text()
    old, new = change
    assert old in text
    path = tmp_path / "sliders.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(SliderError) as caught:
        load_sliders(path)
    assert error in str(caught.value)


def test_a_slider_the_domain_does_not_have_fails(tmp_path: Path) -> None:
    extra = '\n[colour]\nnumber = "7"\ntitle = "t"\nexplanation = "e"\nkind = "choice"\n'
    extra += 'option = "colour"\nhelp = "h"\ndefault = "red"\n'
    extra += '[[colour.position]]\nname = "red"\nlabel = "Red"\n'
    extra += '[[colour.position]]\nname = "blue"\nlabel = "Blue"\n'
    with pytest.raises(SliderError, match="SliderPositions has no 'colour'"):
        load_sliders(_write(tmp_path, extra))


def test_a_missing_file_fails(tmp_path: Path) -> None:
    with pytest.raises(SliderError, match="cannot be read"):
        load_sliders(tmp_path / "absent.toml")
