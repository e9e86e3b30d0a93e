"""Window texts: no command-line flag, no "(s)", no doubled period, no backtick.

Every page of a new wizard (labels, buttons, tooltips, placeholders, group titles), and the
Inspect page showing recorded facts of each host that has them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.ui.pages.inspect import InspectPage
from app.ui.state import WizardState
from app.ui.wizard import MainWizard

FLAG = re.compile(r"(^|[\s(`])--[a-z]")
HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _faults(root: QWidget) -> list[str]:
    bad = []
    for widget in [root, *root.findChildren(QWidget)]:
        texts = [widget.toolTip(), widget.accessibleName()]
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        if isinstance(widget, QLineEdit):
            texts.append(widget.placeholderText())
        if isinstance(widget, QGroupBox):
            texts.append(widget.title())
        for text in filter(None, texts):
            if FLAG.search(text) or "(s)" in text or "`" in text:
                bad.append(f"{type(widget).__name__}: {text!r}")
            if ".." in text.replace("...", ""):
                bad.append(f"{type(widget).__name__}: {text!r}")
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
