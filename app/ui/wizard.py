"""The main window: a QWizard with one page per step."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMessageBox, QVBoxLayout, QWidget, QWizard, QWizardPage

from app import APP_NAME, __version__
from app.ui.collector import install_gui_collector
from app.ui.state import WizardState

STEPS = ("Connect", "Inspect", "Recommendation", "Trade-offs", "Preview", "Apply", "Verify", "Done")

_INTRO = {
    "Connect": "Choose the server to tune: the practice server, this computer, or a host over SSH.",
    "Inspect": "InnoTune reads the hardware, the disks under the data directory and the server.",
    "Recommendation": "What InnoTune recommends, why, what it risks, and whether it restarts.",
    "Trade-offs": "Each slider trades speed against what a crash may cost; you choose.",
    "Preview": "The exact changes: option-file diffs, disk and kernel settings, restarts.",
    "Apply": "A snapshot first, then the changes, a health check, and rollback if needed.",
    "Verify": "A short before/after write benchmark shows what the changes did.",
    "Done": "Finished. Every snapshot can be restored later from the Snapshots list.",
}


class StepPage(QWizardPage):
    """A page whose content a later step fills in."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.setTitle(title)
        self.setSubTitle(_INTRO[title])
        self.setObjectName(f"page_{title.lower().replace('-', '_')}")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.setLayout(layout)


class MainWizard(QWizard):
    """InnoTune's wizard: Connect → Inspect → Recommendation → Trade-offs → … → Done.

    Then Preview → Apply → Verify; the Recommendation page may go straight to Apply or Preview.
    """

    def __init__(self, state: WizardState | None = None) -> None:
        super().__init__()
        install_gui_collector()
        # Deleted by Qt on the GUI thread once done() has stopped every worker: its pages'
        # slots refer back to it, so it would otherwise wait for the cyclic garbage
        # collector, which may run anywhere, at any moment (app/ui/collector.py).
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.state = state or WizardState()
        self.setWindowTitle(f"{APP_NAME} — tune MySQL and MariaDB writes")
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setOption(QWizard.WizardOption.HaveHelpButton, True)
        self.setButtonText(QWizard.WizardButton.HelpButton, "&About")
        self.helpRequested.connect(self._on_help_requested)
        self.setOption(QWizard.WizardOption.HaveCustomButton1, True)
        self.setButtonText(QWizard.WizardButton.CustomButton1, "&Glossary")
        self.setOption(QWizard.WizardOption.HaveCustomButton2, True)
        self.setButtonText(QWizard.WizardButton.CustomButton2, "&Exercises")
        self.exercises_dialog: QWidget | None = None
        # The log, from every page: no letter is free on every page, so a shortcut instead.
        from app.ui.logview import session_offset

        self.log_offset = session_offset()
        self.log_dialog: QWidget | None = None
        self.setOption(QWizard.WizardOption.HaveCustomButton3, True)
        self.setButtonText(QWizard.WizardButton.CustomButton3, "Log…")
        log_button = self.button(QWizard.WizardButton.CustomButton3)
        log_button.setObjectName("log_button")
        log_button.setAccessibleName("show the log of this session")
        log_button.setToolTip("The full log of this session, passwords masked (Ctrl+L)")
        QShortcut(QKeySequence("Ctrl+L"), self, self.show_log)
        self.customButtonClicked.connect(self._on_custom_button_clicked)
        self.glossary_dialog: QWidget | None = None
        self._plan_shown: object = None  # the saved plan last put on the Trade-offs page
        self.pages: dict[str, QWizardPage] = {}
        for title in STEPS:
            page = self._make_page(title)
            self.pages[title] = page
            self.addPage(page)
        apply, connect = self.pages["Apply"], self.pages["Connect"]
        apply.seen.connect(self._on_apply_seen)  # type: ignore[attr-defined]
        # "Restart afterwards" is chosen on the Preview (where the restart is shown) and
        # on the Apply page: one choice, so the two boxes follow each other.
        ours, theirs = self.pages["Preview"].restart_box, apply.restart_box  # type: ignore[attr-defined]
        ours.toggled.connect(theirs.setChecked)
        theirs.toggled.connect(ours.setChecked)
        connect.reconnect_ready.connect(self._on_reconnect_ready)  # type: ignore[attr-defined]
        self._wire_recommendation()
        for title in ("Trade-offs", "Preview"):  # "Read them again" on facts out of date
            self.pages[title].dated.read_again.connect(self.read_facts_again)  # type: ignore[attr-defined]
        self.resize(900, 650)
        geometry = QSettings().value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)

    def _make_page(self, title: str) -> QWizardPage:
        if title == "Connect":
            from app.ui.pages.connect import ConnectPage

            return ConnectPage(self.state)
        if title == "Inspect":
            from app.ui.pages.inspect import InspectPage

            return InspectPage(self.state)
        if title == "Recommendation":
            from app.ui.pages.recommend import RecommendPage

            return RecommendPage(self.state)
        if title == "Trade-offs":
            from app.ui.pages.tradeoffs import TradeoffsPage

            return TradeoffsPage(self.state)
        if title == "Preview":
            from app.ui.pages.preview import PreviewPage

            return PreviewPage(self.state)
        if title == "Apply":
            from app.ui.pages.apply import ApplyPage

            return ApplyPage(self.state)
        if title == "Verify":
            from app.ui.pages.verify import VerifyPage

            return VerifyPage(self.state)
        if title == "Done":
            from app.ui.pages.done import DonePage

            return DonePage(self.state)
        return StepPage(title)

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        """Skip the steps a mode does not need.

        Restoring a snapshot needs only a connection and the snapshot list; a saved facts
        file needs no connection, so it goes straight to the trade-offs and stops after the
        preview (nothing can be applied without a server).
        """
        order = list(self.pages)
        current = self.currentPage()
        title = next((t for t, p in self.pages.items() if p is current), None)
        skip_to = {
            ("restore", "Connect"): "Apply",
            ("restore", "Apply"): "Done",
            ("reconnect", "Connect"): "Apply",
            ("offline", "Connect"): "Trade-offs",
            ("offline", "Preview"): "Done",
        }.get((self.state.mode, title or ""))
        if title == "Recommendation" and self.state.mode == "tune":
            route = self.pages["Recommendation"].route  # type: ignore[attr-defined]
            skip_to = {"apply": "Apply", "preview": "Preview"}.get(route)
        if skip_to is None:
            return super().nextId()
        return self.pageIds()[order.index(skip_to)]

    def initializePage(self, page_id: int) -> None:  # noqa: N802 - Qt's name
        """Prepare a page; a saved plan under review sets the Trade-offs sliders once.

        The Apply page's consent box shows the consent given to the current plan (on the
        Recommendation page, or there before): none once the plan changed.
        """
        apply = self.pages.get("Apply")
        given = self.state.consented()  # the page clears its box for a plan new to it
        super().initializePage(page_id)
        if apply is not None and self.page(page_id) is apply:
            apply.consent.setChecked(given)  # type: ignore[attr-defined]
        if self.page(page_id) is self.pages.get("Trade-offs"):
            self._show_saved_plan()

    def _show_saved_plan(self) -> None:
        """Put the saved plan's slider positions on the Trade-offs page (first visit only).

        The page plans again from the facts and those positions; the saved plan itself is
        what the Preview shows, and a difference (another InnoTune version plans otherwise)
        is said on the page.
        """
        from app.ui.pages.tradeoffs import TradeoffsPage

        saved, page = self.state.saved_plan, self.pages["Trade-offs"]
        if saved is None or self.state.facts is None or self._plan_shown is saved:
            return
        assert isinstance(page, TradeoffsPage)
        self._plan_shown = saved
        page.show_saved_plan(saved)

    def read_facts_again(self) -> None:
        """Back to Inspect, reading the server again (the facts shown are out of date)."""
        inspect = self.pages["Inspect"]
        for _ in self.pages:  # Back, page by page, as the person would
            if self.currentPage() is inspect:
                break
            self.back()
        if self.currentPage() is inspect:
            inspect.start()  # type: ignore[attr-defined]

    # -- the recommendation -----------------------------------------------------------------
    def _wire_recommendation(self) -> None:
        """The Recommendation page plans as Trade-offs starts and previews as Preview does."""
        from app.ui.pages.recommend import RecommendPage

        rec, tradeoffs, preview = (
            self.pages[t] for t in ("Recommendation", "Trade-offs", "Preview")
        )
        assert isinstance(rec, RecommendPage)
        rec.ensure_plan = tradeoffs.ensure_plan  # type: ignore[attr-defined]
        rec.build_preview = preview.initializePage
        preview.completeChanged.connect(rec.sync)
        rec.go.connect(self._on_recommendation_go)
        self.currentIdChanged.connect(self._on_current_id_changed)
        apply = self.pages["Apply"]
        apply.consent.toggled.connect(self.state.give_consent)  # type: ignore[attr-defined]

    def _on_current_id_changed(self, _page_id: int) -> None:
        rec = self.pages["Recommendation"]
        if self.currentPage() is rec:
            rec.refresh()  # type: ignore[attr-defined]

    def _on_recommendation_go(self, route: str) -> None:
        """Apply this (on to Apply, applying at once), Adjust the trade-offs, or Preview."""
        rec, apply = self.pages["Recommendation"], self.pages["Apply"]
        rec.route = route  # type: ignore[attr-defined]
        try:
            self.next()
        finally:
            rec.route = ""  # type: ignore[attr-defined]
        button = apply.apply_button  # type: ignore[attr-defined]
        if route == "apply" and self.currentPage() is apply and button.isEnabled():
            button.click()  # the consent was given on the Recommendation page

    # -- jobs on the target -----------------------------------------------------------------
    def _on_apply_seen(self, item: object) -> None:
        """Keep this computer's record of the job: started, and the last state seen."""
        import logging

        from app.flows.apply import JobStatus, JobStep
        from app.ui import jobrecords

        try:
            folder = jobrecords.records_dir()
            if isinstance(item, JobStep):
                target = self.state.target.label if self.state.target is not None else "?"
                profile = self.pages["Connect"].profiles.values()  # type: ignore[attr-defined]
                jobrecords.note_step(folder, item, target, profile)
            elif isinstance(item, JobStatus):
                if item.final:  # a consent is for one apply: the next one asks again
                    self.state.give_consent(False)
                    self.pages["Apply"].consent.setChecked(False)  # type: ignore[attr-defined]
                jobrecords.note_status(folder, item)
                self.pages["Connect"].show_unfinished_jobs()  # type: ignore[attr-defined]
        except OSError:
            # The job goes on regardless; only the offer to reconnect later is lost.
            logging.getLogger(__name__).warning("could not record the job", exc_info=True)

    def _on_reconnect_ready(self, job_id: str) -> None:
        """The reconnect passed: on to the Apply page, following the job."""
        self.next()
        apply = self.currentPage()
        if apply is self.pages["Apply"]:
            apply.show_job(job_id)  # type: ignore[attr-defined]

    def done(self, result: int) -> None:
        """Remember the window's place; stop every task and close the connection.

        A check or an inspection still running is cancelled and waited for (no worker's
        thread may outlive its window), and what it opened is closed.
        """
        QSettings().setValue("window/geometry", self.saveGeometry())
        self.pages["Connect"].cancel_check()  # type: ignore[attr-defined]
        if self.exercises_dialog is not None:
            self.exercises_dialog.done(0)  # type: ignore[attr-defined] # its exercise ends first
        self.state.stop_hosts(15000)
        # Said on the Connect page and in the Exercises window: a practice server this
        # window started stops with it (one started by innotune practice start stays).
        self.state.stop_practice()
        super().done(result)

    def about_text(self) -> str:
        return (
            f"<h3>{APP_NAME} {__version__}</h3>"
            "<p>Tunes MySQL and MariaDB write performance on a Linux host, over SSH or on "
            "this computer: it inspects, explains each trade-off, previews the exact changes, "
            "applies them with a rollback snapshot, and measures the gain.</p>"
        )

    def _on_custom_button_clicked(self, which: int) -> None:
        if which == QWizard.WizardButton.CustomButton1.value:
            from app.ui.glossary import GlossaryDialog

            if self.glossary_dialog is None:
                self.glossary_dialog = GlossaryDialog(self)
            self.glossary_dialog.show()
            self.glossary_dialog.raise_()
        elif which == QWizard.WizardButton.CustomButton2.value:
            from app.ui.exercises import ExercisesDialog

            if self.exercises_dialog is None:
                self.state.note_practice()  # the exercises may start it
                self.exercises_dialog = ExercisesDialog(self)
            self.exercises_dialog.show()
            self.exercises_dialog.raise_()
        elif which == QWizard.WizardButton.CustomButton3.value:
            self.show_log()

    def show_log(self) -> None:
        """Open (or bring up, re-read) the dialog with this session's log."""
        from app.ui.logview import LogDialog

        if self.log_dialog is None:
            self.log_dialog = LogDialog(self, self.log_offset)
        else:
            self.log_dialog.load()  # type: ignore[attr-defined]
        self.log_dialog.show()
        self.log_dialog.raise_()

    def _on_help_requested(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle(f"About {APP_NAME}")
        box.setText(self.about_text())
        box.setObjectName("about_box")
        box.open()
