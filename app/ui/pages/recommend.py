"""The Recommendation page: what InnoTune recommends, why, what it risks, and the restart.

Right after Inspect, in a few lines (the words come from :mod:`app.flows.recommend`). Under
them, **Apply this** (after the consent box: the changes are on this page) goes straight to
the Apply page and starts applying; **Adjust the trade-offs** opens the sliders; the
preview is one click away. The plan is the Trade-offs page's own (its starting positions),
so adjusting there and coming Back shows the adjusted plan here; a consent given to one
plan lapses when the plan changes.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.flows.recommend import Recommendation, recommend, server_name
from app.ui.state import WizardState
from app.ui.widgets.wraplabel import WrapLabel

#: Where the page's buttons lead: the wizard's next page after this one.
APPLY, TRADEOFFS, PREVIEW = "apply", "tradeoffs", "preview"


def recommendation_html(rec: Recommendation) -> str:
    """The recommendation as the page shows it."""
    parts = [f"<p><b>{html.escape(rec.headline)}</b></p>"]
    if rec.changes:
        items = "".join(
            f"<li><b>{html.escape(c.what)}</b>: {html.escape(c.before)} → "
            f"<b>{html.escape(c.after)}</b>, because {html.escape(c.why)}.</li>"
            for c in rec.changes
        )
        parts.append(f"<ul>{items}</ul>")
    parts.append(f"<p><b>What it risks:</b> {html.escape(rec.risk)}</p>")
    parts.append(f"<p><b>Restart:</b> {html.escape(rec.restart)}</p>")
    if rec.advice:
        parts.append(f"<p><i>{html.escape(rec.advice)}</i></p>")
    return "".join(parts)


class RecommendPage(QWizardPage):
    """The recommendation in a few lines, Apply this, Adjust the trade-offs, Preview."""

    #: A button was pressed: where to go (APPLY, TRADEOFFS or PREVIEW).
    go = Signal(str)

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.setTitle("Recommendation")
        self.setSubTitle(
            "What InnoTune recommends for this server, why, and what it risks. Apply it as "
            "it is, or adjust the trade-offs first."
        )
        self.setObjectName("page_recommendation")
        self.state = state
        # Set by the wizard: make the plan from the facts (the Trade-offs page's starting
        # positions), and build the preview of the current plan in the background.
        self.ensure_plan: Callable[[], None] = lambda: None
        self.build_preview: Callable[[], None] = lambda: None
        self.route = ""  # where the wizard's next step leads ("": the next page in order)
        self.recommendation: Recommendation | None = None
        self._refreshing = False
        self.text = WrapLabel()
        self.text.setObjectName("recommendation")
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.text.setAccessibleName("the recommendation")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        scroll.setWidget(body)
        self.consent = QCheckBox("I have read what will change; apply it to the &server")
        self.consent.setObjectName("recommendation_consent")
        self.consent.toggled.connect(self._on_consent_toggled)
        self.apply_button = QPushButton("Apply &this")
        self.apply_button.setObjectName("apply_this")
        self.apply_button.setDefault(True)
        self.adjust_button = QPushButton("A&djust the trade-offs")
        self.adjust_button.setObjectName("adjust_tradeoffs")
        self.preview_button = QPushButton("Pre&view the exact changes…")
        self.preview_button.setObjectName("preview_changes")
        self.apply_button.clicked.connect(lambda: self.go.emit(APPLY))
        self.adjust_button.clicked.connect(lambda: self.go.emit(TRADEOFFS))
        self.preview_button.clicked.connect(lambda: self.go.emit(PREVIEW))
        row = QHBoxLayout()
        row.addWidget(self.apply_button)
        row.addWidget(self.adjust_button)
        row.addWidget(self.preview_button)
        row.addStretch(1)
        self.status = WrapLabel()
        self.status.setObjectName("recommendation_status")
        # The choice right under the words, whatever their length: no gap to cross.
        inner = QVBoxLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.text)
        inner.addWidget(self.consent)
        inner.addLayout(row)
        inner.addWidget(self.status)
        inner.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        # The wizard calls refresh() whenever the page becomes current: forward, and Back
        # from the Trade-offs page, where the plan may have been adjusted.
        pass

    def refresh(self) -> None:
        """Show the recommendation for the current plan; build its preview behind it."""
        self._refreshing = True
        try:
            self._refresh()
        finally:
            self._refreshing = False
        self.completeChanged.emit()

    def _refresh(self) -> None:
        self.ensure_plan()
        facts, plan, target = self.state.facts, self.state.plan, self.state.target
        if facts is None or plan is None:
            self.recommendation = None
            self.text.setText("No plan yet: go Back to Inspect, or adjust the trade-offs.")
        else:
            name = server_name(
                facts,
                target.kind if target is not None else None,
                target.label if target is not None else None,
            )
            self.recommendation = recommend(facts, plan, name)
            self.text.setText(recommendation_html(self.recommendation))
            self.build_preview()
        self.consent.blockSignals(True)
        self.consent.setChecked(self.state.consented())
        self.consent.blockSignals(False)
        self.sync()

    def sync(self) -> None:
        """Enable Apply this once the consent is given and the preview is built."""
        rec, preview = self.recommendation, self.state.preview
        building = rec is not None and not rec.empty and preview is None
        refused = preview is not None and bool(preview.errors)
        self.consent.setEnabled(rec is not None and not rec.empty and not refused)
        self.apply_button.setEnabled(
            rec is not None
            and not rec.empty
            and preview is not None
            and not refused
            and self.consent.isChecked()
        )
        self.preview_button.setEnabled(self.state.plan is not None)
        if building:
            self.status.setText("Reading the option files and current values (nothing is written)…")
        elif refused and preview is not None:
            self.status.setText(
                "Nothing can be applied: "
                + html.escape("; ".join(preview.window_errors or preview.errors))
            )
        elif rec is not None and rec.empty:
            self.status.setText("Nothing to apply. Adjust the trade-offs to choose otherwise.")
        else:
            self.status.setText("")

    def _on_consent_toggled(self, checked: bool) -> None:
        self.state.give_consent(checked)
        self.sync()

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        # Next leads to the Trade-offs page, which says why when no plan can be made.
        return self.state.facts is not None
