"""A read-only rich text as tall as its text: no scroll bar of its own inside a scrolled page."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QTextBrowser


class FittedText(QTextBrowser):
    """A text browser whose height follows its text at its width (it never scrolls).

    Laid out once per text or width, unlike a word-wrapped label, which lays its rich text
    out again at every size its layout asks about.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.document().documentLayout().documentSizeChanged.connect(lambda _size: self._fit())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        document = self.document()
        document.setTextWidth(self.viewport().width())
        height = round(document.size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(height)
