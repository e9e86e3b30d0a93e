"""The Trade-offs page: one section per slider; the plan updates as the sliders move."""

from __future__ import annotations

import dataclasses
import html
import tomllib
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSlider,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.domain.hostfacts import HostFacts
from app.domain.plan import REDO_PRESETS, SLIDERS, Change, Plan, SliderPositions
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan, sentences
from app.resources import resource_path
from app.ui.state import WizardState

SLIDER_TEXTS = resource_path("sliders.toml")
REDO_STEPS: tuple[int | None, ...] = (None, *sorted(REDO_PRESETS.values()))
TARGET_WORDS = {
    "dynamic": "live",
    "option_file": "after a restart",
    "sysfs": "live (disk)",
    "sysctl": "live (kernel)",
    "advice": "advice only",
}


def slider_texts() -> dict[str, dict[str, Any]]:
    """Titles, explanations and position names of the sliders (from resources/)."""
    with open(SLIDER_TEXTS, "rb") as fh:
        return tomllib.load(fh)


def change_label(change: Change) -> str:
    """The setting a change is about, with its device."""
    return f"{change.key} ({change.device})" if change.device else change.key


class SliderSection(QGroupBox):
    """A slider's explanation, its control, its one-sentence risk and the changes it makes."""

    moved = Signal()
    rejected_changed = Signal(str, bool)

    def __init__(self, slider: str, texts: dict[str, Any], number: int) -> None:
        super().__init__(f"{number}. {texts['title']}")
        self.slider = slider
        self.setObjectName(f"slider_{slider}")
        self.positions: list[str] = list(texts.get("positions", []))
        layout = QVBoxLayout(self)
        explanation = QLabel(texts["explanation"])
        explanation.setWordWrap(True)
        layout.addWidget(explanation)
        row = QHBoxLayout()
        self.control: QSlider | QCheckBox
        if slider in ("crash_loss", "memory", "redo"):
            self.control = QSlider(Qt.Orientation.Horizontal)
            self.control.setPageStep(1)
            if slider == "memory":
                self.control.setRange(1, 90)
                self.control.setPageStep(5)
            else:
                self.control.setRange(0, len(self.positions) - 1)
                self.control.setTickPosition(QSlider.TickPosition.TicksBelow)
            self.control.valueChanged.connect(self._on_control_changed)
            self.value_label = QLabel()
            self.value_label.setMinimumWidth(260)
            row.addWidget(self.control, 1)
            row.addWidget(self.value_label)
        else:
            labels = {
                "doublewrite": "Keep torn-page &protection on",
                "fit_disks": "Apply the changes that fit the &disks",
                "fit_os": "Apply the changes that fit the &OS",
                "myisam": "Size the MyISAM &key buffer",
            }
            self.control = QCheckBox(labels[slider])
            self.control.toggled.connect(self._on_control_changed)
            self.value_label = QLabel()
            row.addWidget(self.control)
            row.addWidget(self.value_label, 1)
        self.control.setAccessibleName(texts["title"])
        layout.addLayout(row)
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.sentence.setObjectName(f"sentence_{slider}")
        layout.addWidget(self.sentence)
        self.changes = QTreeWidget()
        self.changes.setHeaderLabels(["Setting", "Now", "Proposed", "Takes effect"])
        self.changes.setColumnWidth(0, 260)
        self.changes.setAccessibleName(f"changes of {texts['title']}")
        self.changes.itemChanged.connect(self._on_item_changed)
        layout.addWidget(self.changes)
        self._filling = False
        self.locked = False
        self._shown: tuple[object, ...] = ()

    def _on_control_changed(self, *_args: object) -> None:
        if not self._filling:
            self.moved.emit()

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        change_id = item.data(0, Qt.ItemDataRole.UserRole)
        if self._filling or column != 0 or not change_id:
            return
        self.rejected_changed.emit(change_id, item.checkState(0) == Qt.CheckState.Unchecked)

    def show_state(
        self, value: object, sentence: str, changes: list[Change], rejected: set[str], note: str
    ) -> None:
        """Put the control at ``value``; show the sentence and the changes."""
        shown = (
            value,
            sentence,
            note,
            tuple((c.id, c.current, c.proposed, c.reason, c.id in rejected) for c in changes),
        )
        if shown == self._shown:
            return  # unchanged: relaying out the section is most of a move's cost
        self._shown = shown
        self._filling = True
        try:
            if isinstance(self.control, QSlider):
                self.control.setValue(int(value))  # type: ignore[call-overload]
            else:
                self.control.setChecked(bool(value))
            self.value_label.setText(note)
            self.sentence.setText(f"<b>Risk:</b> {html.escape(sentence)}")
            self.changes.clear()
            for change in changes:
                item = QTreeWidgetItem(
                    [
                        change_label(change),
                        change.current if change.current is not None else "(unknown)",
                        change.proposed,
                        TARGET_WORDS.get(change.target, change.target),
                    ]
                )
                item.setData(0, Qt.ItemDataRole.UserRole, change.id)
                if change.target != "advice":
                    checked = change.id not in rejected
                    item.setCheckState(
                        0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
                    )
                details = [
                    f"Why: {change.reason}",
                    f"Risk: {change.risk}",
                    *change.advice_lines,
                    f"Manual: {change.link}",
                ]
                for line in details:
                    child = QTreeWidgetItem([line])
                    child.setFirstColumnSpanned(True)
                    child.setToolTip(0, line)
                    item.addChild(child)
                item.setToolTip(0, change.reason)
                self.changes.addTopLevelItem(item)
                child_count = item.childCount()
                for i in range(child_count):
                    self.changes.setFirstColumnSpanned(i, self.changes.indexFromItem(item), True)
            rows = max(1, len(changes))
            self.changes.setVisible(bool(changes))
            self.changes.setFixedHeight(min(8, rows) * 24 + 30)
        finally:
            self._filling = False

    def value(self) -> object:
        """The control's position: an int for sliders, a bool for checkboxes."""
        if isinstance(self.control, QSlider):
            return self.control.value()
        return self.control.isChecked()


class TradeoffsPage(QWizardPage):
    """Sliders → positions → plan (pure, fast, on the GUI thread: no I/O is involved)."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.setTitle("Trade-offs")
        self.setSubTitle(
            "Each slider trades speed against a risk. Every change says why, citing what "
            "InnoTune saw; untick any change you do not want."
        )
        self.setObjectName("page_tradeoffs")
        self.state = state
        self.catalogue = default_catalogue()
        self._facts: HostFacts | None = None
        self._rejected: set[str] = set()
        self.summary_note = ""
        texts = slider_texts()
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setObjectName("plan_warnings")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.sections: dict[str, SliderSection] = {}
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.addWidget(self.warnings)
        for number, slider in enumerate(SLIDERS, start=1):
            section = SliderSection(
                slider, texts[slider], min(number, 5 if number >= 5 else number)
            )
            if slider in ("fit_os", "myisam"):
                section.setTitle(
                    f"{number - 1 if slider == 'fit_os' else 6}. {texts[slider]['title']}"
                )
            section.moved.connect(self._on_section_moved)
            section.rejected_changed.connect(self._on_rejected_changed)
            self.sections[slider] = section
            body_layout.addWidget(section)
        self.left_alone = QLabel()
        self.left_alone.setWordWrap(True)
        self.left_alone.setObjectName("left_alone")
        body_layout.addWidget(self.left_alone)
        body_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(scroll, 1)

    # -- positions <-> controls -----------------------------------------------------------
    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        facts = self.state.facts
        if facts is None:
            return
        if facts is not self._facts:
            self._facts = facts
            self._rejected = set()
            positions = default_positions(facts)
            if self.state.target is not None and self.state.target.kind == "practice":
                positions = self._spare_this_computer(facts, positions)
            self.state.positions = positions
            self._lock_doublewrite(facts, self.state.positions)
        self.refresh()

    def _spare_this_computer(self, facts: HostFacts, pos: SliderPositions) -> SliderPositions:
        """The practice server shares this computer's kernel and disks: leave them alone.

        Its kernel settings and disk queues belong to the whole desktop, so they start
        unticked; the person can still tick them to try them.
        """
        plan = make_plan(facts, pos, self.catalogue)
        device_changes = {c.id for c in plan.changes if c.target == "sysfs"}
        self._rejected |= device_changes
        self.summary_note = (
            "Practice server: this computer's kernel and disk settings start unticked, so "
            "trying InnoTune does not retune your desktop. Tick them to include them."
        )
        return dataclasses.replace(pos, fit_os=False, rejected=tuple(sorted(self._rejected)))

    def _lock_doublewrite(self, facts: HostFacts, pos: SliderPositions) -> None:
        """Torn-page protection can be turned off only where the planner would allow it."""
        off = make_plan(facts, dataclasses.replace(pos, doublewrite=False), self.catalogue)
        allowed = any(c.key == "innodb_doublewrite" for c in off.changes) or not pos.doublewrite
        section = self.sections["doublewrite"]
        section.control.setEnabled(allowed)
        section.locked = not allowed

    def positions_from_controls(self) -> SliderPositions:
        """Read every control into slider positions."""
        s = self.sections
        crash = ("none", "os", "any")[int(s["crash_loss"].value())]  # type: ignore[call-overload]
        redo = REDO_STEPS[int(s["redo"].value())]  # type: ignore[call-overload]
        return SliderPositions(
            crash_loss=crash,
            memory_share=int(s["memory"].value()),  # type: ignore[call-overload]
            redo_minutes=redo,
            doublewrite=bool(s["doublewrite"].value()),
            fit_disks=bool(s["fit_disks"].value()),
            fit_os=bool(s["fit_os"].value()),
            myisam=bool(s["myisam"].value()),
            rejected=tuple(sorted(self._rejected)),
        )

    def _on_section_moved(self) -> None:
        self.state.positions = self.positions_from_controls()
        self.refresh()

    def _on_rejected_changed(self, change_id: str, rejected: bool) -> None:
        if rejected:
            self._rejected.add(change_id)
        else:
            self._rejected.discard(change_id)
        pos = self.state.positions or self.positions_from_controls()
        self.state.positions = dataclasses.replace(pos, rejected=tuple(sorted(self._rejected)))
        self.refresh()

    # -- the plan ---------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute the plan for the current positions and show it."""
        facts, pos = self.state.facts, self.state.positions
        if facts is None or pos is None:
            return
        # Rejected changes stay listed (unticked): plan without rejections to show them all.
        shown = make_plan(facts, dataclasses.replace(pos, rejected=()), self.catalogue)
        plan = make_plan(facts, pos, self.catalogue)
        self.state.plan = plan
        said = dict(sentences(facts, pos))
        ram = facts.os.machine.mem_total_bytes or 0
        redo_index = REDO_STEPS.index(pos.redo_minutes) if pos.redo_minutes in REDO_STEPS else 0
        values: dict[str, tuple[object, str]] = {
            "crash_loss": (
                ("none", "os", "any").index(pos.crash_loss),
                self.sections["crash_loss"].positions[("none", "os", "any").index(pos.crash_loss)],
            ),
            "memory": (
                pos.memory_share,
                f"{pos.memory_share}% of RAM"
                + (f" ({ram * pos.memory_share / 100 / 2**30:.1f} GiB)" if ram else ""),
            ),
            "redo": (redo_index, self.sections["redo"].positions[redo_index]),
            "doublewrite": (
                pos.doublewrite,
                "locked: this storage can tear pages"
                if self.sections["doublewrite"].locked
                else "",
            ),
            "fit_disks": (pos.fit_disks, ""),
            "fit_os": (pos.fit_os, ""),
            "myisam": (pos.myisam, ""),
        }
        for slider, section in self.sections.items():
            value, note = values[slider]
            changes = [c for c in shown.changes if c.slider == slider]
            section.show_state(value, said.get(slider, ""), changes, self._rejected, note)
        self._show_summary(plan)

    def _show_summary(self, plan: Plan) -> None:
        applied = [c for c in plan.changes if c.target != "advice"]
        restart = (
            "The server must restart for some of them."
            if plan.restart_needed
            else ("No restart needed: they all apply live.")
        )
        self.summary.setText(
            f"<b>{len(applied)} change(s)</b> for {html.escape(plan.facts.target)} "
            f"({html.escape(plan.facts.flavour or '')} {html.escape(plan.facts.version or '')}). "
            f"{restart}"
            + (f"<br><i>{html.escape(self.summary_note)}</i>" if self.summary_note else "")
        )
        self.warnings.setVisible(bool(plan.warnings))
        self.warnings.setText("".join(f"<p>⚠ {html.escape(w)}</p>" for w in plan.warnings))
        alone = [
            f"{html.escape(a.knob)}{' (' + html.escape(a.device) + ')' if a.device else ''}: "
            f"{html.escape(a.why)}"
            for a in plan.left_alone
        ]
        self.left_alone.setText(
            "<b>Left alone, and why</b><br>" + "<br>".join(alone) if alone else ""
        )

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.state.plan is not None
