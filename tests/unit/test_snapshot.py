"""Snapshot manifests (no host needed); the job's own helpers: tests/unit/test_targetjob.py."""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path

import pytest

from app.jobs import snapshot as snap


def _saved(path: str, data: bytes, purpose: str = "option_file") -> snap.SavedFile:
    return snap.SavedFile(
        path, True, snap.sha256(data), "0644", "root:root", purpose, base64.b64encode(data).decode()
    )


def _snapshot() -> snap.Snapshot:
    return snap.Snapshot(
        id="20261122T000000Z-abcdef",
        created="2026-11-22T00:00:00Z",
        target="db1",
        instance={"label": "pid 1"},
        files=(
            _saved("/etc/mysql/conf.d/a.cnf", b"[mysqld]\nmax_connections = 10\n"),
            _saved("/etc/mysql/debian.cnf", b"[client]\nuser = x\npassword = s3cret\n"),
            snap.SavedFile("/etc/mysql/conf.d/99-innotune.cnf", False, None, purpose="option_file"),
        ),
        values=(
            snap.SavedValue(
                "sysfs", "queue/scheduler", "none", "/sys/block/sda/queue/scheduler", "sda"
            ),
        ),
        how={"restart": ["systemctl", "restart", "mariadb"]},
    )


def test_manifest_round_trips_and_local_copy_redacts_secrets(tmp_path: Path) -> None:
    original = _snapshot()
    assert snap.Snapshot.from_json(original.to_json()) == original
    manifest = snap.store_locally(original, tmp_path)
    text = manifest.read_text()
    assert "s3cret" not in text and base64.b64encode(b"s3cret").decode() not in text
    local = snap.load_locally(tmp_path, original.id)
    secret = local.files[1]
    assert secret.redacted and secret.sha256 == original.files[1].sha256
    with pytest.raises(snap.SnapshotError, match="redacted"):
        _ = secret.content
    assert local.files[0] == original.files[0]  # no secret: kept whole
    assert manifest.parent.stat().st_mode & 0o777 == 0o700


def test_corrupt_or_missing_local_copy_is_refused(tmp_path: Path) -> None:
    original = _snapshot()
    manifest = snap.store_locally(original, tmp_path)
    manifest.write_text(manifest.read_text().replace('"db1"', '"db2"'))
    with pytest.raises(snap.SnapshotError, match="corrupt"):
        snap.load_locally(tmp_path, original.id)
    with pytest.raises(snap.SnapshotError, match="not on this computer"):
        snap.load_locally(tmp_path, "20990101T000000Z-000000")
    tampered = dataclasses.replace(
        original, files=(dataclasses.replace(original.files[0], sha256="0" * 64),)
    )
    with pytest.raises(snap.SnapshotError, match="does not match its checksum"):
        tampered.verify()


def test_target_dir_rejects_path_tricks() -> None:
    for bad in ("../etc", "a/b", ".hidden"):
        with pytest.raises(snap.SnapshotError):
            snap.target_dir(bad)
