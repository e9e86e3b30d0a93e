"""Trade-offs as a new user reads it (issue 37): what a box does not do is not ticked.

Facts recorded on the sid host (MySQL 9.7, binary log on, a sample that measured no
writes) and on the practice server (binary log off).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _page(qtbot: QtBot, host: str) -> TradeoffsPage:
    facts = HostFacts.from_json((HOSTS / host / "facts.json").read_text())
    page = TradeoffsPage(WizardState(facts=facts))
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    page.initializePage()
    return page


def _rows(page: TradeoffsPage, slider: str) -> list[tuple[list[str], object]]:
    tree = page.sections[slider].changes
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return [
        ([it.text(c) for c in range(4)], it.data(0, Qt.ItemDataRole.CheckStateRole))
        for it in items
        if it is not None
    ]


def test_keeping_the_binary_log_shows_no_tick_and_no_off(qtbot: QtBot) -> None:
    page = _page(qtbot, "sid-mysql-9.7")
    section = page.sections["binlog"]
    box = section.control
    assert isinstance(box, QCheckBox) and box.isChecked() and box.isVisible()
    [(cells, tick)] = _rows(page, "binlog")
    assert cells[0] == "log_bin" and cells[2] == "unchanged", cells
    assert tick is None and "OFF" not in " ".join(cells), cells  # no box, no "ON → OFF"
    box.setChecked(False)  # turning it off: now the row is a change, ticked
    [(cells, tick)] = _rows(page, "binlog")
    assert cells[2] == "OFF" and tick == Qt.CheckState.Checked.value, (cells, tick)
    box.setChecked(True)
    [(cells, tick)] = _rows(page, "binlog")
    assert cells[2] == "unchanged" and tick is None, (cells, tick)


def test_a_binary_log_off_already_is_said_plainly(qtbot: QtBot) -> None:
    page = _page(qtbot, "practice-debian12")
    section = page.sections["binlog"]
    assert section.control.isHidden()  # no "Keep the binary log" ticked beside "off"
    assert section.value_label.text().startswith("The binary log is off on this server")
    assert not _rows(page, "binlog")


def test_left_alone_is_not_a_scroll_area_in_the_scrolled_page(qtbot: QtBot) -> None:
    page = _page(qtbot, "sid-mysql-9.7")
    shown = page.left_alone
    assert shown.verticalScrollBar().maximum() == 0, "the list scrolls inside the page"
    assert shown.height() >= shown.document().size().height()
    assert shown.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff


def test_the_redo_slider_speaks_of_no_minutes_when_no_writes_were_measured(
    qtbot: QtBot,
) -> None:
    page = _page(qtbot, "sid-mysql-9.7")  # its sample measured 0 B/s of redo
    section = page.sections["redo"]
    words = section.value_label.text()
    assert words.startswith("Balanced: ") and "assumed 1 GiB of redo an hour" in words, words
    assert "of writes" not in words and "of writes" not in section.start.text(), words
    assert "of writes" not in section.sentence.text(), section.sentence.text()
    section.control.setValue(section.control.value() + 1)  # every position says so
    assert section.value_label.text().startswith("Smooth writing: "), section.value_label.text()
    assert "of writes" not in section.value_label.text()
