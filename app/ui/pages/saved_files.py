"""Saved facts files and plans, opened on the Connect page for review without a connection.

Facts saved with ``innotune inspect --out`` go to the trade-offs; a plan saved with
``innotune plan --out`` needs the facts it was made from (found beside it by checksum, or
asked for), and is then reviewed on Trade-offs and Preview. Nothing is applied from a file.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.domain.words import sentence
from app.ui.pages.connect_view import ConnectView
from app.ui.state import WizardState


def find_plan_facts(plan: Plan, folder: Path) -> HostFacts | None:
    """The facts file in ``folder`` that ``plan`` was made from (by checksum), if any."""
    from app.flows.planning import facts_checksum

    for candidate in sorted(folder.glob("*.json"))[:200]:  # a big download folder: enough
        try:
            if candidate.stat().st_size > 50 << 20:
                continue
            facts = HostFacts.from_json(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if facts_checksum(facts) == plan.facts.checksum:
            return facts
    return None


class SavedFiles(QObject):
    """The "Open a saved facts file or plan…" button's behaviour."""

    #: The wizard's state changed (facts or mode): the page may have become complete.
    changed = Signal()

    def __init__(self, page: QWidget, view: ConnectView, state: WizardState) -> None:
        super().__init__(page)
        self.page = page  # the file dialogs' parent
        self.view = view
        self.state = state
        view.open_facts.clicked.connect(self._on_open_facts_clicked)

    def open_facts_file(self, path: str | Path) -> None:
        """Load facts saved by ``innotune inspect --out`` for review without a connection."""
        try:
            facts = HostFacts.from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.view.message.setText(
                f"<b>{Path(path).name} could not be read as a facts file:</b> {sentence(str(exc))} "
                "Choose a file written by <code>innotune inspect --out FILE</code>."
            )
            return
        plan = self.state.saved_plan
        if plan is not None and self.state.facts is None and self.state.mode == "offline":
            # The facts a plan just opened is waiting for: only its own will do.
            from app.flows.planning import facts_checksum

            if facts_checksum(facts) != plan.facts.checksum:
                self.view.message.setText(
                    f"<b>{html.escape(Path(path).name)} holds other facts than the plan was "
                    f"made from</b> ({html.escape(plan.facts.target)}, collected "
                    f"{html.escape(plan.facts.collected_at)}). Choose that facts file."
                )
                return
            self.state.facts = facts
            self.state.plan = self.state.preview = None
            self.view.message.setText(
                f"<b>Opened the plan with its facts</b> ({html.escape(Path(path).name)}), for "
                "review without a connection. Press Next to see its trade-offs and preview. "
                "Nothing can be applied from a file: connect to the server to apply."
            )
            self.changed.emit()
            return
        self._go_offline()
        self.state.saved_plan = None
        self.state.facts = facts
        server = facts.server.version if facts.server is not None else "no database server"
        self.view.message.setText(
            f"<b>Opened {Path(path).name}</b> ({server}), for review without a connection. "
            "Press Next to choose the trade-offs; nothing can be applied from a file."
        )
        self.changed.emit()

    def _on_open_facts_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.page,
            "Saved facts file or plan",
            str(Path.home()),
            "Facts or plans (*.json);;All files (*)",
        )
        if not path:
            return
        self.open_saved_file(path)
        if self.state.saved_plan is not None and self.state.facts is None:
            # A plan alone cannot be previewed: ask for the facts it was made from.
            facts, _ = QFileDialog.getOpenFileName(
                self.page, "The plan's facts file", str(Path(path).parent), "Facts (*.json)"
            )
            if facts:
                self.open_facts_file(facts)

    def open_saved_file(self, path: str | Path) -> None:
        """Open a saved plan or facts file, whichever it is, for review without a connection."""
        from app.domain.plan import Plan

        try:
            plan = Plan.from_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            self.open_facts_file(path)  # not a plan: a facts file, or it says what is wrong
            return
        self.open_plan(plan, Path(path))

    def open_plan(self, plan: Plan, path: Path) -> None:
        """Review ``plan`` offline: with its facts (found beside it) on Trade-offs and Preview.

        The facts are those whose checksum the plan names; a JSON file beside the plan that
        holds them is used, otherwise the page asks for it (:meth:`open_facts_file`).
        """
        self._go_offline()
        self.state.saved_plan = plan
        self.state.facts = None
        made = f"for {plan.facts.target}, from facts collected {plan.facts.collected_at}"
        facts = find_plan_facts(plan, path.parent)
        if facts is None:
            self.view.message.setText(
                f"<b>Opened the plan {html.escape(path.name)}</b> ({html.escape(made)}). "
                "Now choose the facts file it was made from (saved with <code>innotune plan "
                "--save-facts FILE</code> or <code>innotune inspect --out FILE</code>)."
            )
        else:
            self.state.facts = facts
            self.view.message.setText(
                f"<b>Opened the plan {html.escape(path.name)}</b> ({html.escape(made)}), "
                f"for review without a connection. Press Next to see its trade-offs and "
                f"preview. Nothing can be applied from a file: connect to the server to apply."
            )
        self.changed.emit()

    def _go_offline(self) -> None:
        self.state.drop_host()
        self.state.target = None
        self.state.mode = "offline"
        self.state.plan = self.state.preview = None
        self.view.steps.clear()
