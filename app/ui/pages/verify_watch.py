"""The Verify page's watch of the server's own workload: no load added, costs per commit.

On a busy server a benchmark would slow others' work and be blurred by it; watching reads
the server's counters and its disk's instead. A watch taken before an apply (the Apply page
offers one on a busy server) is compared with one of the same length after it, each figure
with its verdict and the traffic of both sides beside it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.access.doctor import DoctorResult, Secrets
from app.domain.target import Target
from app.domain.watch import BY_KEY, COSTS, Watch, series, traffic, value_text, verdict_text
from app.flows.watching import WATCH_SECONDS
from app.ui.hostworker import Progress, Task, TaskHandle
from app.ui.logview import error_html, error_parts
from app.ui.pages.apply_state import store_watch
from app.ui.state import WizardState

WATCH_COLUMNS = ("figure", "before", "after", "verdict")


@dataclass(frozen=True)
class WatchInputs:
    """One watch: how to log in, and for how long."""

    target: Target
    secrets: Secrets
    seconds: float


def run_watch(conn: DoctorResult, inputs: WatchInputs, progress: Progress) -> Watch:
    """Watch the server's own workload (a task); progress goes out as fractions."""
    from app.flows.watching import watch

    return watch(
        conn,
        inputs.target,
        inputs.secrets,
        inputs.seconds,
        cancel=progress.cancelled,
        progress=progress.post,
    )


def keep_watch(state: WizardState, found: Watch) -> None:
    """Keep a watch: "after" when changes are in force (beside their snapshot), else "before"."""
    if state.changes_in_force:
        state.watch_after = found
        store_watch(state, "after", found)
    else:
        state.watch_before = found
        state.watch_after = None


class WatchPanel(QGroupBox):
    """Watch button, progress, and the figures of "before" and "after" with their verdicts."""

    ran = Signal()  # a watch started or ended: the page updates its buttons

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__("The server's own workload (no load added)", parent)
        self.setObjectName("watch_panel")
        self.state = state
        self.task: TaskHandle | None = None
        # Said when pointed at, so that the benchmark's table keeps its room on the page.
        self.setToolTip(
            "Reads the server's counters and its disk while its own clients work, each cost "
            "per commit; a watch before the changes is compared with one as long after them."
        )
        self.seconds = QSpinBox()
        self.seconds.setRange(5, 3600)
        self.seconds.setValue(round(WATCH_SECONDS))
        self.seconds.setSuffix(" s")
        self.seconds.setAccessibleName("watch duration")
        self.seconds.setToolTip("How long to watch; after the changes, as long as before them.")
        self.watch_button = QPushButton("&Watch the workload")
        self.watch_button.setObjectName("watch_start")
        self.watch_button.clicked.connect(self._on_watch_clicked)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.status = QLabel("")
        self.status.setObjectName("watch_status")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(WATCH_COLUMNS))
        self.table.setObjectName("watch_table")
        self.table.setAccessibleName("workload figures")
        self.table.setHorizontalHeaderLabels(list(WATCH_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setMaximumHeight(220)
        row = QHBoxLayout()
        duration = QLabel("Watc&h for:")
        duration.setBuddy(self.seconds)
        row.addWidget(duration)
        row.addWidget(self.seconds)
        row.addWidget(self.watch_button)
        row.addWidget(self.bar, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.table)
        self.show_results()

    def running(self) -> bool:
        """A watch is under way."""
        return self.task is not None and self.task.is_running()

    def label(self) -> str:
        """What the next watch is: "after" while changes are in force, else "before"."""
        return "after" if self.state.changes_in_force else "before"

    def start(self, why: str = "") -> None:
        """Watch now; "after" takes as long as the "before" it is compared with."""
        if self.running() or self.state.target is None or not self.state.connected:
            return
        label, before = self.label(), self.state.watch_before
        if label == "after" and before is not None:
            self.seconds.setValue(round(before.seconds))
        seconds = float(self.seconds.value())
        inputs = WatchInputs(self.state.target, self.state.secrets, seconds)
        self.task = self.state.worker().submit(Task("watch", run_watch, inputs), self)
        self.task.progress.connect(self._on_watch_progress)
        self.task.finished.connect(self._on_watch_finished)
        self.task.failed.connect(self._on_watch_failed)
        self.task.ended.connect(self._on_watch_ended)
        self.watch_button.setEnabled(False)
        self.bar.setValue(0)
        lead = f"{why} " if why else ""
        self.status.setText(
            html.escape(f"{lead}Watching “{label}” for {seconds:.0f} s; nothing is written…")
        )
        self.ran.emit()

    def _on_watch_clicked(self) -> None:
        self.start()

    def _on_watch_progress(self, fraction: object) -> None:
        if isinstance(fraction, float):
            self.bar.setValue(round(fraction * 1000))

    def _on_watch_finished(self, found: object) -> None:
        assert isinstance(found, Watch)
        keep_watch(self.state, found)
        self.bar.setValue(1000)
        self.status.setText(html.escape(self.summary()))
        self.show_results()

    def _on_watch_failed(self, exc: object) -> None:
        problem, fix = error_parts(exc)
        self.status.setText(error_html(problem, fix))

    def _on_watch_ended(self) -> None:
        self.watch_button.setEnabled(True)
        self.ran.emit()

    def summary(self) -> str:
        """The traffic of each watch, and whether they could be compared."""
        before, after = self.state.watch_before, self.state.watch_after
        parts = []
        for name, found in (("Before", before), ("After", after)):
            if found is not None:
                parts.append(
                    f"{name}: {traffic(found).text()} over {found.seconds:.0f} s "
                    f"({found.started_at})."
                )
        if before is not None and after is not None:
            from app.flows.watching import compare

            judged = compare(before, after)
            if judged.why_not:
                parts.append(f"No verdicts: {judged.why_not}.")
            notes = {
                f.note
                for f in judged.figures
                if f.verdict == "not_compared" and f.note and f.note != judged.why_not
            }
            parts.extend(f"Not judged: {n}." for n in sorted(notes))
        elif before is not None:
            parts.append("Apply the changes, then watch again to compare.")
        for found in (before, after):
            if found is not None and "off" in found.timers_note:
                parts.append(f"Latency: {found.timers_note}.")
                break
        return " ".join(parts)

    def show_results(self) -> None:
        """The figures of both watches, each with its verdict when both are there."""
        before, after = self.state.watch_before, self.state.watch_after
        verdicts = {}
        if before is not None and after is not None:
            from app.flows.watching import compare

            verdicts = {f.key: f for f in compare(before, after).figures}
        rows: list[list[str]] = []
        if before is not None or after is not None:
            rows.append(
                [
                    "traffic",
                    traffic(before).text() if before else "",
                    traffic(after).text() if after else "",
                    "",
                ]
            )
        for fig in COSTS:
            found = verdicts.get(fig.key)
            b = _median(before, fig.key)
            a = _median(after, fig.key)
            if b is None and a is None:
                continue
            rows.append(
                [
                    BY_KEY[fig.key].title,
                    value_text(fig.key, b) if before else "",
                    value_text(fig.key, a) if after else "",
                    verdict_text(found) if found is not None else "",
                ]
            )
        self.table.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.setVisible(bool(rows))

    def verdict(self, key: str) -> str:
        """The verdict shown for a figure ("" none), as the table reads it."""
        title = BY_KEY[key].title
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            if item is not None and item.text() == title:
                cell = self.table.item(r, 3)
                return cell.text() if cell is not None else ""
        return ""


def _median(found: Watch | None, key: str) -> float | None:
    from app.domain.watch import median

    return None if found is None else median(series(found, key))
