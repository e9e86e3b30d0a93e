"""Which method a measured apply uses: interleaved only where every change is set live."""

from __future__ import annotations

import dataclasses

from app.describe.actions import Action, ValueChange
from app.describe.preview import Preview
from app.domain.measurement import Measurement
from app.flows.measured import method_for


def dynamic(key: str, current: str, new: str, live: bool = True) -> ValueChange:
    return ValueChange("dynamic", key, current, new, live, "option file")


def preview(*actions: Action, restart: bool = False) -> Preview:
    return Preview("t", actions, restart, None, None, (), (), (), 0)


def test_server_variables_set_live_are_interleaved() -> None:
    trx = Action(
        "dynamic", ("trx",), "", values=(dynamic("innodb_flush_log_at_trx_commit", "1", "0"),)
    )
    found = method_for(preview(trx))
    assert found.interleaved and found.why == "" and not found.restart
    assert found.values == (("innodb_flush_log_at_trx_commit", "1", "0"),)
    # A wait to be kept: the change may be rolled back under the measurement.
    assert not method_for(preview(trx), confirm_within=60).interleaved
    # A resize set live is switched too (once a round, by the runner: test_bench_steps.py).
    trx_value = dynamic("innodb_flush_log_at_trx_commit", "1", "0")
    pool = Action(
        "dynamic",
        ("pool",),
        "",
        values=(trx_value, dynamic("innodb_buffer_pool_size", "134217728", "1073741824")),
    )
    found = method_for(preview(pool))
    assert found.interleaved and found.why == ""
    assert ("innodb_buffer_pool_size", "134217728", "1073741824") in found.values


def test_anything_else_is_measured_before_then_after_and_says_why() -> None:
    trx = dynamic("innodb_flush_log_at_trx_commit", "1", "0")
    disk = Action(
        "sysfs",
        ("sched",),
        "",
        values=(ValueChange("sysfs", "scheduler", "mq-deadline", "none", True, "udev"),),
    )
    assert method_for(preview(disk)).why == "scheduler is a setting of the host, not of the server"
    restart = method_for(preview(Action("dynamic", ("trx",), "", values=(trx,)), restart=True))
    assert not restart.interleaved and restart.restart and restart.why == "the server restarts"
    # A restart only asked for (every value live): applied with it, then interleaved, on
    # either face (the window's preview and the command line's, with the restart, agree).
    asked = dataclasses.replace(
        preview(Action("dynamic", ("trx",), "", values=(trx,))), restart_requested=True
    )
    found = method_for(asked)
    assert found.interleaved and found.restart and found.why == ""


def test_the_method_in_words() -> None:
    both = Measurement("interleaved", 150.0, 118.4, 7, 7, "decided", fewest_rounds=4)
    assert both.method_text() == "interleaved, 4 to 7 rounds each"
    assert both.text().endswith("Time budget 150 s, 118 s used: every verdict decided.")
    fixed = Measurement(
        "before-after", 150.0, 151.0, 6, 9, "budget", restart=True, why="the server restarts"
    )
    assert fixed.method_text() == "before, then after the restart: 6 rounds before, 9 after"
    assert "only “after” rounds could be added" in fixed.text()
    assert "the time budget ran out before every verdict was decided" in fixed.text()
