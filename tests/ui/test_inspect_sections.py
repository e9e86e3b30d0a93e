"""The Inspect page's result sections: plain wrapped text, made once, following new facts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.ui.pages.inspect import SECTIONS, InspectPage
from app.ui.state import WizardState
from app.ui.widgets.wraplabel import WrapLabel

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


def test_sections_are_made_once_and_follow_new_facts(qtbot: QtBot) -> None:
    page = InspectPage(WizardState())
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None
    page.show_facts(facts)
    server = page.findChild(QGroupBox, "facts_server")
    assert server is not None
    label = server.findChild(WrapLabel)
    assert label is not None and label.accessibleName() == "Server"
    assert label.textFormat() == Qt.TextFormat.PlainText  # facts are never markup
    assert facts.server.version in label.text()
    qtbot.waitUntil(server.isVisible)  # shown by the next layout pass
    shown = label.text()

    page.show_facts(dataclasses.replace(facts, server=None))  # say, a host without a server
    assert not server.isVisible()
    assert len(page.findChildren(QGroupBox)) == len(SECTIONS)  # the same boxes, no new ones
    machine = page.findChild(QGroupBox, "facts_machine")
    assert machine is not None and machine.isVisible()

    page.show_facts(facts)
    assert server.isVisible() and label.text() == shown
    assert len(page.findChildren(QGroupBox)) == len(SECTIONS)
