"""The Apply page's progress bar and words follow the job's phases (issue 37).

A benchmark's progress fills the bar; once the apply itself begins (its length unknown) the
bar only shows that it works, never "100%" beside "Taking the snapshot…". A job's words:
the server's log only after a failure, and then only its error lines; a restore that
worked reads as success.
"""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.flows import apply as jobs
from app.ui.pages import apply_tasks as tasks
from app.ui.pages.apply import ApplyPage
from app.ui.pages.apply_texts import outcome_lines
from app.ui.state import WizardState

NOTE = "2026-11-29T08:00:00.123 0 [Note] [MY-010931] [Server] ready for connections."
ERROR = "2026-11-29T08:00:00.456 0 [ERROR] [MY-000067] [Server] unknown variable 'x=1'."


def test_the_bar_follows_the_phases(qtbot: QtBot) -> None:
    page = ApplyPage(WizardState())
    qtbot.addWidget(page)
    page.initializePage()
    bar = page.bench_bar
    page._on_task_progress(1.0)  # "before" measured to its end
    assert bar.text() == "100%"
    page._on_task_say(tasks.APPLYING)
    assert page.state_label.text() == tasks.APPLYING + "…"
    assert bar.maximum() == 0 and "100" not in bar.text()  # busy, no percentage
    page._on_task_progress(0.25)  # "after" begins
    assert bar.maximum() == 1000 and bar.text() == "25%"


def test_the_server_log_is_shown_only_after_a_failure_and_only_its_errors() -> None:
    applied = jobs.JobStatus("j1", "applied", log_lines=[NOTE], snapshot_id="s1", mode="apply")
    assert not any(NOTE in line or "log" in line.lower() for line in outcome_lines(applied))
    failed = jobs.JobStatus(
        "j2", "rolled-back", log_lines=[NOTE, ERROR], errors=["the server did not start"]
    )
    shown = outcome_lines(failed)
    assert f"Server log: {ERROR}" in shown and not any(NOTE in line for line in shown), shown


def test_a_restore_that_worked_reads_as_success() -> None:
    done = jobs.JobStatus("j3-restore", "rolled-back", snapshot_id="s1", mode="restore")
    [line] = outcome_lines(done)
    assert line == "Restored snapshot s1: the old settings are back in force.", line
    broken = jobs.JobStatus("j4-restore", "failed-rollback", snapshot_id="s1", mode="restore")
    assert "did not complete" in outcome_lines(broken)[0]
