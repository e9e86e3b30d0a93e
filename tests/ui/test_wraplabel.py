"""WrapLabel answers height-for-width as QLabel does, and follows its text and font."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.ui.widgets.wraplabel import WrapLabel

TEXT = "<b>Risk:</b> " + "a commit confirmed from memory may be lost on a crash " * 6


def test_heights_are_qlabels(qtbot: QtBot) -> None:
    cached, plain = WrapLabel(TEXT), QLabel(TEXT)
    plain.setWordWrap(True)
    qtbot.addWidget(cached)
    qtbot.addWidget(plain)
    for width in (120, 300, 120, 640, 300):
        assert cached.heightForWidth(width) == plain.heightForWidth(width)
    assert cached.heightForWidth(120) > cached.heightForWidth(640)


def test_new_text_and_font_are_measured_again(qtbot: QtBot) -> None:
    label = WrapLabel(TEXT)
    qtbot.addWidget(label)
    tall = label.heightForWidth(200)
    label.setText("short")
    assert label.heightForWidth(200) < tall
    font = label.font()
    font.setPointSize(font.pointSize() * 3)
    one_line = label.heightForWidth(200)
    label.setFont(font)
    assert label.heightForWidth(200) > one_line
