"""Snapshot states, instances and retention: the rules, on records and files in a temp dir.

The flows against real servers are in tests/integration/test_rollback_instances.py; here
each rule is pinned down with its edge cases (same-second ids, the newest in force kept,
a lock file held by another process survives).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.domain.instance import ServerInstance
from app.jobs import history
from app.jobs import snapshot as snap
from app.targetjob import records as job_records

A = history.identity_key("/srv/a/data", "/srv/a/my.cnf")
B = history.identity_key("/var/lib/mysql", None)


def record(ident: str, state: str, key: str = A, taken: float = 0.0) -> history.Record:
    found = snap.Snapshot(
        id=ident,
        created="2026-11-25T05:00:00Z",
        target="local",
        instance={"key": key, "datadir": key.split(";")[0][8:], "socket": f"/run/{key[-6:]}"},
        files=(snap.SavedFile("/etc/x.cnf", False, None, purpose="option_file"),),
        values=(),
        taken=taken,
    )
    return history.Record(found, state)


def shaped(records: list[history.Record]) -> list[dict[str, Any]]:
    return [r.as_targetjob() for r in records]


def test_retention_removes_spent_ones_first_and_never_the_newest_in_force() -> None:
    records = [
        record("20260101T000001Z-000001", "applied"),
        record("20260101T000002Z-000002", "rolled-back"),
        record("20260101T000003Z-000003", "superseded"),
        record("20260101T000004Z-000004", "kept"),
        record("20260101T000005Z-000005", "refused"),
    ]
    assert job_records.prune_choice(shaped(records), 5) == []
    assert job_records.prune_choice(shaped(records), 3) == [
        "20260101T000002Z-000002",
        "20260101T000003Z-000003",
    ]
    # Past the spent ones: the oldest in force goes, the newest in force (…04) never.
    assert job_records.prune_choice(shaped(records), 1) == [
        "20260101T000002Z-000002",
        "20260101T000003Z-000003",
        "20260101T000005Z-000005",
        "20260101T000001Z-000001",
    ]
    running = [record("20260101T000001Z-000001", "applying"), *records[1:3]]
    assert "20260101T000001Z-000001" not in job_records.prune_choice(shaped(running), 1)


def test_snapshots_of_the_same_second_are_ordered_by_the_time_taken() -> None:
    later = record("20260101T000001Z-000000", "applied", taken=2.0)  # sorts first by id
    first = record("20260101T000001Z-ffffff", "applied", taken=1.0)
    assert job_records.newer_in_force(shaped([later, first]), first.id) == [later.id]
    assert job_records.newer_in_force(shaped([later, first]), later.id) == []


def test_older_restore_undoes_newer_ones_of_the_same_instance_only() -> None:
    records = [
        record("20260101T000001Z-000001", "applied"),
        record("20260101T000002Z-000002", "applied", key=B),
        record("20260101T000003Z-000003", "rolled-back"),
        record("20260101T000004Z-000004", "applied"),
        record("20260101T000005Z-000005", "kept"),
    ]
    choice = history.choose_rollback(records, A, "20260101T000001Z-000001")
    assert [r.id for r in choice.undo] == ["20260101T000005Z-000005", "20260101T000004Z-000004"]
    assert choice.caveats == ()
    assert "This also undoes 2 later changes" in choice.text()
    # Without an id: A's newest in force; B's own.
    assert history.choose_rollback(records, A, None).record.id == "20260101T000005Z-000005"
    assert history.choose_rollback(records, B, None).record.id == "20260101T000002Z-000002"


def test_rollback_caveats_nothing_in_force_and_no_instance_chosen() -> None:
    records = [
        record("20260101T000001Z-000001", "rolled-back"),
        record("20260101T000002Z-000002", "applied", key=B),
    ]
    with pytest.raises(history.RollbackRefused, match="No snapshot of this server is in force"):
        history.choose_rollback(records, A, None)
    with pytest.raises(history.RollbackRefused, match="Which server"):
        history.choose_rollback(records, None, None)
    other = history.choose_rollback(records, A, "20260101T000002Z-000002")
    assert any("another server instance" in c for c in other.caveats)
    spent = history.choose_rollback(records, A, "20260101T000001Z-000001")
    assert any("is rolled back" in c for c in spent.caveats)


def test_an_instance_is_found_running_or_by_what_its_snapshots_recorded() -> None:
    running = ServerInstance(pid=42, binary="mariadbd", argv=(), sockets=("/run/a.sock",))
    records = [record("20260101T000001Z-000001", "applied", key=B)]
    ident = {"key": A, "datadir": "/srv/a/data"}
    assert history.instance_for(records, [(running, ident)], "/run/a.sock") == A
    assert history.instance_for(records, [(running, ident)], "42") == A
    assert history.instance_for(records, [(running, ident)], None) == A
    # B is not running: its recorded socket still names it.
    assert history.instance_for(records, [(running, ident)], f"/run/{B[-6:]}") == B
    assert history.instance_for(records, [], None) == B
    with pytest.raises(history.RollbackRefused, match="No server instance matches"):
        history.instance_for(records, [(running, ident)], "/nowhere.sock")


def test_merged_manifest_keeps_the_oldest_copy_of_each_file_and_value() -> None:
    base = {
        "id": "1",
        "how": {"restart_needed": False},
        "files": [{"path": "/etc/a", "existed": False}],
        "values": [{"kind": "dynamic", "key": "x", "value": "1", "path": None}],
    }
    newer = {
        "id": "2",
        "how": {"restart_needed": True},
        "files": [
            {"path": "/etc/a", "existed": True, "content_b64": "YQ=="},
            {"path": "/etc/b", "existed": False},
        ],
        "values": [
            {"kind": "dynamic", "key": "x", "value": "2", "path": None},
            {"kind": "dynamic", "key": "y", "value": "5", "path": None},
        ],
    }
    merged = job_records.merge_manifests(base, [newer])
    assert {f["path"]: f["existed"] for f in merged["files"]} == {"/etc/a": False, "/etc/b": False}
    assert {v["key"]: v["value"] for v in merged["values"]} == {"x": "1", "y": "5"}
    assert merged["how"]["restart_needed"] is True and merged["id"] == "1"


def test_records_on_disk_with_states_legacy_ones_and_pruning(tmp_path: Path) -> None:
    snaps, jobs = tmp_path / "snapshots", tmp_path / "jobs"
    for n, state in enumerate(["rolled-back", "applied", None, "applied"], start=1):
        ident = f"20260101T00000{n}Z-00000{n}"
        (snaps / ident).mkdir(parents=True)
        manifest = {"id": ident, "files": [], "values": [], "instance": {"key": A}}
        (snaps / ident / "manifest.json").write_text(json.dumps(manifest))
        if state:
            job_records.write_snapshot_state(str(snaps / ident), state, by="job")
        (jobs / ident).mkdir(parents=True)
        (jobs / ident / "bundle.json").write_text(json.dumps({"snapshot_id": ident}))
    # The third one predates state.json: its apply job says applied, a restore rolled it back.
    (jobs / "20260101T000003Z-000003" / "state.json").write_text('{"state": "applied"}')
    (jobs / "x-restore").mkdir()
    (jobs / "x-restore" / "bundle.json").write_text(
        json.dumps({"mode": "restore", "snapshot_id": "20260101T000003Z-000003"})
    )
    (jobs / "x-restore" / "state.json").write_text('{"state": "rolled-back"}')
    found = job_records.read_records(str(snaps), str(jobs))
    assert [r["state"] for r in found] == ["rolled-back", "applied", "rolled-back", "applied"]

    done = job_records.prune(2, A, str(snaps), str(jobs))
    assert done["removed"] == ["20260101T000001Z-000001", "20260101T000003Z-000003"]
    assert sorted(os.listdir(snaps)) == ["20260101T000002Z-000002", "20260101T000004Z-000004"]
    assert sorted(os.listdir(jobs)) == ["20260101T000002Z-000002", "20260101T000004Z-000004"]


def test_free_empty_lock_files_go_and_a_held_one_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_records, "LOCK_DIR", str(tmp_path))
    held = job_records.take_lock("instance a")
    assert held is not None
    assert job_records.take_lock("instance a") is None  # one job per instance
    free = job_records.lock_path("instance b")
    Path(free).touch()
    assert job_records.remove_free_locks(str(tmp_path)) == [os.path.basename(free)]
    assert os.path.exists(job_records.lock_path("instance a"))
    held.close()
    # Once its file is gone, the next job creates a new one and holds it.
    again = job_records.take_lock("instance a")
    assert again is not None
    with open(job_records.lock_path("instance a")) as fh:
        with pytest.raises(OSError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    again.close()
    assert job_records.remove_free_locks(str(tmp_path)) == [
        os.path.basename(job_records.lock_path("instance a"))
    ]
    assert os.listdir(tmp_path) == []


def test_keep_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(history.KEEP_ENV, raising=False)
    assert history.keep_default() == 20
    monkeypatch.setenv(history.KEEP_ENV, "5")
    assert history.keep_default() == 5
    monkeypatch.setenv(history.KEEP_ENV, "0")
    assert history.keep_default() == 20
