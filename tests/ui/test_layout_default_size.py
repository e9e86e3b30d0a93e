"""Every page of the wizard at the size a new window opens at, on facts of the four server lines.

The facts are recorded: MySQL 9.7 (sid), MariaDB 11.8 (trixie) and MariaDB 10.5 (bullseye) by
``make screenshots TARGET=…`` against the booted test hosts, with the check's own steps
(tests/fixtures/hosts/<host>-<server>/), MariaDB 10.11 by ``innotune inspect practice``. Each
page is filled as the wizard fills it (the Connect page from the check's steps, Inspect from the
facts, Trade-offs and Preview planned from them, Verify from a recorded before/after benchmark
of the sid host), then:

* no label, button, check box, header or cell shows its text cut (tests/ui/layout.py
  measures each against its widget's room);
* ticking or unticking any check box moves no control of the page, so a second click lands
  where the first did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QCheckBox, QWidget, QWizard
from pytestqt.qtbot import QtBot

from app.access.doctor import DoctorResult, Step
from app.domain.bench import BenchReport
from app.domain.hostfacts import HostFacts
from app.exercises.model import ExerciseResult
from app.flows.preview import preview_plan
from app.ui.exercises import ExercisesDialog
from app.ui.wizard import MainWizard
from tests.ui.layout import clipped, geometries

FIXTURES = Path(__file__).parents[1] / "fixtures"
HOSTS = FIXTURES / "hosts"
#: The four server lines the suite runs for real, each with its recorded facts.
LINES = {
    "MySQL 9.7": "sid-mysql-9.7",
    "MariaDB 11.8": "trixie-mariadb-11.8",
    "MariaDB 10.5": "bullseye-mariadb-10.5",
    "MariaDB 10.11": "practice-mariadb-10.11",
}
BENCH = FIXTURES / "bench" / "sid-mysql-9.7"


def _steps(host: str) -> list[Step]:
    """The steps of the check that connected to ``host`` (the sid host's for the practice)."""
    path = HOSTS / host / "check-steps.json"
    if not path.exists():
        path = HOSTS / LINES["MySQL 9.7"] / "check-steps.json"
    return [Step(**step) for step in json.loads(path.read_text())]


def _report(label: str) -> BenchReport:
    return BenchReport.from_json((BENCH / f"bench-{label}.json").read_text())


def default_wizard(qtbot: QtBot) -> MainWizard:
    """A new wizard at the size the program opens it at (whatever geometry was saved)."""
    wizard = MainWizard()
    wizard.setOption(QWizard.WizardOption.NoCancelButton, False)
    qtbot.addWidget(wizard)
    wizard.resize(900, 650)  # MainWizard's own; the pages' minimum sizes may make it taller
    wizard.show()
    QApplication.processEvents()
    return wizard


def walk(wizard: MainWizard, host: str) -> Iterator[tuple[str, QWidget]]:
    """Fill each page as the wizard would and yield it once it is the current page."""
    facts = HostFacts.from_json((HOSTS / host / "facts.json").read_text())
    state = wizard.state
    connect = wizard.pages["Connect"]
    steps = _steps(host)
    for step in steps:
        connect._on_check_progress(step)  # type: ignore[attr-defined]
    connect.show_check_result(DoctorResult(steps=steps))  # type: ignore[attr-defined]
    yield "Connect", connect

    state.facts = facts
    inspect = wizard.pages["Inspect"]
    inspect._inspected_for = state.connection  # type: ignore[attr-defined] # inspected already
    wizard.next()
    inspect.show_facts(facts)  # type: ignore[attr-defined]
    yield "Inspect", inspect

    wizard.next()
    rec = wizard.pages["Recommendation"]
    assert state.plan is not None, f"no plan for {host}"
    yield "Recommendation", rec

    wizard.next()
    tradeoffs = wizard.pages["Trade-offs"]
    yield "Trade-offs", tradeoffs

    preview_page = wizard.pages["Preview"]
    preview = preview_plan(state.plan, facts, None)
    state.preview = preview
    preview_page._built_for = state.plan  # type: ignore[attr-defined] # built already
    wizard.next()
    preview_page.show_preview(preview)  # type: ignore[attr-defined]
    yield "Preview", preview_page

    wizard.next()
    yield "Apply", wizard.pages["Apply"]

    wizard.next()
    verify = wizard.pages["Verify"]
    yield "Verify before any run", verify
    state.bench_before, state.bench_after = _report("before"), _report("after")
    verify.show_results()  # type: ignore[attr-defined]
    yield "Verify", verify

    wizard.next()
    yield "Done", wizard.pages["Done"]


@pytest.mark.parametrize("line", list(LINES))
def test_no_text_is_cut_on_any_page_at_the_default_size(qtbot: QtBot, line: str) -> None:
    wizard = default_wizard(qtbot)
    bad = []
    for name, page in walk(wizard, LINES[line]):
        assert wizard.currentPage() is page
        bad += [f"{name}: {fault}" for fault in clipped(page)]
    assert not bad, f"{wizard.width()}×{wizard.height()}:\n" + "\n".join(bad)


def _boxes(page: QWidget) -> list[QCheckBox]:
    return [
        box
        for box in page.findChildren(QCheckBox)
        if box.isVisible() and box.isEnabled() and not isinstance(box.parent(), QAbstractItemView)
    ]


@pytest.mark.parametrize("line", list(LINES))
def test_no_control_moves_when_a_check_box_is_toggled(qtbot: QtBot, line: str) -> None:
    wizard = default_wizard(qtbot)
    moved = []
    for name, page in walk(wizard, LINES[line]):
        for box in _boxes(page):
            for _ in range(2):  # toggle, then back
                before = geometries(page)
                box.click()
                after = geometries(page)
                for control, where in before.items():
                    now = after.get(control)
                    if now != where:
                        what = getattr(control, "text", lambda: "")() or control.accessibleName()
                        moved.append(
                            f"{name}: toggling {box.text()!r} moved "
                            f"{type(control).__name__} {what!r} from {where} to {now}"
                        )
    assert not moved, "\n".join(moved)


@pytest.mark.parametrize("line", ["MySQL 9.7", "MariaDB 11.8"])
def test_connect_shows_every_step_of_the_check_whole(qtbot: QtBot, line: str) -> None:
    wizard = default_wizard(qtbot)
    name, connect = next(walk(wizard, LINES[line]))
    steps = connect.view.steps  # type: ignore[attr-defined]
    QApplication.processEvents()
    room = steps.viewport().rect()
    assert steps.topLevelItemCount() == 8
    for i in range(steps.topLevelItemCount()):
        item = steps.topLevelItem(i)
        assert room.contains(steps.visualItemRect(item)), f"{item.text(0)} is not shown whole"
    assert steps.verticalScrollBar().maximum() == 0


def test_the_exercises_window_shows_every_tab_and_introduction_whole(qtbot: QtBot) -> None:
    dialog = ExercisesDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    # It fits a 1280×800 screen with every exercise in the list (eight tabs in a row did not).
    assert dialog.minimumSizeHint().width() <= 1280 and dialog.width() <= 1280
    assert dialog.chooser.count() == len(dialog.panels)
    bad = []
    for row, panel in enumerate(dialog.panels.values()):
        dialog.chooser.setCurrentRow(row)  # as a click on the list does
        assert dialog.tabs.currentWidget() is panel
        bad += [f"{panel.text.title}: {fault}" for fault in clipped(dialog)]
    assert not bad, f"{dialog.width()}×{dialog.height()}:\n" + "\n".join(bad)
    # A result's long headers wrap onto two lines instead of being cut (the redo log
    # exercise's, as one run gave them).
    panel = dialog.panels["redolog"]
    dialog.tabs.setCurrentWidget(panel)
    headers = ["redo log", "commits/s", "pages written per 1,000 transactions"]
    headers += ["pages left to write at the end", "peak checkpoint age"]
    rows = [["16 MiB", "1298", "2219", "1313", "12.3 MiB"]]
    rows += [["1 GiB", "2389", "0", "1430", "42.7 MiB"]]
    panel.show_result(ExerciseResult("redolog", headers, rows, "What the run found."))
    assert not clipped(dialog), clipped(dialog)
