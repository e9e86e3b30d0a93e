"""The slider options shared by plan, preview, apply and export (app/commands/sliders.py)."""

from __future__ import annotations

import argparse

import pytest

from app.commands.sliders import add_slider_arguments, positions_from_args
from app.planner import default_positions
from tests.unit.planner_profiles import PROFILES

FACTS = PROFILES["mariadb106-lvm-hdd"].facts  # trx_commit=2 now: crash_loss starts at "os"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="test", exit_on_error=False)
    add_slider_arguments(parser)
    return parser.parse_args(list(argv))


def test_no_options_start_where_the_wizard_starts() -> None:
    assert positions_from_args(parse(), FACTS) == default_positions(FACTS)
    assert positions_from_args(parse(), FACTS).crash_loss == "os"  # where the server is
    assert positions_from_args(parse(), FACTS).redo_minutes == 60  # the recommendation


def test_memory_share_keep_is_the_share_now() -> None:
    from app.planner import make_plan
    from app.planner.budget import current_share
    from tests.unit.test_planner_matrix import CAT

    kept = positions_from_args(parse("--memory-share", "keep", "--redo", "keep"), FACTS)
    assert kept.memory_share == current_share(FACTS) != default_positions(FACTS).memory_share
    plan = make_plan(FACTS, kept, CAT)
    assert plan.change("innodb_buffer_pool_size") is None
    why = {x.knob: x.why for x in plan.left_alone}["innodb_buffer_pool_size"]
    assert "keeps the buffer pool at" in why


@pytest.mark.parametrize(
    ("argv", "field", "value"),
    [
        (["--crash-loss", "none"], "crash_loss", "none"),
        (["--memory-share", "70"], "memory_share", 70),
        (["--memory-share", "70%"], "memory_share", 70),
        (["--redo", "smooth"], "redo_minutes", 120),
        (["--redo", "fast-recovery"], "redo_minutes", 15),
        (["--redo", "45"], "redo_minutes", 45),
        (["--redo", "keep"], "redo_minutes", None),
        (["--doublewrite", "off"], "doublewrite", False),
        (["--fit-disks", "no"], "fit_disks", False),
        (["--fit-os", "off"], "fit_os", False),
        (["--myisam", "on"], "myisam", True),
        (
            ["--reject", "vm.swappiness", "--reject", "innodb_io_capacity"],
            "rejected",
            ("innodb_io_capacity", "vm.swappiness"),
        ),
    ],
)
def test_each_option_moves_its_slider(argv: list[str], field: str, value: object) -> None:
    assert getattr(positions_from_args(parse(*argv), FACTS), field) == value


@pytest.mark.parametrize(
    "argv",
    [
        ["--crash-loss", "some"],
        ["--memory-share", "0"],
        ["--memory-share", "95"],
        ["--memory-share", "lots"],
        ["--redo", "0"],
        ["--redo", "forever"],
        ["--doublewrite", "maybe"],
    ],
)
def test_bad_positions_are_refused(argv: list[str]) -> None:
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parse(*argv)
