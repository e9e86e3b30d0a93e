"""A table as tall as its rows: on a page that scrolls as a whole, it never scrolls inside."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QSizePolicy, QTableWidget, QWidget


class FitTable(QTableWidget):
    """A QTableWidget whose height is its header and every row (its rows sized to contents).

    Call :meth:`fit` after filling it. A table with a scroll bar of its own inside a page that
    scrolls showed two rows of six at the default window size, a verdict cut under the next
    row; the page's scroll bar is the one a person expects.
    """

    def __init__(self, rows: int, columns: int, parent: QWidget | None = None) -> None:
        super().__init__(rows, columns, parent)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def fit(self) -> None:
        """Size every row to its contents, then the table to its rows."""
        self.resizeRowsToContents()
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As wide as Qt would make it; as tall as the header and every row."""
        width = super().sizeHint().width()
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        bar = self.horizontalScrollBar()
        wide = bar.sizeHint().height() if bar.maximum() > 0 else 0
        header = self.horizontalHeader().sizeHint().height()
        return QSize(width, header + rows + wide + 2 * self.frameWidth())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Never squeezed below its rows."""
        return self.sizeHint()
