"""The Apply page's widgets and their layout (behaviour lives in :mod:`app.ui.pages.apply`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWizardPage,
)

from app.ui.logview import link_to_log
from app.ui.widgets.wraplabel import WrapLabel

CANCEL_TEXT = "&Cancel and roll back"
CANCEL_BEFORE_TEXT = "&Cancel (nothing changed yet)"
CANCEL_AFTER_TEXT = "&Cancel “after” (the change stays)"

#: One setting on the Apply and the Verify page, named the same on both.
BENCH_TIME_LABEL = "Benchmark t&ime:"
BENCH_TIME_TIP = (
    "How long each side's first three rounds of the six runs take. Measuring before and after "
    "while applying adds rounds until every verdict is decided, up to ten times this in all "
    "(its time budget)."
)


def bench_time_spin() -> QSpinBox:
    """The "Benchmark time" box (seconds), as both pages show it."""
    spin = QSpinBox()
    spin.setRange(10, 600)
    spin.setSuffix(" s")
    spin.setToolTip(BENCH_TIME_TIP)
    spin.setAccessibleName("benchmark time")
    return spin


class ApplyView(QWizardPage):
    """The Apply page's layout: choices and consent, buttons, state, journal, snapshots."""

    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Apply")
        self.setSubTitle(
            "A snapshot first, then the changes run on the server's host as one job that "
            "finishes or rolls back by itself, even if the connection drops."
        )
        self.setObjectName("page_apply")
        layout = QVBoxLayout(self)
        self.summary = WrapLabel("")
        self.summary.setObjectName("apply_summary")
        layout.addWidget(self.summary)
        row = QHBoxLayout()
        # How the server is restarted: said when a service manager runs it; asked for only
        # when none was found (a server started by hand).
        self.restart_note = QLabel("")
        self.restart_note.setObjectName("apply_restart_note")
        self.restart_note.setWordWrap(True)
        row.addWidget(self.restart_note, 1)
        self.restart_edit = QLineEdit()
        self.restart_edit.setObjectName("apply_restart_command")
        self.restart_edit.setPlaceholderText("e.g. mysqladmin shutdown; mysqld_safe &")
        self.restart_edit.setAccessibleName("restart command")
        row.addWidget(self.restart_edit, 1)
        self.confirm_label = QLabel("Roll back &unless kept within")
        row.addWidget(self.confirm_label)
        self.confirm_spin = QSpinBox()
        self.confirm_spin.setObjectName("apply_confirm_within")
        self.confirm_spin.setRange(0, 3600)
        self.confirm_spin.setSuffix(" s")
        self.confirm_spin.setSpecialValueText("off")
        self.confirm_spin.setAccessibleName("roll back unless kept within seconds")
        self.confirm_label.setBuddy(self.confirm_spin)
        row.addWidget(self.confirm_spin)
        layout.addLayout(row)
        self.restart_box = QCheckBox(
            "Restart the ser&ver afterwards to prove it starts with the new settings"
        )
        self.restart_box.setObjectName("apply_restart_anyway")
        self.restart_box.setAccessibleName(
            "restart the server afterwards to prove it starts with the new settings"
        )
        self.restart_box.setToolTip(
            "Every change here takes effect live. Ticked, the server is also restarted: the "
            "values then come from the new option files, proving they survive a restart. "
            "Rolling this change back restarts the server too."
        )
        layout.addWidget(self.restart_box)
        # Before comes before: measured on the unchanged server as part of applying, and
        # "after" once the change is in force. Ticked by default only on a quiet server.
        self.measure_box = QCheckBox("&Measure before and after")
        self.measure_box.setObjectName("apply_measure")
        self.measure_box.setAccessibleName("measure before and after")
        self.measure_box.setToolTip(
            "A short write benchmark in a scratch schema, with rounds added until every run's "
            "verdict is decided or the time budget runs out. A change that applies live is "
            "measured interleaved (the old and the new values in turn, round by round); one "
            "that needs a restart before, then after. Verify and Done show both sides and "
            "each run's verdict: faster, slower, no change or undecided."
        )
        measure_row = QHBoxLayout()
        measure_row.addWidget(self.measure_box)
        self.bench_time = bench_time_spin()
        self.bench_time.setObjectName("apply_bench_time")
        bench_time_label = QLabel(BENCH_TIME_LABEL)
        bench_time_label.setBuddy(self.bench_time)
        measure_row.addStretch(1)
        measure_row.addWidget(bench_time_label)
        measure_row.addWidget(self.bench_time)
        layout.addLayout(measure_row)
        self.measure_note = QLabel("")
        self.measure_note.setObjectName("apply_measure_note")
        self.measure_note.setWordWrap(True)
        layout.addWidget(self.measure_note)
        # A busy server's proof without load: its own workload watched before, and after on
        # Verify. Ticked by default only on a busy server.
        self.watch_box = QCheckBox("Watch the server's own w&orkload before applying")
        self.watch_box.setObjectName("apply_watch")
        self.watch_box.setAccessibleName("watch the workload before applying")
        self.watch_box.setToolTip(
            "Reads the server's counters and its disk's while its own clients work (no load "
            "added), before the change; Verify watches as long again after it and compares "
            "each cost per commit. Used when “Measure before and after” is not ticked."
        )
        layout.addWidget(self.watch_box)
        self.consent = QCheckBox("I have read the preview; apply these changes to the &server")
        self.consent.setObjectName("apply_consent")
        layout.addWidget(self.consent)
        buttons = QHBoxLayout()
        self.apply_button = self._button("A&pply", "apply_start")
        self.keep_button = self._button("&Keep the change", "apply_keep")
        self.rollback_button = self._button("&Roll back", "apply_rollback")
        self.refresh_button = self._button("&Where is it?", "apply_refresh")
        self.cancel_button = self._button(CANCEL_TEXT, "apply_cancel")
        self.cancel_button.setToolTip(
            "Stop the apply safely: before anything is written nothing changes; after, the "
            "job on the server rolls back to the snapshot (a restart under way finishes first)."
        )
        for button in (
            self.apply_button,
            self.cancel_button,
            self.keep_button,
            self.rollback_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        layout.addLayout(buttons)
        self.bench_bar = QProgressBar()
        self.bench_bar.setObjectName("apply_bench_progress")
        self.bench_bar.setRange(0, 1000)
        self.bench_bar.setAccessibleName("benchmark progress")
        self.bench_bar.setVisible(False)
        layout.addWidget(self.bench_bar)
        self.state_label = QLabel("")
        self.state_label.setWordWrap(True)
        self.state_label.setObjectName("apply_state")
        link_to_log(self.state_label)  # an error shown here links to the session's log
        self.state_label.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.state_label)
        self.journal = QPlainTextEdit()
        self.journal.setReadOnly(True)
        self.journal.setObjectName("apply_journal")
        self.journal.setAccessibleName("apply journal")
        layout.addWidget(self.journal, 2)
        snapshots_label = QLabel("Snaps&hots on the server:")
        layout.addWidget(snapshots_label)
        self.snapshots = QListWidget()
        self.snapshots.setObjectName("apply_snapshots")
        self.snapshots.setAccessibleName("snapshots on the server, per server instance")
        snapshots_label.setBuddy(self.snapshots)
        layout.addWidget(self.snapshots, 1)
        snap_row = QHBoxLayout()
        snap_row.addStretch(1)
        self.list_button = self._button("&List snapshots", "apply_list")
        self.restore_button = self._button("Res&tore selected", "apply_restore")
        snap_row.addWidget(self.list_button)
        snap_row.addWidget(self.restore_button)
        layout.addLayout(snap_row)

    @staticmethod
    def _button(text: str, name: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        return button
