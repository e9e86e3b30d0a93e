"""Moving each slider on the Trade-offs page changes the plan shown, as the planner says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QCheckBox, QSlider
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.planner import default_positions
from app.planner.budget import pool_of
from app.planner.memorysum import share_text
from app.planner.values import size_text
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState
from tests.ui.wizards import open_wizard

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


@pytest.fixture
def page(qtbot: QtBot) -> TradeoffsPage:
    state = WizardState(facts=HostFacts.from_json(FACTS.read_text()))
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    page.show()
    return page


def _shown(page: TradeoffsPage, slider: str) -> dict[str, str]:
    tree = page.sections[slider].changes
    rows = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return {r.text(0): r.text(2) for r in rows if r is not None}


def _planned(page: TradeoffsPage) -> dict[str, str]:
    assert page.state.plan is not None
    return {c.key: c.proposed for c in page.state.plan.changes}


def test_starts_at_the_recommendation(page: TradeoffsPage) -> None:
    """The page starts where `innotune plan` does: InnoTune's recommendation, marked so."""
    facts = page.state.facts
    assert facts is not None
    pos = page.state.positions
    assert pos == default_positions(facts)
    assert pos is not None and pos.crash_loss == "none"  # the server runs trx_commit=1
    assert "innodb_flush_log_at_trx_commit" not in _planned(page)
    assert (
        page.sections["crash_loss"]
        .sentence.text()
        .endswith(
            "Nothing, provided the disk honours flushes (a volatile write cache without a battery "
            "can still lose commits)"
        )
    )
    assert (
        page.sections["crash_loss"]
        .start.text()
        .startswith("<i>Starts where the server is: <b>Nothing</b>.")
    )
    memory = page.sections["memory"]
    assert "Recommended for this host: <b>" in memory.start.text()
    assert "The host has 23.5 GiB of RAM" in memory.start.text()
    # Something is recommended: the 128 MiB pool grows, the redo log goes to an hour.
    assert int(_planned(page)["innodb_buffer_pool_size"]) > 128 * 2**20
    assert pos.redo_minutes == 60
    assert "Recommended for this host: <b>Balanced" in page.sections["redo"].start.text()
    assert "Recommended for this host: <b>ticked</b>" in page.sections["fit_os"].start.text()


def test_memory_label_risk_and_table_agree_at_every_share(page: TradeoffsPage) -> None:
    """The label, the risk text and the changes table name the same pool, at every share."""
    control = page.sections["memory"].control
    assert isinstance(control, QSlider)
    section = page.sections["memory"]
    for share in range(control.minimum(), control.maximum() + 1):
        control.setValue(share)
        plan = page.state.plan
        assert plan is not None
        change = plan.change("innodb_buffer_pool_size")
        label = section.value_label.text()
        size = label.split(": ", 1)[1].split(" (", 1)[0]
        # The share shown is the pool's own (issue 36); another than the slider's says why.
        ram = page.state.facts.os.machine.mem_total_bytes  # type: ignore[union-attr]
        pool = pool_of(plan, page.state.facts)  # type: ignore[arg-type]
        assert ram and pool is not None and size == size_text(pool)
        assert label.startswith(f"{share_text(pool, ram)} of RAM: "), (share, label)
        if not label.startswith(f"{share}% of RAM: "):
            assert "kept as it is" in label or f"the {share}% asked" in label, (share, label)
        assert f"to {size} (" in section.sentence.text() or f"at {size}" in (
            section.sentence.text()
        ), (share, label, section.sentence.text())
        if change is not None:
            assert _shown(page, "memory")["innodb_buffer_pool_size"] == size, share
            assert size_text(int(change.proposed)) == size


def test_crash_loss_slider(page: TradeoffsPage) -> None:
    control = page.sections["crash_loss"].control
    assert isinstance(control, QSlider)
    for value, trx in ((1, "2"), (2, "0")):
        control.setValue(value)
        assert _planned(page)["innodb_flush_log_at_trx_commit"] == trx
        assert _shown(page, "crash_loss")["innodb_flush_log_at_trx_commit"] == trx
    assert "server process crashes" in page.sections["crash_loss"].sentence.text()
    control.setValue(0)
    assert "innodb_flush_log_at_trx_commit" not in _planned(page)


def test_memory_slider_sizes_the_pool_within_ram(page: TradeoffsPage) -> None:
    facts = page.state.facts
    assert facts is not None
    ram = facts.os.machine.mem_total_bytes or 0
    control = page.sections["memory"].control
    assert isinstance(control, QSlider)
    control.setValue(40)
    pool = int(_planned(page)["innodb_buffer_pool_size"])
    assert 0.3 * ram < pool <= 0.4 * ram
    assert f"{share_text(pool, ram)} of RAM" in page.sections["memory"].value_label.text()
    assert (
        "OOM" in page.sections["memory"].sentence.text()
        or "RAM" in page.sections["memory"].sentence.text()
    )


def test_redo_slider_changes_the_redo_log(page: TradeoffsPage) -> None:
    control = page.sections["redo"].control
    assert isinstance(control, QSlider)
    control.setValue(0)
    keep = _shown(page, "redo")
    control.setValue(3)
    smooth = _shown(page, "redo")
    assert keep != smooth
    assert "innodb_log_file_size" in smooth


def test_doublewrite_is_locked_on_ext4(page: TradeoffsPage) -> None:
    section = page.sections["doublewrite"]
    assert isinstance(section.control, QCheckBox)
    assert section.control.isChecked() and not section.control.isEnabled()
    assert "locked" in section.value_label.text()


def test_fit_toggles_and_myisam(page: TradeoffsPage) -> None:
    disks, os_, myisam = (page.sections[s].control for s in ("fit_disks", "fit_os", "myisam"))
    assert isinstance(disks, QCheckBox) and isinstance(os_, QCheckBox)
    assert isinstance(myisam, QCheckBox)
    assert "vm.dirty_ratio" in _planned(page)
    os_.setChecked(False)
    assert "vm.dirty_ratio" not in _planned(page)
    disks.setChecked(False)
    assert page.state.plan is not None
    assert not [c for c in page.state.plan.changes if c.slider == "fit_disks"]
    myisam.setChecked(True)
    assert "key_buffer_size" in _planned(page)


def test_unticking_a_change_leaves_it_out_of_the_plan(page: TradeoffsPage) -> None:
    control = page.sections["crash_loss"].control
    assert isinstance(control, QSlider)
    control.setValue(1)
    tree = page.sections["crash_loss"].changes
    item = tree.topLevelItem(0)
    assert item is not None
    from PySide6.QtCore import Qt

    item.setCheckState(0, Qt.CheckState.Unchecked)
    assert "innodb_flush_log_at_trx_commit" not in _planned(page)
    assert "innodb_flush_log_at_trx_commit" in _shown(page, "crash_loss")  # still listed


def test_practice_server_leaves_this_computers_kernel_and_disks_alone(qtbot: QtBot) -> None:
    from app.domain.target import parse_target

    state = WizardState(
        target=parse_target("practice"), facts=HostFacts.from_json(FACTS.read_text())
    )
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    assert state.plan is not None
    assert not [c for c in state.plan.changes if c.target in ("sysfs", "sysctl")]
    fit_os = page.sections["fit_os"].control
    assert isinstance(fit_os, QCheckBox) and not fit_os.isChecked()
    assert "does not retune your desktop" in page.summary.text()
    # Its pool and redo log stay as they are (the desktop's memory and disk).
    assert state.plan.change("innodb_buffer_pool_size") is None
    assert state.plan.change("innodb_log_file_size") is None
    assert "(kept as it is)" in page.sections["memory"].value_label.text()
    fit_os.setChecked(True)  # the person may still choose them
    assert [c for c in state.plan.changes if c.target == "sysctl"]


def test_practice_note_says_what_the_boxes_show_and_left_alone_blames_nobody(
    qtbot: QtBot,
) -> None:
    from app.domain.target import parse_target

    state = WizardState(
        target=parse_target("practice"), facts=HostFacts.from_json(FACTS.read_text())
    )
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.initializePage()
    note = page.summary.text()
    fit_disks, fit_os = page.sections["fit_disks"].control, page.sections["fit_os"].control
    assert isinstance(fit_disks, QCheckBox) and isinstance(fit_os, QCheckBox)
    # 5a stays ticked (the server's own disk settings); only the disk queues are unticked.
    assert fit_disks.isChecked() and not fit_os.isChecked()
    assert "kernel and disk settings start unticked" not in note
    assert "slider 5b" in note and "disk queues under 5a" in note
    tree = page.sections["fit_disks"].changes
    rows = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    queues = [r for r in rows if r is not None and r.text(0).startswith("queue/")]
    from PySide6.QtCore import Qt

    assert queues and all(r.checkState(0) == Qt.CheckState.Unchecked for r in queues)
    text = page.left_alone.toPlainText()
    assert "you turned" not in text and "you chose" not in text
    assert "this change is unticked" in text and "slider 5b (fit the OS) is unticked" in text


def test_ticking_a_change_back_updates_the_same_row(page: TradeoffsPage) -> None:
    """Turning a change down and back on only flips its tick: the row is never rebuilt
    from inside the tree's own itemChanged (that deleted the item being delivered)."""
    from PySide6.QtCore import Qt

    control = page.sections["crash_loss"].control
    assert isinstance(control, QSlider)
    control.setValue(1)
    tree = page.sections["crash_loss"].changes
    item = tree.topLevelItem(0)
    assert item is not None and item.text(0) == "innodb_flush_log_at_trx_commit"
    for state, planned in ((Qt.CheckState.Unchecked, False), (Qt.CheckState.Checked, True)):
        item.setCheckState(0, state)
        assert tree.topLevelItem(0) is item
        assert ("innodb_flush_log_at_trx_commit" in _planned(page)) is planned
    assert all(item.child(i).isFirstColumnSpanned() for i in range(item.childCount()))


def test_left_alone_lists_every_knob_with_why(page: TradeoffsPage) -> None:
    plan = page.state.plan
    assert plan is not None and plan.left_alone
    text = page.left_alone.toPlainText()
    for knob in plan.left_alone:
        assert f"{knob.knob}" in text and knob.why[:40] in text


def test_page_is_filled_before_it_opens(qtbot: QtBot, tmp_path: Path) -> None:
    """Once the facts arrive, the page plans and fills itself while still hidden, so
    pressing Next finds it ready: the same plan, nothing left to do."""

    wizard, connect = open_wizard(qtbot, tmp_path)
    page = wizard.pages["Trade-offs"]
    assert isinstance(page, TradeoffsPage)
    connect.saved.open_facts_file(FACTS)  # the Connect page says so with completeChanged
    assert wizard.state.plan is None
    qtbot.waitUntil(lambda: wizard.state.plan is not None and not page._steps, timeout=30_000)
    assert not page.isVisible()
    plan = wizard.state.plan
    assert page.sections["crash_loss"].sentence.text().startswith("<b>Risk:</b>")
    assert re.search(r"<b>\d+ changes?</b>", page.summary.text())
    wizard.next()
    assert wizard.currentPage() is page and wizard.state.plan is plan
    wizard.done(0)


def test_opening_the_page_at_once_still_fills_it(qtbot: QtBot, tmp_path: Path) -> None:
    """Next pressed before the page could fill itself: initializePage finishes the job."""

    wizard, connect = open_wizard(qtbot, tmp_path)
    connect.saved.open_facts_file(FACTS)
    wizard.next()  # no event-loop turn in between
    page = wizard.currentPage()
    assert isinstance(page, TradeoffsPage) and not page._steps
    assert wizard.state.plan is not None and wizard.state.positions is not None
    assert page.sections["memory"].value_label.text().endswith(" GiB")
    for _ in range(3):  # a stale step, had one survived, would run now (0 ms timers)
        QApplication.processEvents()
    assert page.positions_from_controls() == wizard.state.positions
    wizard.done(0)


def test_left_alone_follows_a_move(qtbot: QtBot, page: TradeoffsPage) -> None:
    """The list is laid out one event-loop turn after the move (it is mostly out of sight)."""
    before = "innodb_flush_log_at_trx_commit: It is already 1"
    assert before in page.left_alone.toPlainText()
    control = page.sections["crash_loss"].control
    assert isinstance(control, QSlider)
    control.setValue(1)
    qtbot.waitUntil(lambda: before not in page.left_alone.toPlainText(), timeout=10_000)
    control.setValue(0)
    qtbot.waitUntil(lambda: before in page.left_alone.toPlainText(), timeout=10_000)


def test_sizes_read_as_sizes_and_the_fit_sections_are_5a_and_5b(page: TradeoffsPage) -> None:
    """Issue 18: "128 MiB → 4.7 GiB", not "134217728 → 5055184896"; no two sections numbered 5."""
    control = page.sections["memory"].control
    assert isinstance(control, QSlider)
    control.setValue(40)
    tree = page.sections["memory"].changes
    row = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "innodb_buffer_pool_size"  # type: ignore[union-attr]
    )
    assert row is not None
    assert row.text(1).endswith(("MiB", "GiB")) and row.text(2).endswith(("MiB", "GiB"))
    assert not row.text(2).isdigit()
    assert row.toolTip(2).split(" → ")[1] == _planned(page)["innodb_buffer_pool_size"]
    titles = [s.title() for s in page.sections.values()]
    numbers = [t.split(".", 1)[0] for t in titles]
    assert len(numbers) == len(set(numbers)), titles
    assert page.sections["fit_disks"].title().startswith("5a.")
    assert page.sections["fit_os"].title().startswith("5b.")
