"""The Done page: what changed, how to undo it, what it measured, where the log is."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWizardPage

from app.domain.bench import BenchReport, commits_text, measured
from app.domain.plan import Change
from app.domain.words import count
from app.flows.planning import change_values
from app.knobs import default_catalogue
from app.ui.state import WizardState


def gains(before: BenchReport | None, after: BenchReport | None) -> list[str]:
    """One line per workload run in both: commits/s before → after and the verdict."""
    if before is None or after is None:
        return []
    lines = []
    for v in after.verdicts(before):
        b, a = before.result(v.workload, v.threads), after.result(v.workload, v.threads)
        assert b is not None and a is not None  # a verdict needs both
        if v.too_short:  # no figure on one side: the unit goes with the figure there is
            figures = " → ".join(
                commits_text(r, 0) + ("" if not measured(r) else " commits/s") for r in (b, a)
            )
        else:
            figures = f"{commits_text(b, 0)} → {commits_text(a, 0)} commits/s"
        lines.append(f"{v.workload} × {count(v.threads, 'client')}: {figures}: {v.text()}")
    return lines


def summary_html(state: WizardState, log_path: str) -> str:
    """The page's text, from what the wizard did."""
    parts: list[str] = []
    target = state.place()  # a container by its name, and its host
    cli_target = state.target.label if state.target else "TARGET"
    plan = state.plan
    if plan is not None:
        changes = [c for c in plan.changes if c.target != "advice"]
        skipped = state.not_taken if state.snapshot_id else {}
        applied = [c for c in changes if c.id not in skipped]
        done = "applied to" if state.snapshot_id else "planned (not applied) for"
        parts.append(f"<h3>{count(len(applied), 'change')} {done} {html.escape(target)}</h3>")
        catalogue = default_catalogue()

        def item(c: Change, why: str = "") -> str:
            where = f" ({c.device})" if c.device else ""
            current, proposed = change_values(c, catalogue)  # 128 MiB, not 134217728
            tail = f": {html.escape(why)}" if why else ""
            return (
                f"<li>{html.escape(c.key + where)}: "
                f"{html.escape(current)} → {html.escape(proposed)}{tail}</li>"
            )

        parts.append("<ul>" + "".join(item(c) for c in applied) + "</ul>")
        left = [c for c in changes if c.id in skipped]
        if left:
            parts.append(
                f"<p>{count(len(left), 'change')} this host did not take, so "
                f"{'it is' if len(left) == 1 else 'they are'} not in force:</p>"
                + "<ul>"
                + "".join(item(c, skipped[c.id]) for c in left)
                + "</ul>"
            )
    if state.snapshot_id:
        parts.append(
            f"<p>Snapshot <b>{html.escape(state.snapshot_id)}</b> holds everything as it was. "
            "Undo at any time: the Apply page's snapshot list, or "
            f"<code>innotune rollback {html.escape(cli_target)} {html.escape(state.snapshot_id)}"
            "</code>.</p>"
        )
    else:
        parts.append("<p>Nothing was applied, so there is nothing to undo.</p>")
    measured = gains(state.bench_before, state.bench_after)
    if measured and state.bench_before is not None and state.bench_after is not None:
        from app.domain.pace import cpu_wait_summary

        note = state.bench_after.settings_note(state.bench_before)
        busy = cpu_wait_summary([state.bench_before, state.bench_after])
        parts.append(
            "<p><b>Measured on your server:</b><br>"
            + "<br>".join(html.escape(m) for m in measured)
            + f"<br>{html.escape(note)}"
            + (f"<br>{html.escape(busy)}" if busy else "")
            + "</p>"
        )
    watched = watched_lines(state)
    if watched:
        parts.append(
            "<p><b>Watched on your server (its own workload):</b><br>"
            + "<br>".join(html.escape(w) for w in watched)
            + "</p>"
        )
    parts.append(f"<p>InnoTune's log (secrets masked): <code>{html.escape(log_path)}</code></p>")
    return "".join(parts)


def watched_lines(state: WizardState) -> list[str]:
    """The watches before and after, each judged figure with its verdict ([]: no pair)."""
    from app.domain.watch import BY_KEY, value_text, verdict_text
    from app.flows.watching import compare

    before, after = state.watch_before, state.watch_after
    if before is None or after is None:
        return []
    found = compare(before, after)
    lines = [f"Traffic before: {found.before.text()}; after: {found.after.text()}."]
    if found.why_not:
        return [*lines, f"No verdicts: {found.why_not}."]
    for fig in found.figures:
        if fig.verdict in ("not_measured", "not_compared"):
            continue
        lines.append(
            f"{BY_KEY[fig.key].title}: {value_text(fig.key, fig.before)} → "
            f"{value_text(fig.key, fig.after)}, {verdict_text(fig)}"
        )
    return lines


class DonePage(QWizardPage):
    """The last page: a summary a person can keep."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.setTitle("Done")
        self.setSubTitle("What InnoTune did, how to undo it, and what it measured.")
        self.setObjectName("page_done")
        self.state = state
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName("summary")
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addStretch(1)

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        from app.places import app_data_dir

        self.text.setText(summary_html(self.state, str(app_data_dir() / "logs" / "innotune.log")))
