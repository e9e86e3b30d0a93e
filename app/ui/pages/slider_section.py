"""A Trade-offs slider's section: its explanation, control, risk sentence and changes."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from app.domain.plan import Change
from app.flows.planning import change_values
from app.knobs import default_catalogue
from app.knobs.sliders import Slider
from app.ui.widgets.wraplabel import WrapLabel

TARGET_WORDS = {
    "dynamic": "live",
    "option_file": "after a restart",
    "sysfs": "live (disk)",
    "sysctl": "live (kernel)",
    "advice": "advice only",
    "option_remove": "line removed",
}


def change_label(change: Change) -> str:
    """The setting a change is about, with its device."""
    return f"{change.key} ({change.device})" if change.device else change.key


def value_column_width(label: QLabel) -> int:
    """The width of the words beside every control: about 36 average characters."""
    return label.fontMetrics().averageCharWidth() * 36


def risk_html(sentence: str) -> str:
    """A slider's risk sentence as its section shows it."""
    return f"<b>Risk:</b> {html.escape(sentence)}"


def list_height(tree: QTreeWidget, rows: int) -> int:
    """The height of a list that shows its header and exactly ``rows`` whole rows."""
    row = tree.sizeHintForRow(0) if tree.topLevelItemCount() else tree.fontMetrics().height()
    header = tree.header().sizeHint().height()
    return header + rows * max(row, 1) + 2 * tree.frameWidth()


def _tick(checked: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked


class SliderSection(QGroupBox):
    """A slider's explanation, its control, its one-sentence risk and the changes it makes.

    Built from the slider's declaration (resources/sliders.toml): a switch is a checkbox,
    a percentage a slider over its range, the others a slider over their positions.
    """

    moved = Signal()
    rejected_changed = Signal(str, bool)

    def __init__(self, declared: Slider) -> None:
        super().__init__(declared.heading)
        self.declared = declared
        self.slider = declared.key
        self.setObjectName(f"slider_{declared.key}")
        layout = QVBoxLayout(self)
        explanation = WrapLabel(declared.explanation)
        layout.addWidget(explanation)
        # The control and its words in two fixed columns: the words take the same width in
        # every section whatever they say (wrapping onto a second line), so every slider's
        # track starts, ends and stays at the same place, and both sit at the row's top so a
        # label that wraps never shifts the control under the pointer.
        row = QHBoxLayout()
        top = Qt.AlignmentFlag.AlignTop
        self.control: QSlider | QCheckBox
        self.value_label = WrapLabel()
        self.value_label.setObjectName(f"value_{declared.key}")
        self.value_label.setFixedWidth(value_column_width(self.value_label))
        self.value_label.setMinimumHeight(2 * self.value_label.fontMetrics().lineSpacing())
        self.value_label.setAlignment(Qt.AlignmentFlag.AlignLeft | top)
        if declared.kind == "switch":
            self.control = QCheckBox(declared.checkbox or declared.title)
            self.control.toggled.connect(self._on_control_changed)
        else:
            self.control = QSlider(Qt.Orientation.Horizontal)
            self.control.setPageStep(declared.step)
            if declared.range is not None and not declared.positions:
                self.control.setRange(*declared.range)
            else:
                self.control.setRange(0, len(declared.positions) - 1)
                self.control.setTickPosition(QSlider.TickPosition.TicksBelow)
            self.control.valueChanged.connect(self._on_control_changed)
        row.addWidget(self.control, 1, top)
        row.addWidget(self.value_label, 0, top)
        # Room for the longest of a slider's position names: dragging it changes none of
        # the heights below.
        self.value_label.reserve(p.label for p in declared.positions if p.label)
        self.control.setAccessibleName(declared.title)
        layout.addLayout(row)
        self.sentence = WrapLabel()
        self.sentence.setObjectName(f"sentence_{declared.key}")
        layout.addWidget(self.sentence)
        # Where the slider started and why: InnoTune's recommendation, or the server's now.
        self.start = WrapLabel()
        self.start.setObjectName(f"start_{declared.key}")
        layout.addWidget(self.start)
        self.changes = QTreeWidget()
        self.changes.setHeaderLabels(["Setting", "Now", "Proposed", "Takes effect"])
        self.changes.setColumnWidth(0, 260)
        self.changes.setAccessibleName(f"changes of {declared.title}")
        self.changes.itemChanged.connect(self._on_item_changed)
        layout.addWidget(self.changes)
        self._filling = False
        self.locked = False
        self.locked_note = ""  # why it is locked on this host, when the declaration cannot say
        self._shown: tuple[object, ...] = ()
        self._checkable: dict[str, QTreeWidgetItem] = {}  # tickable rows by change id

    def _on_control_changed(self, *_args: object) -> None:
        if not self._filling:
            self.moved.emit()

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        change_id = item.data(0, Qt.ItemDataRole.UserRole)
        if self._filling or column != 0 or not change_id:
            return
        self.rejected_changed.emit(change_id, item.checkState(0) == Qt.CheckState.Unchecked)

    def control_value(self, position: object) -> int | bool:
        """Where the control stands for a position: a checkbox's tick, a slider's value."""
        if self.declared.kind == "switch":
            return bool(position)
        if not self.declared.positions:
            return int(str(position))
        spot = self.declared.at(position)  # a value no position names shows the first one
        return self.declared.positions.index(spot) if spot is not None else 0

    def position(self) -> object:
        """The position the control stands at (a SliderPositions value)."""
        if isinstance(self.control, QCheckBox):
            return self.control.isChecked()
        if not self.declared.positions:
            return self.control.value()
        return self.declared.positions[self.control.value()].value

    def show_state(
        self,
        value: object,
        sentence: str,
        changes: list[Change],
        rejected: set[str],
        note: str,
        inactive: bool = False,
        room: int = 0,
        other: tuple[str, str] = ("", ""),
    ) -> None:
        """Put the control at ``value`` (see control_value); show the sentence and the changes.

        ``inactive``: the changes are those of the switch's other position, shown greyed so
        the section keeps its height when its box is unticked. ``room``: the rows the list
        keeps space for (the most either position of a switch shows), so that ticking or
        unticking never moves what lies below. ``other``: the sentence and the note of the
        switch's other position, whose room the labels keep for the same reason.
        """
        rows = tuple(changes)
        shown = (
            value,
            sentence,
            note,
            rows,
            frozenset(c.id for c in changes if c.id in rejected),
            inactive,
            room,
        )
        if shown == self._shown:
            return  # unchanged: relaying out the section is most of a move's cost
        same_rows = bool(self._shown) and self._shown[3] == rows and self._shown[5] == inactive
        self._shown = shown
        self._filling = True
        try:
            if isinstance(self.control, QSlider):
                self.control.setValue(int(str(value)))
            else:
                self.control.setChecked(bool(value))
            self.value_label.setText(note)
            self.sentence.setText(risk_html(sentence))
            self.sentence.reserve([risk_html(other[0])] if other[0] else [])
            if isinstance(self.control, QCheckBox):
                self.value_label.reserve([other[1]] if other[1] else [])
            if same_rows:
                # Only ticks changed (a change turned down or back on, maybe from inside this
                # tree's own itemChanged): update them in place. Clearing the tree there
                # would delete the item whose signal is being delivered.
                for change_id, item in self._checkable.items():
                    item.setCheckState(0, _tick(change_id not in rejected))
            else:
                self._fill_changes(changes, rejected, max(room, len(changes)), inactive)
            self.changes.setEnabled(not inactive)
            self.changes.setToolTip(
                "Not made now: what the box above makes when you change it." if inactive else ""
            )
        finally:
            self._filling = False

    def _fill_changes(
        self, changes: list[Change], rejected: set[str], room: int, inactive: bool = False
    ) -> None:
        """Fill the list of changes, keeping room for ``room`` rows.

        ``inactive``: the box's other position's changes, greyed, unticked and not made:
        they read "unchanged", their values in a tooltip.
        """
        self.changes.clear()
        self._checkable = {}
        catalogue = default_catalogue()
        for change in changes:
            current, proposed = change_values(change, catalogue)
            where = TARGET_WORDS.get(change.target, change.target)
            if inactive:
                item = QTreeWidgetItem([change_label(change), current, "unchanged", ""])
                item.setToolTip(2, f"Only if you change the box above: {current} → {proposed}")
            else:
                item = QTreeWidgetItem([change_label(change), current, proposed, where])
            if not inactive and (current, proposed) != (change.current, change.proposed):
                exact = f"{change.current} → {change.proposed}"
                item.setToolTip(1, exact)
                item.setToolTip(2, exact)
            item.setData(0, Qt.ItemDataRole.UserRole, change.id)
            if change.target != "advice" and not inactive:
                item.setCheckState(0, _tick(change.id not in rejected))
                self._checkable[change.id] = item
            details = [
                f"Why: {change.reason}",
                f"Risk: {change.risk}",
                *change.advice_lines,
                f"Manual: {change.link}",
            ]
            children = [QTreeWidgetItem([line]) for line in details]
            for child, line in zip(children, details, strict=True):
                child.setToolTip(0, line)
                item.addChild(child)
            item.setToolTip(0, change.reason)
            self.changes.addTopLevelItem(item)
            for child in children:  # spanning takes effect only once the item is in the tree
                child.setFirstColumnSpanned(True)
        self.changes.setVisible(room > 0)
        self.changes.setFixedHeight(list_height(self.changes, min(8, max(1, room))))
