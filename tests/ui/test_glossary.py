"""The glossary has the words the pages use, in plain text without markup characters."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.ui.glossary import GlossaryDialog


def _shown(qtbot: QtBot, filter_text: str = "") -> str:
    dialog = GlossaryDialog()
    qtbot.addWidget(dialog)
    dialog.filter.setText(filter_text)
    return dialog.text.toPlainText()


def test_the_terms_trade_offs_and_exercises_use_are_explained(qtbot: QtBot) -> None:
    text = _shown(qtbot)
    for term in ("OOM killer", "crash recovery", "innodb_flush_log_at_trx_commit"):
        assert term in text, term
    positions = _shown(qtbot, "trx_commit")
    # Each position and what it risks.
    assert "1 (the default)" in positions and "2 writes it" in positions and "0 writes" in positions
    assert "power cut" in positions


def test_no_backticks_are_shown(qtbot: QtBot) -> None:
    text = _shown(qtbot)
    assert "`" not in text
    assert "none passes them straight through" in _shown(qtbot, "scheduler")
