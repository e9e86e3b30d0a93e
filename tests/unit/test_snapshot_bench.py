"""Benchmark results are kept beside the snapshot they belong to."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.jobs.snapshot import SnapshotError, load_bench_locally, store_bench_locally
from app.ui.pages.apply_state import keep_bench
from app.ui.state import WizardState


def test_results_stored_beside_the_snapshot(tmp_path: Path) -> None:
    folder = tmp_path / "snap-1"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}")
    store_bench_locally(tmp_path, "snap-1", "before", '{"x": 1}')
    store_bench_locally(tmp_path, "snap-1", "after-rollback", '{"x": 3}')
    assert load_bench_locally(tmp_path, "snap-1") == {
        "after-rollback": '{"x": 3}',
        "before": '{"x": 1}',
    }
    assert oct((folder / "bench-before.json").stat().st_mode & 0o777) == "0o600"
    with pytest.raises(SnapshotError):
        store_bench_locally(tmp_path, "missing", "before", "{}")


def test_the_wizard_keeps_a_run_only_when_a_snapshot_exists(tmp_path: Path) -> None:
    state = WizardState()
    keep_bench(state, "after", {"any": "report"})  # no snapshot yet: nothing, no error
    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / "manifest.json").write_text("{}")
    state.snapshot_id, state.snapshot_dir = "s2", tmp_path
    keep_bench(state, "after", {"commits": 5})
    assert '"commits": 5' in load_bench_locally(tmp_path, "s2")["after"]
