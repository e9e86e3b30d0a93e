"""The Apply page after a reconnect says which job it follows; its errors link to the log.

Both against a real private server: a real job waiting for its confirmation, followed by a
second page as after a reconnect; and a real refusal (the option file the plan would create
appeared behind InnoTune's back).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.practice.server import PrivateServer
from app.ui import jobrecords
from app.ui.logview import LOG_LINK, LogDialog
from app.ui.pages.apply import ApplyPage
from tests.hosts.util import need_root
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
    drop_in,
    restart_argv,
    tree,
)
from tests.ui.test_apply_page import open_apply_page
from tests.ui.test_apply_page_cancel import TRX
from tests.ui.test_log_details import log_file  # noqa: F401 - the log file fixture
from tests.ui.test_preview_page import _state


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's own data directory (job records, local snapshot copies)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    yield tmp_path / "xdg"


def test_after_a_reconnect_the_summary_describes_the_job_followed(
    qtbot: QtBot, private_server: PrivateServer, xdg: Path
) -> None:
    need_root()
    server = private_server
    first = open_apply_page(qtbot, server)
    first.confirm_spin.setValue(600)  # the job waits on the target for a Keep
    first.consent.setChecked(True)
    first.apply_button.click()
    qtbot.waitUntil(
        lambda: first.status is not None and first.status.state == "awaiting-confirm",
        timeout=120_000,
    )
    job_id = first.status.job_id  # type: ignore[union-attr]
    written = [w.path for w in first.state.preview.option_files]  # type: ignore[union-attr]
    start = first.status.steps[0]  # type: ignore[union-attr]
    # The wizard records the job from its first step (as MainWizard does with `seen`).
    jobrecords.note_step(jobrecords.records_dir(), start, "practice server 10.11", {})

    # A page as a new wizard shows it after Reconnect: no preview, only the job's id.
    state = _state(server)
    state.mode, state.preview, state.plan = "reconnect", None, None
    page = ApplyPage(state)
    qtbot.addWidget(page)
    page.show()
    page.initializePage()  # reads the snapshot list; show_job follows right after it
    page.show_job(job_id)
    assert job_id in page.summary.text() and "No preview" not in page.summary.text()
    qtbot.waitUntil(
        lambda: page.status is not None and page.status.state == "awaiting-confirm",
        timeout=120_000,
    )
    text = page.summary.text()
    assert f"Reconnected to job {job_id}: an apply on practice server 10.11" in text, text
    assert f"started {start.time.replace('T', ' ')}" in text, text
    assert "innodb_flush_log_at_trx_commit=2" in text, text
    assert written and all(path in text for path in written), text
    assert "rolls back unless kept within 600 s" in text and "No restart." in text, text
    # Keep and Cancel act on the waiting job, so they are shown (hidden without a preview).
    qtbot.waitUntil(page.cancel_button.isEnabled, timeout=60_000)
    assert page.keep_button.isVisible() and page.keep_button.isEnabled()
    assert page.cancel_button.isVisible()
    page.cancel_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status.state == "rolled-back" and page.status.cancelled
    assert server.query(TRX).split()[-1] == "1"
    assert LOG_LINK not in page.state_label.text()  # a cancel asked for is no error
    # Entering the page again keeps the description (the wizard may re-initialize it).
    page.initializePage()
    assert "innodb_flush_log_at_trx_commit=2" in page.summary.text()


def test_an_apply_error_links_to_the_details_in_the_log(
    qtbot: QtBot,
    private_server: PrivateServer,
    xdg: Path,
    log_file: Path,  # noqa: F811
) -> None:
    need_root()
    server = private_server
    page = open_apply_page(qtbot, server)
    assert page.state.preview is not None
    [drop_in] = page.state.preview.option_files
    assert not Path(drop_in.path).exists()
    # Someone else creates the file the plan would create: the apply must refuse.
    Path(drop_in.path).write_text("[mysqld]\n# written behind InnoTune's back\n")
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: LOG_LINK in page.state_label.text(), timeout=120_000)
    shown = page.state_label.text()
    assert "Details…" in shown
    assert page.status is None or page.status.state == "refused", shown
    qtbot.waitUntil(page.apply_button.isEnabled, timeout=60_000)
    assert server.query(TRX).split()[-1] == "1"  # nothing was applied

    page.state_label.linkActivated.emit(LOG_LINK)
    dialog = page.findChild(LogDialog)
    assert isinstance(dialog, LogDialog)
    qtbot.waitUntil(dialog.isVisible)
    logged = dialog.text.toPlainText()
    assert drop_in.path in logged, logged  # the refusal, with the file it is about
    dialog.accept()

    # Success afterwards shows no link.
    Path(drop_in.path).unlink()
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status.state == "applied", page.state_label.text()
    assert LOG_LINK not in page.state_label.text()


def test_a_job_that_rolls_back_links_its_errors_to_the_log(
    qtbot: QtBot,
    private_server: PrivateServer,
    xdg: Path,
    log_file: Path,  # noqa: F811
) -> None:
    need_root()
    server = private_server
    before = tree(server.base / "etc")
    page = open_apply_page(qtbot, server)
    preview = page.state.preview
    assert preview is not None
    # An option the server binary rejects: the job's validation fails, it rolls back.
    bad = drop_in(server, "[mysqld]\ninnotune_no_such_option = 1\n")
    page.state.preview = dataclasses.replace(preview, actions=(bad,), restart_needed=True)
    page.initializePage()
    page.restart_edit.setText(shlex.join(restart_argv(server)))
    page.consent.setChecked(True)
    page.apply_button.click()
    qtbot.waitUntil(lambda: page.status is not None and page.status.final, timeout=120_000)
    assert page.status is not None and page.status.state == "rolled-back", page.status
    shown = page.state_label.text()
    assert LOG_LINK in shown and "innotune_no_such_option" in shown, shown
    page.state_label.linkActivated.emit(LOG_LINK)
    dialog = page.findChild(LogDialog)
    assert isinstance(dialog, LogDialog)
    logged = dialog.text.toPlainText()
    assert f"job {page.status.job_id}: ended rolled-back" in logged, logged
    assert "innotune_no_such_option" in logged, logged
    dialog.accept()
    assert tree(server.base / "etc") == before
