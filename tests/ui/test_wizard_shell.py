"""The wizard opens offscreen with every step and an About box."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.ui.wizard import STEPS, MainWizard


def test_wizard_has_every_step_in_order(qtbot: QtBot) -> None:
    wizard = MainWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    titles = [wizard.page(pid).title() for pid in wizard.pageIds()]
    assert titles == list(STEPS)
    assert wizard.currentPage().title() == "Connect"


def test_about_box_names_the_program(qtbot: QtBot) -> None:
    wizard = MainWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    assert "InnoTune" in wizard.about_text()
