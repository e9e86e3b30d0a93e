"""The glossary dialog, reachable from every page."""

from __future__ import annotations

import html

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLineEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.knobs.glossary import glossary


def _with_code(text: str) -> str:
    """``text`` as HTML, its `quoted` names (a value, a setting) set as code, no backticks."""
    parts = html.escape(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: shown as none at all
        return "".join(parts)
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def glossary_html(filter_text: str = "") -> str:
    """The terms (those containing ``filter_text``) as HTML."""
    needle = filter_text.strip().lower()
    rows = [
        f"<p><b>{html.escape(term)}</b><br>{_with_code(text)}</p>"
        for term, text in glossary().items()
        if not needle or needle in term.lower() or needle in text.lower()
    ]
    return "".join(rows) or "<p>No term matches.</p>"


class GlossaryDialog(QDialog):
    """Plain explanations of the words InnoTune uses, with a filter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("glossary_dialog")
        self.setWindowTitle("Glossary")
        self.resize(560, 520)
        layout = QVBoxLayout(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter, e.g. redo")
        self.filter.setAccessibleName("glossary filter")
        self.text = QTextBrowser()
        self.text.setAccessibleName("glossary")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(self.filter)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.filter.textChanged.connect(self._on_filter_text_changed)
        self._on_filter_text_changed("")

    def _on_filter_text_changed(self, text: str) -> None:
        self.text.setHtml(glossary_html(text))
