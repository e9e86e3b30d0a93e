"""One line saying when the facts shown were read, and when a change has put them out of date."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QWidget

from app.flows.freshness import dated
from app.ui.state import WizardState
from app.ui.widgets.wraplabel import WrapLabel

#: What a plan's pages say is out of date: the values the plan takes as the server's now.
PLAN_SUBJECT = "the “Now” values this plan starts from"
# "3 minutes ago" moves on while the page is open: the line is written again this often.
REFRESH_MS = 15_000
READ_AGAIN = "again"  # the link's target


class FactsNote(WrapLabel):
    """When the facts shown were read; after an apply or a rollback, out of date, with a link.

    Written again whenever it is shown (Back shows a page without preparing it again) and
    every :data:`REFRESH_MS` while it is. The link ("Read them again") is offered while
    connected; it emits :attr:`read_again`, and the page or the wizard reads them again.
    """

    read_again = Signal()

    def __init__(
        self,
        state: WizardState,
        lead: str = "Read",
        subject: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("", parent)
        self.state = state
        self.lead = lead
        self.subject = subject  # what is out of date (see app.flows.freshness.dated)
        self.old = False  # the text shown marks the facts out of date
        self.setObjectName("facts_dated")
        self.setAccessibleName("when the facts were read")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.linkActivated.connect(self._on_link_activated)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)

    def refresh(self) -> None:
        """Say when the facts now in the wizard were read (nothing while there are none)."""
        facts = self.state.facts
        if facts is None:
            text, self.old = "", False
        else:
            sentence = dated(
                facts.collected_at,
                self.state.changes_for(facts),
                lead=self.lead,
                subject=self.subject,
            )
            self.old = self.state.facts_old
            text = html.escape(sentence, quote=False)
            if self.old:
                text = f"<b>{text}</b>"
                if self.state.connected:
                    text += f' <a href="{READ_AGAIN}">Read them again</a>'
        if text != self.text():
            self.setText(text)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        self.refresh()
        self._timer.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt's name
        self._timer.stop()
        super().hideEvent(event)

    def _on_link_activated(self, link: str) -> None:
        if link == READ_AGAIN:
            self.read_again.emit()
