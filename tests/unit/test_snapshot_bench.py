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


def test_a_watch_is_kept_beside_the_snapshot_as_watch_out_saves_it(tmp_path: Path) -> None:
    from app.jobs.snapshot import store_watch_locally
    from app.ui.pages.apply_state import store_watch

    (tmp_path / "s3").mkdir()
    (tmp_path / "s3" / "manifest.json").write_text("{}")
    kept = store_watch_locally(tmp_path, "s3", "before", '{"w": 1}')
    assert kept.name == "watch-before.json" and kept.read_text() == '{"w": 1}'
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert load_bench_locally(tmp_path, "s3") == {}  # a watch is not a benchmark result
    with pytest.raises(SnapshotError):
        store_watch_locally(tmp_path, "missing", "before", "{}")

    class Found:
        def to_json(self) -> str:
            return '{"w": 2}'

    state = WizardState()
    store_watch(state, "after", Found())  # type: ignore[arg-type]  # no snapshot: nothing kept
    state.snapshot_id, state.snapshot_dir = "s3", tmp_path
    store_watch(state, "after", Found())  # type: ignore[arg-type]
    assert (tmp_path / "s3" / "watch-after.json").read_text() == '{"w": 2}\n'
    # The real watch's form, read back, is checked end to end in tests/ui/test_whole_flow_busy.py.
