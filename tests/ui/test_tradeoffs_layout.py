"""The Trade-offs page's geometry at the default window size: nothing jumps while choosing.

* Every slider's track has the same place and width, whatever its words beside it say, and
  keeps them while any slider moves (slider 1 shrank when its label grew).
* Unticking a box (5a) keeps its section's height: what the box changes stays listed,
  greyed, so the next box (5b) stays under the pointer.
* Each list of changes is as tall as its header and whole rows (they were 1.5 rows tall).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication, QCheckBox, QSlider
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState
from app.ui.wizard import MainWizard
from tests.ui.layout import settle
from tests.ui.test_layout_default_size import LINES, default_wizard, walk

PRACTICE = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


def _tradeoffs(qtbot: QtBot, host: str) -> tuple[MainWizard, TradeoffsPage]:
    wizard = default_wizard(qtbot)
    for name, page in walk(wizard, host):
        if name == "Trade-offs":
            assert isinstance(page, TradeoffsPage)
            settle()
            return wizard, page
    raise AssertionError("no Trade-offs page")


def _track(slider: QSlider) -> QRect:
    corner = slider.mapTo(slider.window(), slider.rect().topLeft())
    return QRect(corner, slider.size())


@pytest.mark.parametrize("line", ["MySQL 9.7", "MariaDB 11.8"])
def test_every_slider_track_lines_up_and_stays_while_sliders_move(qtbot: QtBot, line: str) -> None:
    _, page = _tradeoffs(qtbot, LINES[line])
    sliders = [s.control for s in page.sections.values() if isinstance(s.control, QSlider)]
    assert len(sliders) >= 3
    first = {(_track(s).x(), _track(s).width()) for s in sliders}
    assert len(first) == 1, f"the tracks differ: {first}"
    across = {s: (_track(s).x(), _track(s).width()) for s in sliders}
    for moving in sliders:
        start = _track(moving)
        for value in range(moving.minimum(), moving.maximum() + 1, moving.pageStep() or 1):
            moving.setValue(value)
            settle()
            # The slider being dragged stays under the pointer.
            assert _track(moving) == start, (
                f"{moving.accessibleName()} moved at {value}: {start} → {_track(moving)}"
            )
            # Below a section whose words took another line a track may move down; no
            # track ever changes its width or its place across.
            for s in sliders:
                now = _track(s)
                assert (now.x(), now.width()) == across[s], (
                    f"{s.accessibleName()} changed across when {moving.accessibleName()} "
                    f"went to {value}: {across[s]} → {now}"
                )


def test_unticking_5a_keeps_its_section_and_5b_under_the_pointer(qtbot: QtBot) -> None:
    state = WizardState(facts=HostFacts.from_json(PRACTICE.read_text()))
    page = TradeoffsPage(state)
    qtbot.addWidget(page)
    page.resize(880, 700)
    page.initializePage()
    page.show()
    settle()
    disks, fit_os = page.sections["fit_disks"], page.sections["fit_os"]
    assert isinstance(disks.control, QCheckBox) and isinstance(fit_os.control, QCheckBox)
    assert disks.control.isChecked() and disks.changes.topLevelItemCount() > 0
    height, place = disks.height(), _box(fit_os.control)
    disks.control.click()  # untick 5a
    settle()
    assert not disks.control.isChecked()
    assert disks.height() == height, "5a's section changed its height"
    assert _box(fit_os.control) == place, "5b's box moved"
    # What ticking 5a would change stays in view, greyed: not part of the plan.
    assert disks.changes.isVisible() and not disks.changes.isEnabled()
    assert state.plan is not None
    assert not [c for c in state.plan.changes if c.slider == "fit_disks"]
    disks.control.click()
    settle()
    assert disks.changes.isEnabled() and _box(fit_os.control) == place


def _box(box: QCheckBox) -> QRect:
    return QRect(box.mapTo(box.window(), box.rect().topLeft()), box.size())


@pytest.mark.parametrize("line", list(LINES))
def test_each_list_of_changes_shows_whole_rows(qtbot: QtBot, line: str) -> None:
    _, page = _tradeoffs(qtbot, LINES[line])
    shown = 0
    for key, section in page.sections.items():
        tree = section.changes
        if not tree.isVisible():
            continue
        shown += 1
        rows = [tree.visualItemRect(tree.topLevelItem(i)) for i in range(tree.topLevelItemCount())]
        room = tree.viewport().height()
        whole = sum(r.height() for r in rows[:8])
        # The list's room is its rows (at most eight), whole, with no part row.
        assert room >= whole, f"{key}: {room} px for {len(rows)} rows of {whole} px"
        row = rows[0].height()
        assert room % row == 0 or room == whole, f"{key}: {room} px is not whole rows of {row}"
    assert shown, "no section lists changes"
    QApplication.processEvents()
