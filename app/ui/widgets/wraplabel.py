"""A word-wrapped label that remembers the heights its text takes at each width."""

from __future__ import annotations

from PySide6.QtCore import QEvent
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

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        key = (self.text(), width)
        height = self._heights.get(key)
        if height is None:
            if len(self._heights) >= _KEPT:
                self._heights.clear()
            height = self._heights[key] = super().heightForWidth(width)
        return height

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() in (
            QEvent.Type.FontChange,
            QEvent.Type.StyleChange,
            QEvent.Type.ContentsRectChange,
        ):
            self._heights.clear()
        super().changeEvent(event)
