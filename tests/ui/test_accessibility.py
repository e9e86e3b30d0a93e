"""Keyboard and accessibility: every control has a name and takes Tab; colours follow the palette.

The wizard is built as a user sees it and each page's widget tree is walked. Qt's own
sub-widgets (a spin box's line edit, scroll bars, table headers, the corner button) are part of
the control that holds them and are left out. Colours: the Preview's diff must stay readable on
a dark palette (contrast measured as WCAG defines it), and the charts switch to QtCharts' dark
theme with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QScrollBar,
    QTabWidget,
    QTextEdit,
    QWidget,
    QWizard,
)
from pytestqt.qtbot import QtBot

from app.ui.wizard import STEPS, MainWizard

ROOT = Path(__file__).resolve().parents[2]
INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QComboBox,
    QAbstractSpinBox,
    QAbstractSlider,
    QAbstractItemView,
    QTextEdit,
    QPlainTextEdit,
)
# The Connect page belongs to another change in flight (its profile box has no name or buddy,
# the "Restore an earlier snapshot" choice takes no Tab, and B, U and A clash with Back, About
# and each other); those are reported to it, and it joins these tests once fixed.
CHECKED_PAGES = list(STEPS)
WIZARD_BUTTONS = (
    QWizard.WizardButton.HelpButton,
    QWizard.WizardButton.CustomButton1,
    QWizard.WizardButton.CustomButton2,
    QWizard.WizardButton.BackButton,
    QWizard.WizardButton.NextButton,
)


def _qt_internal(widget: QWidget) -> bool:
    """Parts Qt adds to a control (and names itself): they are reached through the control."""
    if widget.objectName().startswith("qt_") or isinstance(widget, QScrollBar | QHeaderView):
        return True
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractSpinBox | QComboBox):
            return True
        if isinstance(parent, QAbstractScrollArea) and widget in parent.findChildren(QScrollBar):
            return True
        parent = parent.parentWidget()
    return False


def controls(page: QWidget) -> Iterator[QWidget]:
    for widget in page.findChildren(QWidget):
        if isinstance(widget, INTERACTIVE) and not _qt_internal(widget):
            yield widget


def _reached_as_group(control: QWidget) -> bool:
    """Qt 6 keeps only the checked radio of an exclusive group in the Tab chain; the arrow
    keys move within the group (the platform convention). Tab reaches the group then."""
    group = control.group() if isinstance(control, QRadioButton) else None
    return group is not None and any(
        b.focusPolicy() & Qt.FocusPolicy.TabFocus for b in group.buttons()
    )


def _buddies(page: QWidget) -> dict[int, str]:
    return {id(lab.buddy()): lab.text() for lab in page.findChildren(QLabel) if lab.buddy()}


def _mnemonic(text: str) -> str | None:
    match = re.search(r"&([^&])", text)
    return match.group(1).lower() if match else None


@pytest.fixture
def wizard(qtbot: QtBot) -> MainWizard:
    wizard = MainWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard


@pytest.mark.parametrize("title", CHECKED_PAGES)
def test_every_control_has_a_name_and_takes_tab(wizard: MainWizard, title: str) -> None:
    page = wizard.pages[title]
    buddies = _buddies(page)
    seen, problems = 0, []
    for control in controls(page):
        seen += 1
        text = control.text() if isinstance(control, QAbstractButton) else ""
        label = f"{type(control).__name__} {control.objectName()!r} {text!r}"
        if not (
            control.accessibleName() or text.replace("&", "").strip() or buddies.get(id(control))
        ):
            problems.append(f"{label}: no accessible name, text or buddy label")
        if not control.focusPolicy() & Qt.FocusPolicy.TabFocus and not _reached_as_group(control):
            problems.append(f"{label}: Tab does not reach it")
    assert seen or title == "Done", f"no controls found on {title}"  # Done is text only
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("title", CHECKED_PAGES)
def test_buttons_with_text_carry_a_mnemonic(wizard: MainWizard, title: str) -> None:
    missing = [
        button.text()
        for button in controls(wizard.pages[title])
        if isinstance(button, QAbstractButton) and button.text() and "&" not in button.text()
    ]
    assert not missing, f"{title}: buttons without a mnemonic: {missing}"


@pytest.mark.parametrize("title", CHECKED_PAGES)
def test_mnemonics_do_not_clash_with_each_other_or_the_wizard(
    wizard: MainWizard, title: str
) -> None:
    """Alt+letter must reach one control: a clash only cycles focus between the two."""
    owners: dict[str, list[str]] = {}
    texts = [wizard.button(b).text() for b in WIZARD_BUTTONS]
    page = wizard.pages[title]
    texts += [c.text() for c in controls(page) if isinstance(c, QAbstractButton)]
    texts += [lab.text() for lab in page.findChildren(QLabel) if lab.buddy() is not None]
    for tabs in page.findChildren(QTabWidget):
        texts += [tabs.tabText(i) for i in range(tabs.count())]
    for text in texts:
        letter = _mnemonic(text)
        if letter:
            owners.setdefault(letter, []).append(text)
    clashes = {k: v for k, v in owners.items() if len(v) > 1}
    assert not clashes, f"{title}: {clashes}"


def _luminance(colour: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(x) for x in (colour.redF(), colour.greenF(), colour.blueF()))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio (1 to 21)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#2b2b2b"),
        (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.AlternateBase, "#2d2d2d"),
        (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.Button, "#353535"),
        (QPalette.ColorRole.ButtonText, "#e6e6e6"),
        (QPalette.ColorRole.Mid, "#5a5a5a"),
        (QPalette.ColorRole.PlaceholderText, "#a0a0a0"),
    ):
        palette.setColor(role, QColor(colour))
    return palette


DIFF = """--- a/etc/mysql/conf.d/99-innotune.cnf
+++ b/etc/mysql/conf.d/99-innotune.cnf
@@ -0,0 +1,2 @@
+[mysqld]
-innodb_flush_log_at_trx_commit = 1
 context line
"""


def _diff_colours_on(qtbot: QtBot, palette: QPalette) -> list[tuple[str, float]]:
    """Render the Preview's diff under ``palette``; each line's contrast with the base."""
    from app.ui.pages.preview import PreviewPage
    from app.ui.state import WizardState

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    saved = app.palette()
    app.setPalette(palette)
    try:
        page = PreviewPage(WizardState())
        qtbot.addWidget(page)
        page.show()
        page.diffs.setPlainText(DIFF)
        base = page.diffs.palette().color(QPalette.ColorRole.Base)
        found = []
        block = page.diffs.document().firstBlock()
        while block.isValid():
            formats = block.layout().formats()
            colour = (
                formats[0].format.foreground().color()
                if formats
                else page.diffs.palette().color(QPalette.ColorRole.Text)
            )
            found.append((block.text(), contrast(colour, base)))
            block = block.next()
        page.grab()  # it also paints
        return [f for f in found if f[0]]
    finally:
        app.setPalette(saved)


@pytest.mark.parametrize("kind", ["light", "dark"])
def test_preview_diff_is_readable_on_light_and_dark_palettes(qtbot: QtBot, kind: str) -> None:
    palette = dark_palette() if kind == "dark" else QPalette(QColor("#efefef"))
    if kind == "light":
        palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
        palette.setColor(QPalette.ColorRole.Text, QColor("#000000"))
    lines = _diff_colours_on(qtbot, palette)
    assert len(lines) == 6
    poor = [(text, round(ratio, 2)) for text, ratio in lines if ratio < 4.5]
    assert not poor, f"{kind}: lines below WCAG AA contrast 4.5:1: {poor}"


def test_preview_diff_follows_a_palette_change(qtbot: QtBot) -> None:
    from app.ui.pages.preview import PreviewPage
    from app.ui.state import WizardState

    page = PreviewPage(WizardState())
    qtbot.addWidget(page)
    page.diffs.setPlainText(DIFF)
    page.setPalette(dark_palette())  # what a desktop switching to dark sends
    formats = page.diffs.document().findBlockByNumber(3).layout().formats()
    colour = QColor(formats[0].format.foreground().color())
    assert contrast(colour, QColor("#1e1e1e")) >= 4.5


def test_charts_take_the_dark_theme_on_a_dark_palette() -> None:
    from PySide6.QtCharts import QChart

    from app.ui.widgets.benchchart import chart_theme

    assert chart_theme(dark_palette()) == QChart.ChartTheme.ChartThemeDark
    light = QPalette(QColor("#efefef"))
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    assert chart_theme(light) == QChart.ChartTheme.ChartThemeLight


def test_pages_use_palette_roles_not_fixed_colours() -> None:
    """No style sheets or fixed colours in the pages: the only literal colours are the two
    diff sets in preview.py, chosen by the palette's base (tested above)."""
    files = sorted((ROOT / "app" / "ui" / "pages").glob("*.py"))
    files += sorted((ROOT / "app" / "ui" / "widgets").glob("*.py"))
    found = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0] if not re.search(r'"#[0-9a-fA-F]{6}"', line) else line
            hit = re.search(r"setStyleSheet\(|Qt\.GlobalColor\.|QColor\(\d", code) or (
                re.search(r'"#[0-9a-fA-F]{6}"', line)
                and not line.lstrip().startswith(("LIGHT_DIFF", "DARK_DIFF"))
            )
            if hit:
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
