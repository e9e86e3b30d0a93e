"""The whole wizard on a busy server: its own workload watched before and after, no benchmark.

The sid host (MySQL 9.7) with a steady client of its own (tests/hosts/workload.py) is busy when
it is inspected: Apply leaves "Measure before and after" unticked and ticks the watch instead;
the apply sets innodb_flush_log_at_trx_commit 1 → 2; Verify watches as long again by itself
and shows each figure with its verdict. The change is rolled back at the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.domain.watch import Watch
from app.flows import watching
from app.ui.pages.apply import ApplyPage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.pages.verify import VerifyPage
from tests.hosts.debian_hosts import DebianHost
from tests.hosts.util import need_root, short_watch
from tests.hosts.workload import SteadyWrites
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    WATCH,
    _remove_new_jobs_and_snapshots,
)
from tests.ui.test_whole_flow import _apply_job_done, _connect_and_inspect, _trx


@pytest.mark.parametrize("server_host", ["sid"], indirect=True)
def test_whole_flow_on_a_busy_server_watches_its_own_workload(
    qtbot: QtBot,
    tmp_path: Path,
    server_host: DebianHost,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    short_watch(monkeypatch, WATCH)
    monkeypatch.setattr(watching, "WATCH_SECONDS", 8.0)  # 8 rounds a side decide
    assert _trx(server_host) == "1"
    with SteadyWrites(server_host, 150.0):
        # Five seconds: a commit that waits a second for a disk other work keeps busy (the
        # suite's other sessions) must not make the server read quiet.
        wizard = _connect_and_inspect(qtbot, tmp_path, server_host, sample=5)
        wizard.next()  # the Recommendation
        wizard.next()
        tradeoffs = wizard.currentPage()
        assert isinstance(tradeoffs, TradeoffsPage)
        tradeoffs.sections["crash_loss"].control.setValue(1)  # type: ignore[attr-defined]
        wizard.next()
        qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=120_000)
        wizard.next()
        apply = wizard.currentPage()
        assert isinstance(apply, ApplyPage)
        # Busy: no benchmark by default, its own workload watched instead.
        assert not apply.measure_box.isChecked() and apply.watch_box.isChecked()
        assert apply.measure_note.text().startswith("Not ticked: the server is busy")
        apply.consent.setChecked(True)
        apply.apply_button.click()
        _apply_job_done(qtbot, apply)
        assert apply.status is not None and apply.status.state == "applied"
        before = wizard.state.watch_before
        assert before is not None and before.settings["innodb_flush_log_at_trx_commit"] == "1"
        assert _trx(server_host) == "2"

        # Verify: busy, so it watches by itself, as long as before, and judges.
        wizard.next()
        verify = wizard.currentPage()
        assert isinstance(verify, VerifyPage)
        qtbot.waitUntil(lambda: wizard.state.watch_after is not None, timeout=60_000)
        qtbot.waitUntil(verify.isComplete, timeout=30_000)
        after = wizard.state.watch_after
        assert after.seconds == before.seconds
        panel = verify.watch_panel
        assert panel.verdict("fsyncs_per_commit").startswith("better"), panel.status.text()
        assert panel.verdict("commit_latency_ms"), "MySQL gives commit latency"
        assert "Before:" in panel.status.text() and "After:" in panel.status.text()
        # Both watches are kept beside the apply's snapshot, as `innotune watch --out` saves
        # them, so `--compare` reads them later.
        assert wizard.state.snapshot_dir is not None and wizard.state.snapshot_id is not None
        folder = Path(wizard.state.snapshot_dir) / wizard.state.snapshot_id
        for label, found in (("before", before), ("after", after)):
            kept = Watch.from_json((folder / f"watch-{label}.json").read_text())
            assert kept.to_json() == found.to_json()
            assert oct((folder / f"watch-{label}.json").stat().st_mode & 0o777) == "0o600"

        # Roll the change back from the Apply page, so the host is as it was.
        wizard.back()
        assert wizard.currentPage() is apply
        qtbot.waitUntil(apply.rollback_button.isEnabled, timeout=60_000)
        apply.ask_restore = lambda choice, _id="": True  # type: ignore[method-assign]
        apply.rollback_button.click()
        _apply_job_done(qtbot, apply)
        assert apply.status.state == "rolled-back", apply.state_label.text()
        wizard.done(0)
    assert _trx(server_host) == "1"
