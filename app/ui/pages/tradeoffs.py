"""The Trade-offs page: one section per slider; the plan updates as the sliders move."""

from __future__ import annotations

import dataclasses
import html
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtWidgets import (
    QLabel,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.words import count
from app.flows.planning import (
    binlog_lock,
    carry_over,
    current_share,
    default_positions,
    facts_checksum,
    note,
    plan_for,
    same_host,
    starting_points,
)
from app.knobs import default_catalogue
from app.knobs.sliders import sliders
from app.ui.logview import error_html, error_parts, link_to_log, log_error
from app.ui.pages.slider_section import SliderSection
from app.ui.state import WizardState
from app.ui.widgets.factsnote import PLAN_SUBJECT, FactsNote
from app.ui.widgets.fittedtext import FittedText
from app.ui.widgets.wraplabel import WrapLabel

log = logging.getLogger(__name__)
# How long after the facts arrive the page starts filling itself (see TradeoffsPage.event).
PREPARE_AFTER_MS = 300


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
        # Where the page started on the current facts: a slider elsewhere was moved by the
        # person, and keeps its position when the host is inspected again.
        self._start: SliderPositions | None = None
        self._kept: tuple[str, ...] = ()
        # Plans of the current facts by slider positions: a slider dragged back and forth
        # asks for the same few plans again (the planner is pure, its plans immutable).
        self._plans: dict[SliderPositions, Plan] = {}
        # What the last plan shows: facts, positions, the plan without rejections, sentences.
        self._view: tuple[HostFacts, SliderPositions, Plan, dict[str, str]] | None = None
        self.summary_note = ""
        # Filling ahead (see event()): the wizard, the pages watched, the facts being
        # prepared and the steps left.
        self._wizard: QWizard | None = None
        self._watched: set[int] = set()
        self._preparing: HostFacts | None = None
        self._steps: list[Callable[[], object]] = []
        self._step_timer = QTimer(self)
        self._step_timer.setSingleShot(True)
        self._step_timer.timeout.connect(self._on_step_timer_timeout)
        # Why there is no plan (facts of a server too old, or of no server), what to do,
        # and the log one click away. Hidden while there is a plan.
        self.error = WrapLabel()
        self.error.setObjectName("tradeoffs_error")
        self.error.setAccessibleName("why there is no plan")
        link_to_log(self.error)
        self.error.setVisible(False)
        self.warnings = WrapLabel()
        self.warnings.setObjectName("plan_warnings")
        # What a new inspection changed in InnoTune's recommendations (hidden when nothing).
        self.since = WrapLabel()
        self.since.setObjectName("since_last_inspection")
        self.since.setAccessibleName("what changed since the last inspection")
        self.since.setVisible(False)
        self.summary = WrapLabel()
        self.sections: dict[str, SliderSection] = {}
        body = QWidget()
        body_layout = QVBoxLayout(body)
        for declared in sliders():
            section = SliderSection(declared)
            section.moved.connect(self._on_section_moved)
            section.rejected_changed.connect(self._on_rejected_changed)
            self.sections[declared.key] = section
            body_layout.addWidget(section)
        # A text view of its own, not a word-wrapped label (as a label, its 4 KB of rich text
        # was laid out a dozen times per move: most of a move's time), as tall as its text:
        # no scroll area inside the page's own.
        left_title = QLabel("Left alone, and &why")
        bold = left_title.font()
        bold.setBold(True)
        left_title.setFont(bold)
        body_layout.addWidget(left_title)
        self.left_alone = FittedText()
        self.left_alone.setObjectName("left_alone")
        self.left_alone.setAccessibleName("settings left alone, and why")
        self.left_alone.setOpenLinks(False)
        left_title.setBuddy(self.left_alone)
        self._left_alone_html = ""  # the list for the last plan
        self._left_alone_set = ""  # the text the view holds
        self._left_alone_timer = QTimer(self)
        self._left_alone_timer.setSingleShot(True)
        self._left_alone_timer.timeout.connect(self._flush_left_alone)
        body_layout.addWidget(self.left_alone)
        body_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        layout = QVBoxLayout(self)
        # When the facts planned from were read; out of date after an apply or a rollback.
        self.dated = FactsNote(state, "Planned from facts read", PLAN_SUBJECT)
        layout.addWidget(self.dated)
        layout.addWidget(self.error)
        layout.addWidget(self.summary)
        layout.addWidget(self.since)
        layout.addWidget(scroll, 1)
        # Below the sliders, not above them: a warning that comes and goes with a position
        # must not push the slider being dragged away from the pointer.
        layout.addWidget(self.warnings)

    # -- filling the page ahead of time ----------------------------------------------------
    # Opening the page used to do everything at once: four plans (the first one checksums
    # the facts), seven sections, the summary and the first layout of a long page, in one
    # event-loop turn of 300+ ms on a busy 2-core machine. Now the page fills itself while
    # the person still reads the page before it: as soon as the facts arrive (that page
    # says so with completeChanged), the facts are checksummed, the first plans made, each
    # part filled and the hidden page laid out, one short turn at a time. initializePage
    # finishes whatever is left at once, so calling it directly still leaves the page whole.

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ParentChange:
            wizard = self.parentWidget()
            while wizard is not None and not isinstance(wizard, QWizard):
                wizard = wizard.parentWidget()
            if wizard is not None and wizard is not self._wizard:
                self._wizard = wizard
                wizard.currentIdChanged.connect(self._on_wizard_current_id_changed)
        return super().event(event)

    def _on_wizard_current_id_changed(self, page_id: int) -> None:
        wizard = self._wizard
        page = wizard.page(page_id) if wizard is not None else None
        if page is None or page is self:
            return
        if page_id not in self._watched:
            self._watched.add(page_id)
            page.completeChanged.connect(self._on_other_page_complete_changed)
        self._on_other_page_complete_changed()

    def _on_other_page_complete_changed(self) -> None:
        facts = self.state.facts
        if facts is None or facts is self._facts or facts is self._preparing:
            return
        if self.isVisible():
            return  # this page is open: initializePage decides
        self._prepare(facts)

    def _prepare(self, facts: HostFacts) -> None:
        """Fill the page for ``facts`` in short steps, one per event-loop turn."""
        self._preparing = facts
        self._steps = [
            lambda: facts_checksum(facts),  # the planner keeps it for the plans to come
            lambda: self._adopt(facts),
            *(lambda s=slider: self._show_section(s) for slider in self.sections),
            self._show_rest,
            self._flush_left_alone,
            self._lay_out_hidden,
        ]
        # Let the page that brought the facts lay itself out and paint first: starting at
        # once piled this page's layout work into the same event-loop turn as its.
        self._step_timer.start(PREPARE_AFTER_MS)

    def _on_step_timer_timeout(self) -> None:
        if self._steps:
            self._steps.pop(0)()
        if self._steps:
            self._step_timer.start(0)
        else:
            self._preparing = None

    def _finish_preparing(self) -> None:
        """Stop filling ahead; initializePage does the rest at once."""
        self._step_timer.stop()
        self._preparing = None
        self._steps = []

    def _lay_out_hidden(self) -> None:
        """Lay the hidden page out at the size it will have, so showing it needs no layout."""
        wizard = self._wizard
        current = wizard.currentPage() if wizard is not None else None
        if self.isVisible() or current is None or current is self:
            return
        self.resize(current.size())
        layout = self.layout()
        if layout is not None:
            layout.activate()

    # -- positions <-> controls -----------------------------------------------------------
    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        self._finish_preparing()
        facts = self.state.facts
        if facts is None:
            return
        if facts is not self._facts:
            self._adopt(facts)
        self.refresh()  # cheap when filled ahead: the same plans, no text changes
        self._flush_left_alone()

    def ensure_plan(self) -> None:
        """Plan for the current facts now, if not done yet (the Recommendation page shows it)."""
        facts = self.state.facts
        if facts is not None and facts is not self._facts:
            self._finish_preparing()
            self._adopt(facts)

    def _adopt(self, facts: HostFacts) -> None:
        """Take new facts: at InnoTune's start, or the person's choices on the same server.

        After Back and a new inspection of the same server, every slider the person moved
        and every change they turned down stays; the others follow the new start, and the
        page says which fact changed a recommendation (app/planner/carry.py).
        """
        previous, chosen, old_start = self._facts, self.state.positions, self._start
        self._facts = facts
        self._plans = {}
        self._rejected = set()
        self._start = None
        self._kept = ()
        self.summary_note = ""
        notes: tuple[str, ...] = ()
        try:
            positions = default_positions(facts)
            if self.state.target is not None and self.state.target.kind == "practice":
                positions = self._spare_this_computer(facts, positions)
            start = positions
            if (
                previous is not None
                and chosen is not None
                and old_start is not None
                and same_host(previous, facts)
            ):
                carried = carry_over(
                    previous,
                    old_start,
                    chosen,
                    facts,
                    start,
                    lambda f, p: plan_for(f, p, self.catalogue),
                )
                positions, self._kept, notes = carried.positions, carried.kept, carried.notes
                self._rejected = set(positions.rejected)
            self._lock_doublewrite(facts, positions)
            self._lock_binlog(facts)
        except (InnoTuneError, ValueError) as exc:
            self.state.positions = None
            self.since.setVisible(False)
            self._no_plan(facts, exc)
            return
        self._start = start
        self.since.setText("".join(f"<p>{html.escape(n)}</p>" for n in notes))
        self.since.setVisible(bool(notes))
        self.state.positions = positions
        self._update_plan()
        self._show_starts(facts)

    def _show_starts(self, facts: HostFacts) -> None:
        """Mark each slider's start: InnoTune's recommendation (with why) or the server's now."""
        starts = starting_points(facts)
        first = self._plan(facts, default_positions(facts))
        for key, section in self.sections.items():
            start = starts.get(key)
            if start is None:
                section.start.setText("")
                continue
            declared = section.declared
            if key == "memory":
                words = note(key, first, facts)
            elif declared.kind == "switch":
                words = "ticked" if start.value else "unticked"
            else:
                spot = declared.at(start.value)
                words = (spot.label if spot is not None else None) or str(start.value)
                if note(key, first, facts):  # no minutes of writes where none were measured
                    words = words.split(" (")[0]
            lead = (
                "Recommended for this host" if start.recommended else "Starts where the server is"
            )
            kept = (
                " You moved this slider before inspecting again, so it stays where you put it."
                if key in self._kept
                else ""
            )
            section.start.setText(
                f"<i>{lead}: <b>{html.escape(words)}</b>. {html.escape(start.why)}"
                f"{html.escape(kept)}</i>"
            )

    def _no_plan(self, facts: HostFacts, exc: Exception) -> None:
        """No plan can be made for ``facts``: say why and what to do, on the page and in the log."""
        self.state.plan = None
        self._view = None
        if facts.server is None:  # default_positions says only "no server in these facts"
            problem = "These facts hold no database server, so there is nothing to plan."
            fix = (
                "Go Back and connect to a host where MySQL or MariaDB runs, or open facts "
                "saved from one."
            )
        else:
            problem, fix = error_parts(exc)
        log_error(log, f"no plan for {facts.target}", problem, fix)
        self.error.setText(error_html(problem, fix, "No plan can be made."))
        self.error.setVisible(True)
        self.summary.setText("")
        for section in self.sections.values():
            section.setEnabled(False)
        self.completeChanged.emit()

    def show_saved_plan(self, saved: Plan) -> None:
        """Show a saved plan under review: its slider positions and the changes it turned down.

        The page plans again from the current facts and those positions, so the sliders and
        lists read as when the plan was made; if this version of InnoTune plans them
        differently, the summary says so. ``state.plan`` is the saved plan itself, which is
        what the Preview shows.
        """
        self.state.positions = saved.positions
        self._rejected = set(saved.positions.rejected)
        self.summary_note = (
            f"Reviewing a saved plan made for {saved.facts.target} "
            f"({saved.facts.collected_at}), offline: nothing can be applied from a file."
        )
        if not self._update_plan():
            return  # the facts cannot be planned for: the page says why
        ours = self.state.plan
        if ours is not None and [c.id for c in ours.changes] != [c.id for c in saved.changes]:
            self.summary_note += (
                " This version of InnoTune plans these positions differently; the Preview "
                "shows the saved plan as it was made."
            )
        for slider in self.sections:
            self._show_section(slider)
        self._show_rest()
        self.state.plan = saved
        self.completeChanged.emit()

    def _spare_this_computer(self, facts: HostFacts, pos: SliderPositions) -> SliderPositions:
        """The practice server shares this computer's kernel and disks: leave them alone.

        Its kernel settings and disk queues belong to the whole desktop, so they start
        unticked; the person can still tick them to try them.
        """
        plan = self._plan(facts, pos)
        device_changes = {c.id for c in plan.changes if c.target == "sysfs"}
        self._rejected |= device_changes
        self.summary_note = (
            "Practice server: slider 5b (this computer's kernel settings) and the changes to "
            "this computer's disk queues under 5a start unticked, and the buffer pool and redo "
            "log at their current sizes, so trying InnoTune does not retune your desktop or "
            "take its memory and disk. Tick them or move the sliders to include them."
        )
        share = current_share(facts)
        return dataclasses.replace(
            pos,
            fit_os=False,
            memory_share=pos.memory_share if share is None else share,
            redo_minutes=None,
            rejected=tuple(sorted(self._rejected)),
        )

    def _lock_doublewrite(self, facts: HostFacts, pos: SliderPositions) -> None:
        """Torn-page protection can be turned off only where the planner would allow it."""
        off = self._plan(facts, dataclasses.replace(pos, doublewrite=False))
        allowed = any(c.key == "innodb_doublewrite" for c in off.changes) or not pos.doublewrite
        section = self.sections["doublewrite"]
        section.control.setEnabled(allowed)
        section.locked = not allowed

    def _lock_binlog(self, facts: HostFacts) -> None:
        """The binary log can go off only where it is on and nothing uses it (the reason shown)."""
        lock = binlog_lock(facts.server) if facts.server is not None else None
        section = self.sections["binlog"]
        section.control.setEnabled(lock is None)
        section.locked = lock is not None
        section.locked_note = f"Locked: {lock}." if lock else ""
        off = facts.server is not None and not facts.server.binlog_enabled
        # Off already: no "Keep" box ticked beside it, only the plain fact.
        section.control.setHidden(off)
        if off:
            section.locked_note = (
                "The binary log is off on this server: nothing to keep or turn off "
                "(InnoTune never turns it on)."
            )

    def positions_from_controls(self) -> SliderPositions:
        """Read every control into slider positions."""
        moved: dict[str, Any] = {s.declared.field: s.position() for s in self.sections.values()}
        return dataclasses.replace(
            SliderPositions(), **moved, rejected=tuple(sorted(self._rejected))
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
    def _plan(self, facts: HostFacts, pos: SliderPositions) -> Plan:
        plan = self._plans.get(pos)
        if plan is None:
            if len(self._plans) >= 64:  # each holds ~50 objects the garbage collector visits
                self._plans.clear()
            plan = self._plans[pos] = plan_for(facts, pos, self.catalogue)
        return plan

    def refresh(self) -> None:
        """Recompute the plan for the current positions and show it."""
        if self._update_plan():
            for slider in self.sections:
                self._show_section(slider)
            self._show_rest()

    def _update_plan(self) -> bool:
        """Plan for the current positions (state.plan); False when there is nothing to plan."""
        facts, pos = self.state.facts, self.state.positions
        if facts is None or pos is None:
            return False
        try:
            # Rejected changes stay listed (unticked): plan without rejections to show them.
            shown = self._plan(facts, dataclasses.replace(pos, rejected=()))
            plan = self._plan(facts, pos)
            said = dict(shown.sentences)  # the plan's own figures (rejections aside)
        except (InnoTuneError, ValueError) as exc:
            self._no_plan(facts, exc)
            return False
        if not self.error.isHidden():  # planned again after a failure: back to normal
            self.error.setVisible(False)
            for section in self.sections.values():
                section.setEnabled(True)
        self.state.plan = plan
        self._view = (facts, pos, shown, said)
        return True

    def _show_section(self, slider: str) -> None:
        """Show one slider's position, sentence and changes for the last plan."""
        if self._view is None:
            return
        facts, pos, shown, said = self._view
        section = self.sections[slider]
        declared = section.declared
        value = section.control_value(getattr(pos, declared.field))
        if section.locked:
            words = section.locked_note or declared.locked or ""
        elif isinstance(section.control, QSlider) and declared.positions:
            # The position the control shows (its own words where the facts need them).
            words = note(slider, shown, facts) or declared.positions[int(value)].label or ""
        else:
            words = note(slider, shown, facts)
        changes = [c for c in shown.changes if c.slider == slider]
        inactive, room, other = False, len(changes), ("", "")
        if declared.kind == "switch" and not section.locked:
            # The box's other position: an unticked box shows what ticking it would change,
            # greyed, and either way the list and the words keep room for the longer, so
            # toggling the box moves nothing below it.
            flip: dict[str, Any] = {declared.field: not value}
            flipped = dataclasses.replace(pos, rejected=(), **flip)
            theirs_plan = self._plan(facts, flipped)
            theirs = [c for c in theirs_plan.changes if c.slider == slider]
            room = max(room, len(theirs))
            other = (dict(theirs_plan.sentences).get(slider, ""), note(slider, theirs_plan, facts))
            if not changes and theirs:
                changes, inactive = theirs, True
        section.show_state(
            value, said.get(slider, ""), changes, self._rejected, words, inactive, room, other
        )

    def _show_rest(self) -> None:
        if self.state.plan is not None:
            self._show_summary(self.state.plan)

    def _show_summary(self, plan: Plan) -> None:
        applied = [c for c in plan.changes if c.target != "advice"]
        n = len(applied)
        if n == 0:
            restart = "Nothing to change at these positions."
        elif plan.restart_needed:
            needs = sum(1 for c in applied if c.restart_needed)
            which = "it" if n == 1 else "all of them" if needs >= n else f"{needs} of them"
            restart = f"The server must restart for {which}."
        else:
            restart = f"No restart needed: {'it applies' if n == 1 else 'they all apply'} live."
        self.summary.setText(
            f"<b>{count(n, 'change')}</b> for {html.escape(self.state.place())} "
            f"({html.escape(plan.facts.flavour or '')} {html.escape(plan.facts.version or '')}). "
            f"{restart}"
            + (f"<br><i>{html.escape(self.summary_note)}</i>" if self.summary_note else "")
        )
        self.warnings.setVisible(bool(plan.warnings))
        self.warnings.setText("".join(f"<p>⚠ {html.escape(w)}</p>" for w in plan.warnings))
        alone = "".join(
            f"<p><b>{html.escape(a.knob)}</b>"
            f"{' (' + html.escape(a.device) + ')' if a.device else ''}: {html.escape(a.why)}</p>"
            for a in plan.left_alone
        )
        if alone != self._left_alone_html:  # setHtml lays the text out again and scrolls up
            self._left_alone_html = alone
            # The list sits at the bottom, mostly out of sight: laying it out (a few ms) waits
            # for the next event-loop turn, after the moved slider's section is drawn.
            self._left_alone_timer.start(0)

    def _flush_left_alone(self) -> None:
        """Show the list of settings left alone now, if it changed."""
        self._left_alone_timer.stop()
        html_text = self._left_alone_html or "<p>Nothing: every setting InnoTune knows changes.</p>"
        if html_text != self._left_alone_set:
            self._left_alone_set = html_text
            self.left_alone.setHtml(html_text)

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        return self.state.plan is not None

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        """Next: the plan the person chose goes to the session log (a step they took)."""
        plan, pos = self.state.plan, self.state.positions
        if plan is not None:
            changes = [c for c in plan.changes if c.target != "advice"]
            log.info(
                "plan chosen: %s (%s); sliders: %s",
                count(len(changes), "change"),
                ", ".join(f"{c.key}{'@' + c.device if c.device else ''} -> {c.proposed}"
                          for c in changes) or "none",
                pos,
            )  # fmt: skip
        return True
