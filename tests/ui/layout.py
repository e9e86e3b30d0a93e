"""Layout checks for the UI tests: texts that do not fit their widget, controls that move.

:func:`clipped` walks a shown window and measures every visible text against the room its widget
has: a label's text (word-wrapped labels: the height their text needs at their width, and their
longest unbreakable word), a button's or a check box's text with its indicator, a table's or
tree's header sections and visible cells, a chart's title and category names, a tab's title.
Each measure is Qt's own (QFontMetrics, QTextDocument, the style's and the item delegate's size
hints), never a guess of pixels.

:func:`geometries` records where every control is, in window coordinates, so a test can
toggle a check box and say which controls moved.
"""

from __future__ import annotations

from PySide6 import QtGui
from PySide6.QtCharts import QBarCategoryAxis, QChartView
from PySide6.QtCore import QEvent, QModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyleOptionViewItem,
    QTabBar,
    QTableView,
    QTreeView,
    QWidget,
)

# Rounding in Qt's own layouts: a pixel either way is not a cut letter.
SLACK = 1


def _name(widget: QWidget) -> str:
    name = widget.objectName() or widget.accessibleName()
    return f"{type(widget).__name__}({name})" if name else type(widget).__name__


def _shown(widget: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def _plain(text: str) -> str:
    """A button's or a buddy label's text as drawn: its mnemonic ampersands removed."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _label_fault(label: QLabel) -> str | None:
    text = label.text()
    if not text or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    room = label.contentsRect()
    indent = 2 * max(label.margin(), 0)
    width, height = room.width() - indent, room.height() - indent
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text)
    )
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    if rich:
        doc.setHtml(text)
    else:
        doc.setPlainText(_plain(text) if label.buddy() is not None else text)
    option = QTextOption()
    option.setWrapMode(
        QTextOption.WrapMode.WordWrap if label.wordWrap() else QTextOption.WrapMode.NoWrap
    )
    doc.setDefaultTextOption(option)
    if label.wordWrap():
        doc.setTextWidth(width)
        # The longest word that cannot be broken: wider than the label, it is cut.
        if doc.idealWidth() > width + SLACK:
            return f"a word {doc.idealWidth():.0f} px wide in {width} px"
        # Qt's own answer for this label at this width (what its layout should have given).
        need = label.heightForWidth(room.width())
        need = max(need, int(doc.size().height())) if need >= 0 else int(doc.size().height())
        if need > room.height() + SLACK:
            return f"needs {need} px of height, has {room.height()}"
        return None
    if doc.idealWidth() > width + SLACK:
        return f"needs {doc.idealWidth():.0f} px, has {width}"
    if doc.size().height() > height + SLACK:
        return f"needs {doc.size().height():.0f} px of height, has {height}"
    return None


def _button_fault(button: QAbstractButton) -> str | None:
    if not button.text():
        return None
    hint = button.sizeHint()
    if hint.width() > button.width() + SLACK:
        return f"needs {hint.width()} px, has {button.width()}"
    if button.fontMetrics().height() > button.contentsRect().height() + SLACK:
        return f"a line is {button.fontMetrics().height()} px high, has {button.height()}"
    return None


def _header_faults(header: QHeaderView) -> list[str]:
    model = header.model()
    if model is None or not _shown(header):
        return []
    style = header.style()
    margin = style.pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    metrics = header.fontMetrics()
    view = header.parentWidget()
    scrolls = isinstance(view, QAbstractItemView) and _scrolls(view)
    faults = []
    for section in range(header.count()):
        if header.isSectionHidden(section) or header.sectionSize(section) <= 0:
            continue
        text = str(model.headerData(section, header.orientation()) or "")
        if not text:
            continue
        lines = text.split("\n")
        need = max(metrics.horizontalAdvance(line) for line in lines) + 2 * margin
        size = header.sectionSize(section)
        if header.defaultAlignment() & Qt.TextFlag.TextWordWrap:  # type: ignore[operator]
            # A wrapping header needs the lines its words take at the section's width.
            room = QRect(0, 0, max(1, size - 2 * margin), 10_000)
            flags = int(Qt.TextFlag.TextWordWrap)
            lines = ["x"] * max(
                1, metrics.boundingRect(room, flags, text).height() // max(1, metrics.lineSpacing())
            )
            need = min(need, size)
        if header.orientation() == Qt.Orientation.Horizontal:
            if need > size + SLACK:
                faults.append(f"header {text!r} needs {need} px, has {size}")
            tall = metrics.lineSpacing() * len(lines)
            if tall > header.height() + SLACK:
                faults.append(f"header {text!r} needs {tall} px of height, has {header.height()}")
            # A section past the viewport's right edge is cut by the view, unless the view
            # scrolls to it (the last resort for a table wider than the window).
            left = header.sectionViewportPosition(section)
            if not scrolls and left < header.width() < left + size - SLACK:
                faults.append(f"header {text!r} runs past the view's edge")
    return faults


def _scrolls(view: QAbstractItemView) -> bool:
    """True when the view scrolls sideways to what lies past its right edge."""
    bar = view.horizontalScrollBar()
    return bar.maximum() > 0 and view.horizontalScrollBarPolicy() != (
        Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    )


def _cell_faults(view: QAbstractItemView) -> list[str]:
    model = view.model()
    if model is None or not _shown(view):
        return []
    viewport = view.viewport().rect()
    delegate = view.itemDelegate()
    faults = []

    def visit(parent: QModelIndex) -> None:
        for row in range(model.rowCount(parent)):
            # A list's model keeps columnCount private in PySide6: a list has one column.
            columns = 1 if isinstance(view, QListView) else model.columnCount(parent)
            for column in range(columns):
                index = model.index(row, column, parent)
                if isinstance(view, QTableView) and view.isColumnHidden(column):
                    continue
                if isinstance(view, QTreeView) and view.isColumnHidden(column):
                    continue
                rect = view.visualRect(index)
                if not rect.isValid() or not rect.intersects(viewport):
                    continue
                text = str(model.data(index, Qt.ItemDataRole.DisplayRole) or "")
                if not text:
                    continue
                option = QStyleOptionViewItem()
                option.initFrom(view)
                option.font = view.font()
                option.fontMetrics = view.fontMetrics()
                option.rect = QRect(rect)
                option.features = QStyleOptionViewItem.ViewItemFeature.HasDisplay
                if view.wordWrap():
                    option.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
                    option.textElideMode = Qt.TextElideMode.ElideNone
                if model.data(index, Qt.ItemDataRole.CheckStateRole) is not None:
                    option.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
                delegate.initStyleOption(option, index)
                option.rect = QRect(rect)
                need = delegate.sizeHint(option, index)
                if need.width() > rect.width() + SLACK:
                    faults.append(f"cell {text[:40]!r} needs {need.width()} px, has {rect.width()}")
                elif need.height() > rect.height() + SLACK:
                    faults.append(
                        f"cell {text[:40]!r} needs {need.height()} px of height, "
                        f"has {rect.height()}"
                    )
                elif rect.right() > viewport.right() + SLACK and not _scrolls(view):
                    faults.append(f"cell {text[:40]!r} runs past the view's edge")
            if isinstance(view, QTreeView):
                first = model.index(row, 0, parent)
                if model.hasChildren(first) and view.isExpanded(first):
                    visit(first)

    visit(QModelIndex())
    return faults


def settle() -> None:
    """Let every pending layout pass run (a scroll area's content takes a few)."""
    for _ in range(4):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
        QApplication.processEvents()


def _doc_width(text: str, font: QFont) -> float:
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setHtml(text)
    return doc.idealWidth()


def _chart_faults(view: QChartView) -> list[str]:
    """A chart's title and its category names against the room QtCharts gives them."""
    chart = view.chart()
    if chart is None or not _shown(view):
        return []
    faults = []
    margins = chart.margins()
    room = chart.size().width() - margins.left() - margins.right()
    if chart.title() and _doc_width(chart.title(), chart.titleFont()) > room + SLACK:
        faults.append(f"title {chart.title()!r} is wider than its chart ({room:.0f} px)")
    plot = chart.plotArea()
    for axis in chart.axes(Qt.Orientation.Horizontal):
        if isinstance(axis, QBarCategoryAxis) and axis.count():
            # QtCharts (HorizontalAxis::updateGeometry) gives each label the axis width over
            # its count of tick positions (one more than the categories) less 2 × 5 px of
            # padding, and measures it as a text item (4 px document margins each side);
            # wider, the label ends in "...".
            each = plot.width() / (axis.count() + 1) - 2 * 5
            for name in axis.categories():
                need = _doc_width(name, axis.labelsFont()) + 2 * 4
                if need > each + SLACK:
                    faults.append(f"category {name!r} needs {need:.0f} px, has {each:.0f}")
    return faults


def _tab_faults(bar: QTabBar) -> list[str]:
    """Tabs whose title is cut, or that lie past the bar's end (behind its scroll arrows)."""
    if not _shown(bar):
        return []
    faults = []
    for index in range(bar.count()):
        rect = bar.tabRect(index)
        text = _plain(bar.tabText(index))
        if rect.right() > bar.width() + SLACK or rect.left() < -SLACK:
            faults.append(f"tab {text!r} lies past the end of its bar")
        elif bar.fontMetrics().horizontalAdvance(text) > rect.width() + SLACK:
            faults.append(f"tab {text!r} is cut to {rect.width()} px")
    return faults


def clipped(root: QWidget) -> list[str]:
    """Every text under ``root`` that does not fit its widget, as ``what: why`` lines."""
    settle()
    faults = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not _shown(widget):
            continue
        fault: str | None = None
        if isinstance(widget, QLabel):
            fault = _label_fault(widget)
        elif isinstance(widget, QAbstractButton) and not isinstance(widget.parent(), QHeaderView):
            fault = _button_fault(widget)
        if fault:
            faults.append(f"{_name(widget)} {widget.text()[:60]!r}: {fault}")
        if isinstance(widget, QAbstractItemView) and not isinstance(widget, QHeaderView):
            headers: list[QHeaderView] = []
            if isinstance(widget, QTableView):
                headers = [widget.horizontalHeader()]
            elif isinstance(widget, QTreeView) and not widget.isHeaderHidden():
                headers = [widget.header()]
            for header in headers:
                faults += [f"{_name(widget)}: {f}" for f in _header_faults(header)]
            faults += [f"{_name(widget)}: {f}" for f in _cell_faults(widget)]
        if isinstance(widget, QTabBar):
            faults += [f"{_name(widget)}: {f}" for f in _tab_faults(widget)]
        if isinstance(widget, QChartView):
            faults += [f"{_name(widget)}: {f}" for f in _chart_faults(widget)]
    return faults


CONTROLS = (
    QAbstractButton,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
)


def geometries(root: QWidget) -> dict[QWidget, QRect]:
    """Where each visible control under ``root`` is, in the window's coordinates."""
    settle()
    window = root.window()
    found = {}
    for widget in root.findChildren(QWidget):
        if isinstance(widget, CONTROLS) and _shown(widget):
            if isinstance(widget.parent(), QHeaderView | QAbstractSpinBox | QComboBox):
                continue
            corner = widget.mapTo(window, widget.rect().topLeft())
            found[widget] = QRect(corner, widget.size())
    return found
