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


def test_glossary_reachable_from_every_page(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QWizard

    wizard = MainWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    # A wizard-wide option: the button is part of every page's button row.
    assert wizard.testOption(QWizard.WizardOption.HaveCustomButton1)
    assert wizard.button(QWizard.WizardButton.CustomButton1).isVisible()
    wizard.customButtonClicked.emit(QWizard.WizardButton.CustomButton1.value)
    dialog = wizard.glossary_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.filter.setText("redo log")  # type: ignore[attr-defined]
    assert "replaying it" in dialog.text.toPlainText()  # type: ignore[attr-defined]
