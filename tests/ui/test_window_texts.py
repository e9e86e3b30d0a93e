"""Window texts: no command-line flag, no "(s)", no doubled period, no backtick, no raw token.

Every page of a new wizard (labels, buttons, tooltips, placeholders, group titles), the
Inspect page showing recorded facts of each host that has them, and Inspect, Trade-offs
(every slider moved), Preview and Done on the facts of the four server lines the suite runs
(MariaDB 10.5, 10.11, 11.8, MySQL 9.7; tests/unit/test_planner_matrix.py), with the texts
of lists, trees, tables and text views too.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTableWidget,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.domain.target import parse_target
from app.flows.planning import default_positions, plan_for
from app.flows.preview import preview_plan
from app.ui.pages.done import summary_html
from app.ui.pages.inspect import InspectPage
from app.ui.pages.preview import PreviewPage
from app.ui.pages.recommend import RecommendPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState
from app.ui.wizard import MainWizard
from tests.unit.planner_truth import LINES
from tests.unit.test_plan_words import window_faults
from tests.unit.test_planner_matrix import facts_for, hosts

FLAG = re.compile(r"(^|[\s(`])--[a-z]")
BYTES = re.compile(r"\b\d{7,}\b")  # a size in bytes where MiB/GiB belong
FOUR = ("10.5.27", "10.11.19", "11.8.2", "9.7.4")
HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _items(tree: QTreeWidget) -> list[str]:
    texts: list[str] = []

    def walk(item: QTreeWidgetItem) -> None:
        texts.extend(item.text(c) for c in range(item.columnCount()))
        for i in range(item.childCount()):
            walk(item.child(i))

    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        if top is not None:
            walk(top)
    header = tree.headerItem()
    texts += [header.text(c) for c in range(header.columnCount())]
    return texts


def _cells(table: QTableWidget) -> list[str]:
    texts = []
    for r in range(table.rowCount()):
        for c in range(table.columnCount()):
            item = table.item(r, c)
            texts.append(item.text() if item is not None else "")
    for c in range(table.columnCount()):
        header = table.horizontalHeaderItem(c)
        texts.append(header.text() if header is not None else "")
    return texts


def _texts(widget: QWidget) -> list[str]:
    """Every text ``widget`` shows a person (not its children's)."""
    texts = [widget.toolTip(), widget.accessibleName()]
    if isinstance(widget, QLabel | QAbstractButton):
        texts.append(widget.text())
    if isinstance(widget, QLineEdit):
        texts.append(widget.placeholderText())
    if isinstance(widget, QGroupBox):
        texts.append(widget.title())
    if isinstance(widget, QTextEdit | QPlainTextEdit):
        texts.append(widget.toPlainText())
    if isinstance(widget, QTreeWidget):
        texts += _items(widget)
    if isinstance(widget, QTableWidget):
        texts += _cells(widget)
    return texts


def _faults(root: QWidget, verbatim: tuple[QWidget, ...] = ()) -> list[str]:
    """What breaks the window's words under ``root``; ``verbatim`` widgets show files as
    they will be written (their own comments may name a command's flags)."""
    bad = []
    for widget in [root, *root.findChildren(QWidget)]:
        if widget in verbatim:
            continue
        for text in filter(None, _texts(widget)):
            if window_faults(text):
                bad.append(f"{type(widget).__name__}: {', '.join(window_faults(text))}: {text!r}")
    return bad


def test_no_page_of_a_new_wizard_shows_a_flag_or_a_bracketed_plural(qtbot: QtBot) -> None:
    wizard = MainWizard()
    qtbot.addWidget(wizard)
    bad = [f"{name}: {fault}" for name, page in wizard.pages.items() for fault in _faults(page)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("host", sorted(p.parent.name for p in HOSTS.glob("*/facts.json")))
def test_inspect_shows_recorded_facts_in_window_words(qtbot: QtBot, host: str) -> None:
    facts = HostFacts.from_json((HOSTS / host / "facts.json").read_text())
    page = InspectPage(WizardState(facts=facts))
    qtbot.addWidget(page)
    page.show_facts(facts)
    assert not _faults(page), "\n".join(_faults(page))


def _four() -> list[tuple[str, str]]:
    return [(x.version, h) for x in LINES if x.version in FOUR for h in ("sata-ssd", "lvm-hdd")]


@pytest.mark.parametrize(("version", "host"), _four(), ids=[f"{v}-{h}" for v, h in _four()])
def test_every_page_in_window_words_on_the_four_server_lines(
    qtbot: QtBot, version: str, host: str
) -> None:
    line = next(x for x in LINES if x.version == version)
    facts = facts_for(next(h for h in hosts() if h.name == host), line)
    bad: list[str] = []

    inspect = InspectPage(WizardState(facts=facts))
    qtbot.addWidget(inspect)
    inspect.show_facts(facts)
    bad += [f"Inspect: {f}" for f in _faults(inspect)]

    state = WizardState(target=parse_target("local"), facts=facts)
    rec = RecommendPage(state)
    qtbot.addWidget(rec)
    state.plan = plan_for(facts, default_positions(facts))
    rec.refresh()
    bad += [f"Recommendation: {f}" for f in _faults(rec)]
    bad += [f"Recommendation: raw bytes {n}" for n in BYTES.findall(rec.text.text())]
    state.plan = None
    tradeoffs = TradeoffsPage(state)
    qtbot.addWidget(tradeoffs)
    tradeoffs.initializePage()
    tradeoffs._flush_left_alone()  # the list waits for the next event-loop turn
    bad += [f"Trade-offs: {f}" for f in _faults(tradeoffs)]
    for section in tradeoffs.sections.values():
        control = section.control
        if isinstance(control, QSlider):
            for value in (control.minimum(), control.maximum()):
                control.setValue(value)
                tradeoffs._flush_left_alone()
                bad += [
                    f"Trade-offs ({section.declared.key}={value}): {f}" for f in _faults(tradeoffs)
                ]
        else:
            control.setChecked(not control.isChecked())
            tradeoffs._flush_left_alone()
            bad += [f"Trade-offs ({section.declared.key} toggled): {f}" for f in _faults(tradeoffs)]
            control.setChecked(not control.isChecked())
    plan = state.plan
    assert plan is not None
    rec.refresh()  # every slider at its far end: the risks in words
    bad += [f"Recommendation (sliders moved): {f}" for f in _faults(rec)]
    bad += [
        f"Recommendation (sliders moved): raw bytes {n}" for n in BYTES.findall(rec.text.text())
    ]

    preview = PreviewPage(WizardState(facts=facts, plan=plan))
    qtbot.addWidget(preview)
    preview.show_preview(preview_plan(plan, facts, None))
    bad += [
        f"Preview: {f}" for f in _faults(preview, (preview.diffs, preview.files, preview.commands))
    ]

    done = WizardState(target=parse_target("local"), facts=facts, plan=plan)
    text = re.sub(r"<[^>]+>", " ", summary_html(done, "/tmp/innotune.log"))
    bad += [f"Done: {f}: {text!r}" for f in window_faults(html.unescape(text))]
    assert not bad, "\n".join(sorted(set(bad)))
