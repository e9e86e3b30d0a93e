"""A word-wrapped label that remembers the heights its text takes at each width."""

from __future__ import annotations

import math
from collections.abc import Iterable

from PySide6 import QtGui
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QWidget

# A handful of widths is enough: a layout pass asks for the current width, the width with or
# without a scroll bar, and a few while the window is being resized.
_KEPT = 16


class WrapLabel(QLabel):
    """A QLabel with word wrap on whose height-for-width answers are cached.

    Qt lays the whole text out again for every ``heightForWidth`` question, and a layout
    pass over a long page asks each wrapped label several times (the page, the scroll
    area with and without its scroll bar, the wizard). A slider move that changes one
    label's text re-lays out the page, so unchanged labels were laid out again and again
    for answers that cannot have changed: the cache is keyed by the text and the width,
    and dropped when the font or style changes.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._heights: dict[tuple[str, int], int] = {}
        self._reserved: tuple[str, ...] = ()

    def reserve(self, texts: Iterable[str]) -> None:
        """Keep room for the tallest of ``texts`` too: the other words this label may show.

        A label whose text changes when a control above or beside it is toggled would
        otherwise grow or shrink, and move every control below it under the pointer.
        """
        reserved = tuple(t for t in texts if t)
        if reserved != self._reserved:
            self._reserved = reserved
            self._heights.clear()
            self.updateGeometry()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        key = (self.text(), width)
        height = self._heights.get(key)
        if height is None:
            if len(self._heights) >= _KEPT:
                self._heights.clear()
            height = super().heightForWidth(width)
            if self._reserved:
                # The label's own answer, plus how much taller the tallest other text lays out.
                inner = width - 2 * self.margin() - self.contentsMargins().left()
                inner -= self.contentsMargins().right()
                own = self._text_height(self.text(), inner)
                tallest = max(self._text_height(t, inner) for t in self._reserved)
                height += max(0, tallest - own)
            self._heights[key] = height
        return height

    def _text_height(self, text: str, width: int) -> int:
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        rich = self.textFormat() == Qt.TextFormat.RichText or (
            self.textFormat() == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text)
        )
        if rich:
            doc.setHtml(text)
        else:
            doc.setPlainText(text)
        doc.setTextWidth(max(width, 1))
        return math.ceil(doc.size().height())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() in (
            QEvent.Type.FontChange,
            QEvent.Type.StyleChange,
            QEvent.Type.ContentsRectChange,
        ):
            self._heights.clear()
        super().changeEvent(event)
