"""Apply's "Measure before and after": ticked on a quiet server, asked on a busy one; no
"after" when the apply rolls back, and the page says why. Against a real private server.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.domain.target import ConnectOptions, Target
from app.flows.measure import MeasureOptions, Quietness
from app.practice.server import PrivateServer
from app.ui.pages import apply as apply_module
from app.ui.pages.apply import ApplyPage
from app.ui.pages.apply_texts import measure_note
from tests.hosts.util import need_root
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
    drop_in,
    restart_argv,
    tree,
)
from tests.ui.test_apply_page import open_apply_page
from tests.ui.test_preview_page import _state


def test_the_box_is_ticked_on_a_quiet_server_and_asks_on_a_busy_one(
    qtbot: QtBot, private_server: PrivateServer
) -> None:
    state = _state(private_server)
    assert state.facts is not None and state.facts.server is not None
    page = ApplyPage(state)
    qtbot.addWidget(page)
    page._decide_measure()
    assert page.measure_box.isChecked()
    assert not page.watch_box.isChecked()  # quiet: the benchmark is the proof
    note = page.measure_note.text()
    assert note.startswith("Ticked: the server is quiet") and "0 commits/s (at most 100)" in note
    # The person's choice stands while the facts are the same.
    page.measure_box.setChecked(False)
    page._decide_measure()
    assert not page.measure_box.isChecked()
    # A new inspection of a busy server: not ticked, and the figure that decided is named.
    server = state.facts.server
    assert server.rates is not None
    busy = dataclasses.replace(server.rates, transactions_per_s=850.0)
    state.facts = dataclasses.replace(state.facts, server=dataclasses.replace(server, rates=busy))
    page.measure_box.setChecked(True)
    page._decide_measure()
    assert not page.measure_box.isChecked()
    assert page.watch_box.isChecked()  # busy: its own workload is watched instead
    assert page.measure_note.text().startswith(
        "Not ticked: the server is busy: 850 commits/s (above 100)"
    ), page.measure_note.text()
    # No sample at all: not known to be quiet, so not ticked either.
    state.facts = dataclasses.replace(state.facts, server=dataclasses.replace(server, rates=None))
    page._decide_measure()
    assert not page.measure_box.isChecked() and "took no sample" in page.measure_note.text()
    assert not page.watch_box.isChecked()


def test_the_note_says_beforehand_that_a_larger_pool_gets_a_data_set() -> None:
    quiet = Quietness(True, "quiet over the inspection's 10 s sample: 0 commits/s (at most 100)")
    note = measure_note(quiet, 384 * 2**20)
    assert "each side first writes a data set of up to 384 MiB" in note, note
    busy = Quietness(False, "busy: 850 commits/s (above 100)")
    assert "data set of up to 1 GiB" in measure_note(busy, 2**30)
    assert "data set" not in measure_note(quiet, 0)
    # Measured interleaved, one data set serves both sides.
    once = measure_note(quiet, 384 * 2**20, once=True)
    assert "the measurement first writes a data set of up to 384 MiB" in once, once


def test_a_rolled_back_apply_is_measured_before_and_not_after(
    qtbot: QtBot, private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))

    # A short "before" (the wizard's is its "Benchmark time", 25 s, in up to 6 rounds a third
    # of the budget holds: 50 s): this test is about the order, so the shortest a measured
    # apply takes (options_for_budget), 9 s in 3 rounds of every run, whatever the page asks.
    def short(seconds: float) -> MeasureOptions:
        return MeasureOptions(seconds=9.0, budget=27.0)

    monkeypatch.setattr(apply_module, "MeasureOptions", short)
    server = private_server
    etc = tree(server.base / "etc")
    page = open_apply_page(qtbot, server)
    page.state.target = Target("local", options=ConnectOptions(instance=str(server.socket_path)))
    preview = page.state.preview
    assert preview is not None
    # An option the server binary rejects: the job's validation fails, it rolls back.
    bad = drop_in(server, "[mysqld]\ninnotune_no_such_option = 1\n")
    page.state.preview = dataclasses.replace(preview, actions=(bad,), restart_needed=True)
    page.initializePage()
    page.restart_edit.setText(shlex.join(restart_argv(server)))
    page.measure_box.setChecked(True)
    page.consent.setChecked(True)
    page.apply_button.click()
    assert page.bench_bar.isVisible()
    qtbot.waitUntil(lambda: page.state.bench_before is not None, timeout=120_000)
    assert page.status is None  # "before" ran first, on the unchanged server
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=180_000)
    qtbot.waitUntil(lambda: not page._busy(), timeout=60_000)
    assert page.status is not None and page.status.state == "rolled-back", page.status
    before = page.state.bench_before
    assert before is not None and before.label == "before" and before.results
    assert {len(r.rounds) for r in before.results} == {3}
    assert before.settings["innodb_flush_log_at_trx_commit"] == "1"
    assert before.snapshot_in_force == ""
    assert page.state.bench_after is None
    shown = page.state_label.text()
    assert "The “after” benchmark was not run: the change was rolled back" in shown, shown
    assert not page.bench_bar.isVisible()
    assert tree(server.base / "etc") == etc
