"""A page that scrolls as a whole, up and down only."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget


def scrolling_body(page: QWidget) -> QVBoxLayout:
    """Put a frameless vertical scroll area on ``page``; the layout to fill is its content's."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    body = QWidget()
    scroll.setWidget(body)
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(scroll)
    layout = QVBoxLayout(body)
    # The scroll bar takes the right margin's place: the content keeps the width it had.
    margins = layout.contentsMargins()
    layout.setContentsMargins(margins.left(), margins.top(), 0, margins.bottom())
    return layout
