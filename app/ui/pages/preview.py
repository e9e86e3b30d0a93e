"""The Preview page: exactly what apply would do, from the describers' Actions.

Nothing here formats a change on its own: every diff, value, file, command and warning
comes from :func:`app.describe.preview.build_preview`, whose Actions are the ones the job
is built from. So the page cannot show anything apply would not do.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent
from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWizardPage,
)

from app.access.doctor import DoctorResult
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.domain.words import count
from app.flows.planning import spelled
from app.flows.preview import Preview, preview_plan, with_checksums, with_requested_restart
from app.ui.hostworker import Progress, Task, TaskHandle
from app.ui.logview import DETAILS_LINK, error_html, error_parts, link_to_log, log_error
from app.ui.state import WizardState
from app.ui.widgets.factsnote import PLAN_SUBJECT, FactsNote
from app.ui.widgets.wraplabel import WrapLabel

log = logging.getLogger(__name__)
# What to do when an applier refuses: the refusal names the file or setting.
REFUSED_FIX = (
    "Fix what it names on the server, then press Refresh preview; or go Back and untick "
    "that change."
)

# GitHub's diff colours, for a light and for a dark base: each keeps a contrast ratio of at
# least 4.5:1 (WCAG AA) against the base it is chosen for.
LIGHT_DIFF = {"added": "#1a7f37", "removed": "#cf222e", "hunk": "#0550ae"}
DARK_DIFF = {"added": "#7ee787", "removed": "#ff7b72", "hunk": "#79c0ff"}


def diff_colours(palette: QPalette) -> dict[str, QColor]:
    """The diff's colours for ``palette``: light or dark set by the base, header = text colour."""
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    colours = {k: QColor(v) for k, v in (DARK_DIFF if dark else LIGHT_DIFF).items()}
    colours["header"] = palette.color(QPalette.ColorRole.Text)
    return colours


def _format(color: QColor, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(color)
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a unified diff: added lines green, removed red, hunk headers blue."""

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        super().__init__(document)
        self.set_palette(palette)

    def set_palette(self, palette: QPalette) -> None:
        """Pick the colours for ``palette`` (light or dark) and colour the text again."""
        colours = diff_colours(palette)
        self.added = _format(colours["added"])
        self.removed = _format(colours["removed"])
        self.hunk = _format(colours["hunk"])
        self.header = _format(colours["header"], bold=True)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        if text.startswith(("+++", "---")):
            fmt = self.header
        elif text.startswith("@@"):
            fmt = self.hunk
        elif text.startswith("+"):
            fmt = self.added
        elif text.startswith("-"):
            fmt = self.removed
        else:
            return
        self.setFormat(0, len(text), fmt)


def _text_view(name: str, accessible: str) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setObjectName(name)
    view.setAccessibleName(accessible)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    view.setFont(font)
    return view


@dataclass(frozen=True)
class PreviewInputs:
    """What a preview is built from: the plan, the facts, the persisted-value choice."""

    plan: Plan
    facts: HostFacts
    persisted: str = "reset"


def make_preview(conn: DoctorResult, inputs: PreviewInputs, progress: Progress) -> Preview:
    """The preview task: every applier's description over the host's connection (if any)."""
    progress.say("Reading the option files and current values (nothing is written)")
    live = conn if conn.transport is not None else None
    return preview_plan(inputs.plan, inputs.facts, live, inputs.persisted)


@dataclass(frozen=True)
class ExportInputs:
    """What to export, as what (``ansible``, ``script`` or ``container``), and where."""

    plan: Plan
    kind: str
    path: Path
    facts: HostFacts | None = None


def write_export(_conn: DoctorResult, inputs: ExportInputs, progress: Progress) -> str:
    """The export task (on this computer): what was written, in words."""
    from app.flows.export import export_playbook, export_script

    plan, kind, path = inputs.plan, inputs.kind, inputs.path

    progress.say(f"Writing the export to {path}")
    server = inputs.facts.server if inputs.facts is not None else None
    if kind == "container" and server is not None and server.instance.container is not None:
        from app.flows.export import export_durable

        durable, written = export_durable(plan, server.instance.container, path, inputs.facts)
        names = ", ".join(p.name for p in written)
        steps = "; then ".join(durable.commands)
        notes = "".join(f" {n}" for n in durable.notes)
        return f"Wrote {names} into {path}: {durable.how}. To use it, run: {steps}.{notes}"
    if kind == "ansible":
        written = export_playbook(plan, path, inputs.facts)
        return (
            f"Wrote an Ansible playbook ({len(written)} files) into {path}: try "
            f"ansible-playbook -i INVENTORY {path / 'site.yml'} --check --diff"
        )
    export_script(plan, path, inputs.facts)
    return f"Wrote {path}: run `sh {path} check` on a host, then apply (and rollback to undo)."


class PreviewPage(QWizardPage):
    """Diffs, disk and kernel values, persistence files, commands, restart and warnings."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle("Preview")
        self.setSubTitle(
            "The exact changes apply will make: the job on the server is built from these "
            "same descriptions, so nothing here differs from what apply does."
        )
        self.setObjectName("page_preview")
        self.task: TaskHandle | None = None
        self._again = False  # build again once the running task has ended
        self._built_for: Plan | None = None
        layout = QVBoxLayout(self)
        # When the facts the plan was made from were read; out of date after a change.
        self.dated = FactsNote(state, "Planned from facts read", PLAN_SUBJECT)
        layout.addWidget(self.dated)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setObjectName("preview_status")
        link_to_log(self.status)  # rich text: every text put here is escaped
        layout.addWidget(self.status)
        self.restart_label = WrapLabel("")
        self.restart_label.setObjectName("preview_restart")
        layout.addWidget(self.restart_label)
        # The restart is decided here, before Apply: the Apply page has the same box, and
        # the wizard keeps the two in step. Ticked and disabled when a change needs it.
        self.restart_box = QCheckBox(
            "Restart the ser&ver afterwards to prove it starts with the new settings"
        )
        self.restart_box.setObjectName("preview_restart_anyway")
        self.restart_box.setAccessibleName(
            "restart the server afterwards to prove it starts with the new settings"
        )
        self.restart_box.setToolTip(
            "Every change here takes effect live. Ticked, the server is also restarted after "
            "Apply: the values then come from the new option files, proving they survive a "
            "restart. Rolling this change back restarts the server too."
        )
        self.restart_box.setEnabled(False)
        self._box_forced = False  # ticked because a change needs the restart
        self._showing = False  # show_preview is filling the tabs (the box may toggle)
        self.restart_box.toggled.connect(self._on_restart_box_toggled)
        layout.addWidget(self.restart_box)
        # Shown only when the server keeps a value with SET PERSIST that would beat the file.
        self.persisted_box = QComboBox()
        self.persisted_box.setObjectName("preview_persisted")
        self.persisted_box.addItem(
            "Remove those values from mysqld-auto.cnf (RESET PERSIST), so the option file applies",
            "reset",
        )
        self.persisted_box.addItem(
            "Write InnoTune's values into mysqld-auto.cnf too (SET PERSIST_ONLY)", "persist"
        )
        self.persisted_label = QLabel(
            "MySQL keeps values set with SET PERSIST in mysqld-auto.cnf, and they beat every "
            "option file at the next start. Values &kept there:"
        )
        self.persisted_label.setWordWrap(True)
        self.persisted_label.setBuddy(self.persisted_box)
        self.persisted_box.setAccessibleName("what to do with values kept by SET PERSIST")
        self.persisted_box.currentIndexChanged.connect(self._on_persisted_changed)
        layout.addWidget(self.persisted_label)
        layout.addWidget(self.persisted_box)
        self.persisted_label.setVisible(False)
        self.persisted_box.setVisible(False)
        self.tabs = QTabWidget()
        self.diffs = _text_view("preview_diffs", "option-file diffs")
        self.highlighter = DiffHighlighter(self.diffs.document(), self.diffs.palette())
        self.tabs.addTab(self.diffs, "&Option files")
        self.values = QTableWidget(0, 6)
        self.values.setObjectName("preview_values")
        self.values.setAccessibleName("disk, kernel and live values")
        self.values.setHorizontalHeaderLabels(
            ["Kind", "Setting", "Now", "New", "Takes effect", "Kept across restarts in"]
        )
        self.values.horizontalHeader().setStretchLastSection(True)
        self.tabs.addTab(self.values, "&Disk, kernel and live values")
        self.files = _text_view("preview_files", "persistence files")
        self.tabs.addTab(self.files, "Pers&istence files")
        self.commands = _text_view("preview_commands", "commands and SQL")
        self.tabs.addTab(self.commands, "&Commands and SQL")
        self.warnings = _text_view("preview_warnings", "warnings")
        self.tabs.addTab(self.warnings, "&Warnings")
        layout.addWidget(self.tabs, 1)
        row = QHBoxLayout()
        # After fixing what the preview refused (a file on the server), read it all again:
        # the plan is the same, so nothing else would build the preview anew.
        self.refresh_button = QPushButton("&Refresh preview")
        self.refresh_button.setObjectName("preview_refresh")
        self.refresh_button.setToolTip("Read the option files and current values again")
        self.refresh_button.clicked.connect(self.start)
        row.addWidget(self.refresh_button)
        row.addStretch(1)
        self.save_button = QPushButton("&Save preview…")
        self.save_button.setObjectName("preview_save")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self._on_save_clicked)
        row.addWidget(self.save_button)
        self.export_button = QPushButton("E&xport…")
        self.export_button.setObjectName("preview_export")
        self.export_button.setToolTip(
            "Write this plan for other hosts: an Ansible playbook that sizes each host's "
            "buffer pool from its own RAM, or a shell script with its own rollback."
        )
        menu = QMenu(self.export_button)
        self.container_action = menu.addAction(
            "The durable way for this container (folder)…", self._on_export_container
        )
        self.container_action.setVisible(False)
        menu.addAction("Ansible playbook (folder)…", self._on_export_ansible)
        menu.addAction("Shell script (file)…", self._on_export_script)
        self.export_button.setMenu(menu)
        self.export_button.setEnabled(False)
        row.addWidget(self.export_button)
        self.export_task: TaskHandle | None = None
        layout.addLayout(row)

    # -- building ---------------------------------------------------------------------------
    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        if self.state.plan is not None and self.state.plan is not self._built_for:
            self.start()

    def start(self) -> None:
        """Build the preview on the host's worker from the current plan."""
        plan, facts = self.state.plan, self.state.facts
        if plan is None or facts is None:
            self.status.setText("No plan yet: go back to Trade-offs.")
            return
        if self.task is not None and self.task.is_running():
            # A choice made while the last preview builds is not lost: that one is set aside
            # and the preview is built again from the newest inputs once it has ended.
            self._again = True
            self.state.preview = None
            self.completeChanged.emit()
            return
        self._again = False
        self._built_for = plan
        self.state.preview = None
        self.save_button.setEnabled(False)
        self.refresh_button.setEnabled(False)
        self.status.setText("Building the preview…")
        inputs = PreviewInputs(plan, facts, self.state.persisted)
        self.task = self.state.worker().submit(Task("preview", make_preview, inputs), self)
        self.task.say.connect(self._on_task_say)
        self.task.finished.connect(self._on_task_finished)
        self.task.failed.connect(self._on_task_failed)
        self.task.ended.connect(self._on_task_ended)
        self.completeChanged.emit()

    def _on_task_say(self, text: str) -> None:
        self.status.setText(html.escape(text))

    def _on_task_ended(self) -> None:
        self.refresh_button.setEnabled(True)
        if self._again:
            self.start()

    def _on_task_finished(self, preview: object) -> None:
        assert isinstance(preview, Preview)
        if self._again:
            return  # built from inputs that have changed since; the next one follows
        self.state.preview = preview
        if self.state.plan is not None:
            self.state.plan = with_checksums(self.state.plan, preview)
            self._built_for = self.state.plan
        self.show_preview(preview)
        self.completeChanged.emit()

    def _on_task_failed(self, exc: object) -> None:
        # The worker has logged it, with its traceback, for the Details… link.
        problem, fix = error_parts(exc)
        self.status.setText(error_html(problem, fix, "The preview could not be built."))
        self.completeChanged.emit()

    def _on_persisted_changed(self, _index: int) -> None:
        choice = str(self.persisted_box.currentData())
        if choice != self.state.persisted:
            self.state.persisted = choice
            self.start()  # the statements and the note change with the choice

    # -- showing ----------------------------------------------------------------------------
    def show_preview(self, preview: Preview) -> None:
        """Fill every tab with what Apply will do: the preview, with the restart if ticked."""
        if self._showing:
            return
        self._showing = True
        try:
            self._show_restart(preview)
            self._fill(self.effective_preview() or preview)
        finally:
            self._showing = False

    def _fill(self, preview: Preview) -> None:
        """Fill every tab from ``preview`` (the effective one: statements, commands, warnings)."""
        persisted = bool(preview.server_files)
        self.persisted_label.setVisible(persisted)
        self.persisted_box.setVisible(persisted)
        lines = [html.escape(f"Note: {n}") for n in preview.notes]
        if preview.errors:
            for error in preview.errors:
                log_error(log, f"preview of {preview.target} refused", error, REFUSED_FIX)
            shown = preview.window_errors or preview.errors
            refused = "".join(f"<br>• {html.escape(e)}" for e in shown)
            lines.append(
                "<b>Apply would refuse this plan; nothing can be applied yet:</b>"
                f"{refused}<br>{html.escape(REFUSED_FIX)}{DETAILS_LINK}"
            )
        changed = len(preview.option_files) + len(preview.persistence_files)
        lines.append(
            f"{count(changed, 'file')}, {count(len(preview.commands), 'command')} and "
            f"{count(len(preview.statements), 'SQL statement')}."
        )
        self.status.setText("<br>".join(lines))
        diffs = []
        for write in preview.option_files:
            what = "new file" if write.creates else "edited"
            diffs.append(f"# {write.path} ({what}, mode {write.mode}, owner {write.owner or '-'})")
            if write.note:
                diffs.append(f"# why here: {write.note}")
            diffs.append(write.diff().rstrip("\n"))
            diffs.append("")
        not_read = [u for u in preview.unsupported if "option" in u.lower()]
        self.diffs.setPlainText(
            "\n".join(diffs) or "\n".join(not_read) or "No option-file changes."
        )
        self.values.setRowCount(len(preview.values))
        for row, value in enumerate(preview.values):
            cells = (
                value.kind,
                f"{value.key} ({value.device})" if value.device else value.key,
                spelled(value.current, value.key),
                spelled(value.new, value.key),
                "live" if value.live else "after a restart",
                value.persistent,
            )
            for column, cell in enumerate(cells):
                self.values.setItem(row, column, QTableWidgetItem(cell))
        self.values.resizeColumnsToContents()
        files = []
        for write in preview.persistence_files:
            state = "new file" if write.creates else "replaces the current file"
            files.append(f"# {write.path} ({state}, mode {write.mode})")
            files.append(write.after.decode("utf-8", "replace").rstrip("\n"))
            files.append("")
        self.files.setPlainText("\n".join(files) or "No persistence files.")
        commands = [f"{s};" for s in preview.statements]
        if preview.held_for_restart:
            commands.append(
                "# not set live, the restart applies them from the option files: "
                + ", ".join(preview.held_for_restart)
            )
        commands += [f"{w}    # set live" for w in preview.live_writes]
        commands += [f"{c.line()}    # {c.why}" for c in preview.commands]
        self.commands.setPlainText("\n".join(commands) or "Nothing to run.")
        warnings = [f"! {w}" for w in preview.all_warnings]
        warnings += [f"- not supported: {u}" for u in preview.unsupported]
        self.warnings.setPlainText("\n".join(warnings) or "No warnings.")
        warned = len(preview.all_warnings) + len(preview.unsupported)
        self.tabs.setTabText(4, f"Warnings ({warned})" if warned else "Warnings")
        self.save_button.setEnabled(True)
        self.export_button.setEnabled(True)
        server = self.state.facts.server if self.state.facts is not None else None
        self.container_action.setVisible(
            server is not None and server.instance.container is not None
        )

    # -- the restart ------------------------------------------------------------------------
    def effective_preview(self) -> Preview | None:
        """The preview of what Apply will do: with the asked-for restart, if ticked."""
        preview, facts, plan = self.state.preview, self.state.facts, self.state.plan
        if preview is None or facts is None or plan is None or preview.restart_needed:
            return preview
        if not self.restart_box.isChecked():
            return preview
        return with_requested_restart(preview, facts, plan)

    def _on_restart_box_toggled(self, _checked: bool) -> None:
        if self.state.preview is not None:
            self.show_preview(self.state.preview)  # the statements and commands change too

    def _show_restart(self, preview: Preview) -> None:
        """Say whether the server will restart, and why: needed by which changes, or asked for."""
        offline = self.state.mode == "offline"
        self.restart_box.setVisible(not offline)  # nothing is applied from a file
        if preview.restart_needed:
            self._box_forced = True
            self.restart_box.setChecked(True)
            self.restart_box.setEnabled(False)
        else:
            if self._box_forced:  # a new preview needs no restart: the person decides again
                self._box_forced = False
                self.restart_box.setChecked(False)
            self.restart_box.setEnabled(not offline)
        effective = self.effective_preview() or preview
        self.restart_label.setText(self._restart_text(preview, effective, offline))
        # The words for the box's other state too: ticking it must not move it.
        facts, plan = self.state.facts, self.state.plan
        other = None
        if not preview.restart_needed and not offline and facts is not None and plan is not None:
            asked = effective.restart_requested
            other = preview if asked else with_requested_restart(preview, facts, plan)
        self.restart_label.reserve(
            [self._restart_text(preview, other, offline)] if other is not None else []
        )

    def _restart_text(self, preview: Preview, effective: Preview, offline: bool) -> str:
        """Whether the server will restart and why, for ``effective`` (ticked or not)."""
        if preview.restart_needed:
            plan = self.state.plan
            needers = [c.key for c in (plan.changes if plan else ()) if c.target == "option_file"]
            text = "The server will restart: " + (
                f"needed by {', '.join(needers)}, which take effect only after a restart."
                if needers
                else "some changes take effect only after a restart."
            )
        elif effective.restart_requested:
            text = (
                "The server will restart because you asked for it below, though every change "
                "takes effect live: the restart proves it starts with the new option files."
            )
            if effective.restart is None:
                text += (
                    " InnoTune does not know how this server is restarted: give the restart "
                    "command on the Apply page."
                )
        else:
            text = "No restart: every change takes effect live."
            if not offline:
                text += " Tick the box below to restart anyway."
        if effective.will_restart and effective.downtime:
            text += f" Estimated downtime: {effective.downtime.text()}."
        if effective.live_now:
            text += " Live without a restart: " + ", ".join(effective.live_now) + "."
        return text

    # -- saving -----------------------------------------------------------------------------
    def save_to(self, path: str | Path) -> None:
        """Write the whole preview as `innotune preview --out` does, with any asked-for restart."""
        preview = self.effective_preview()
        if preview is None:
            return
        Path(path).write_text(preview.text())

    def _on_save_clicked(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Save preview", "innotune-preview.txt", "Text files (*.txt);;All files (*)"
        )
        if name:
            try:
                self.save_to(name)
            except OSError as exc:
                problem = f"Could not save {name}: {exc.strerror or exc}."
                fix = "Choose another place to save it."
                log_error(log, "saving the preview", problem, fix)
                self.status.setText(error_html(problem, fix))

    # -- exporting --------------------------------------------------------------------------
    def export_to(self, kind: str, path: str | Path) -> None:
        """Write the plan as ``ansible`` (a folder) or ``script`` (a file), off the GUI thread."""
        plan = self.state.plan
        if plan is None or (self.export_task is not None and self.export_task.is_running()):
            return
        self.status.setText(html.escape(f"Exporting to {path}…"))
        inputs = ExportInputs(plan, kind, Path(path), self.state.facts)
        self.export_task = self.state.local.submit(Task("export", write_export, inputs), self)
        self.export_task.finished.connect(self._on_export_finished)
        self.export_task.failed.connect(self._on_export_failed)

    def _on_export_finished(self, text: object) -> None:
        self.status.setText(html.escape(str(text)))

    def _on_export_failed(self, exc: object) -> None:
        if isinstance(exc, OSError):
            problem = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            fix = "Choose another place to export to."
        else:
            problem, fix = error_parts(exc)
        self.status.setText(error_html(problem, fix, "The export failed."))

    def _on_export_container(self) -> None:
        name = QFileDialog.getExistingDirectory(
            self, "Write the container's drop-in and the way to mount it into"
        )
        if name:
            self.export_to("container", name)

    def _on_export_ansible(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Export an Ansible playbook into")
        if name:
            self.export_to("ansible", name)

    def _on_export_script(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Export a shell script", "innotune-plan.sh", "Shell scripts (*.sh);;All (*)"
        )
        if name:
            self.export_to("script", name)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        # The desktop switched between light and dark: the diff colours follow. The page's
        # own palette, as the text view's is updated only after this event.
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.set_palette(self.palette())
        super().changeEvent(event)

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        preview = self.state.preview
        return preview is not None and not preview.errors
