"""The snapshots' record on the target: their states, retention, locks, manifests.

Each snapshot directory holds, beside its manifest, a ``state.json`` the jobs keep up to
date: ``applying``, ``awaiting-confirm``, ``applied``, ``kept`` (confirmed), ``rolled-back``,
``superseded`` (a restore of an older snapshot of the same instance undid it too),
``refused`` (nothing was changed) or ``failed-rollback``. Snapshots made before the file
existed get theirs from the jobs that ran them.

Standard library only, Python 3.7+: this module runs on the target (and the client uses
its pure functions on the records it lists).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
from typing import Any

from . import formats
from .errors import JobFailed
from .files import atomic_write, load_json, read_or_none, sha256
from .formats import FINAL, IN_FORCE, JOBS_ROOT, SNAPSHOTS_ROOT, SPENT, now_iso

LOCK_DIR = formats.LOCK_DIR  # a module attribute, so tests can point it elsewhere


def instance_key(manifest: dict[str, Any]) -> str:
    """The identity of the manifest's server instance (datadir + option file), or ``""``."""
    return str((manifest.get("instance") or {}).get("key") or "")


def lock_key(manifest: dict[str, Any], how: dict[str, Any]) -> str:
    """What the per-instance lock is named after: its identity, else (old) its socket."""
    return instance_key(manifest) or str(how.get("socket") or how.get("markers") or "host")


def order_key(manifest: dict[str, Any]) -> tuple[str, float, str]:
    """Oldest first: the id's second, then the time it was taken (same second), then the id."""
    ident = str(manifest.get("id") or "")
    return (ident[:16], float(manifest.get("taken") or 0.0), ident)


def _legacy_state(job_state: dict[str, Any] | None) -> str:
    """The state of a snapshot made before ``state.json`` existed, from its apply job."""
    name = str((job_state or {}).get("state") or "")
    if name in ("running", "awaiting-confirm"):
        return "applying"
    return name if name in FINAL else "unknown"


def read_records(
    snapshots_root: str = SNAPSHOTS_ROOT, jobs_root: str = JOBS_ROOT, contents: bool = False
) -> list[dict[str, Any]]:
    """Every snapshot on this host with its state, oldest first (unreadable ones skipped).

    Each record: ``id``, ``manifest`` (file contents left out unless ``contents``),
    ``state``, ``updated``, ``by`` (the job that set it), ``superseded_by``.
    """
    records = []
    try:
        names = sorted(os.listdir(snapshots_root))
    except OSError:
        return []
    restores: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(os.listdir(jobs_root)) if os.path.isdir(jobs_root) else []:
        bundle = load_json(os.path.join(jobs_root, name, "bundle.json"))
        if isinstance(bundle, dict) and bundle.get("mode") == "restore":
            done = load_json(os.path.join(jobs_root, name, "state.json")) or {}
            restores.setdefault(str(bundle.get("snapshot_id")), []).append(
                (name, str(done.get("state") or ""))
            )
    for name in names:
        directory = os.path.join(snapshots_root, name)
        manifest = load_json(os.path.join(directory, "manifest.json"))
        if not isinstance(manifest, dict) or "id" not in manifest:
            continue
        if not contents:
            for entry in manifest.get("files") or []:
                entry["content_b64"] = ""
        doc = load_json(os.path.join(directory, "state.json"))
        if isinstance(doc, dict) and doc.get("state"):
            state = dict(doc)
        else:
            state = {"state": _legacy_state(load_json(os.path.join(jobs_root, name, "state.json")))}
            if any(s == "rolled-back" for _job, s in restores.get(name, [])):
                state["state"] = "rolled-back"
        records.append(
            {
                "id": manifest["id"],
                "manifest": manifest,
                "state": state["state"],
                "updated": state.get("updated"),
                "by": state.get("by"),
                "superseded_by": state.get("superseded_by"),
            }
        )
    return sorted(records, key=lambda r: order_key(r["manifest"]))


def newer_in_force(records: list[dict[str, Any]], snapshot_id: str) -> list[str]:
    """Snapshots of the same instance taken after ``snapshot_id`` and still in force, newest first.

    Restoring ``snapshot_id`` undoes their changes too (they are restored first).
    """
    by_id = {r["id"]: r for r in records}
    base = by_id.get(snapshot_id)
    if base is None or not instance_key(base["manifest"]):
        return []
    key, at = instance_key(base["manifest"]), order_key(base["manifest"])
    found = [
        r
        for r in records
        if instance_key(r["manifest"]) == key
        and order_key(r["manifest"]) > at
        and r["state"] in IN_FORCE
    ]
    return [r["id"] for r in sorted(found, key=lambda r: order_key(r["manifest"]), reverse=True)]


def prune_choice(
    records: list[dict[str, Any]], keep: int, protect: tuple[str, ...] = ()
) -> list[str]:
    """Which snapshots of ONE instance to remove so at most ``keep`` stay.

    Rolled-back, superseded and refused ones go first, oldest first; then the oldest of
    the others. Never the newest one in force, one whose job still runs, nor ``protect``.
    """
    ordered = sorted(records, key=lambda r: order_key(r["manifest"]))
    excess = len(ordered) - max(1, int(keep))
    if excess <= 0:
        return []
    in_force = [r["id"] for r in ordered if r["state"] in IN_FORCE]
    newest_in_force = in_force[-1] if in_force else None
    candidates = [r for r in ordered if r["state"] in SPENT]
    candidates += [r for r in ordered if r["state"] not in SPENT]
    removed: list[str] = []
    for record in candidates:
        if excess <= 0:
            break
        if (
            record["id"] == newest_in_force
            or record["id"] in protect
            or record["state"] in ("applying", "awaiting-confirm")
        ):
            continue
        removed.append(record["id"])
        excess -= 1
    return removed


def write_snapshot_state(directory: str, state: str, **extra: Any) -> None:
    """Record a snapshot's state in ``directory/state.json`` (atomically)."""
    doc = {"state": state, "updated": now_iso()}
    doc.update({k: v for k, v in extra.items() if v is not None})
    atomic_write(
        os.path.join(directory, "state.json"),
        (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode(),
        0o600,
        "",
    )


def lock_path(key: str) -> str:
    """The lock file of one server instance."""
    return os.path.join(LOCK_DIR, sha256(key.encode())[:16] + ".lock")


def take_lock(key: str) -> Any:
    """Hold the instance's lock (non-blocking); the open file, or None when another job has it.

    A free, empty lock file may be removed by :func:`remove_free_locks` at any time, so a
    lock is only held once the file locked is still the one at the path.
    """
    os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
    path = lock_path(key)
    for _attempt in range(5):
        fh = open(path, "a")  # noqa: SIM115 - held for the job's whole run
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return None
        try:
            same = os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fh
        fh.close()  # removed under us: lock the new file instead
    return None


def remove_free_locks(lock_dir: str | None = None) -> list[str]:
    """Remove the empty lock files no job holds (in ``lock_dir``, else LOCK_DIR); their names."""
    lock_dir = lock_dir or LOCK_DIR
    removed = []
    try:
        names = os.listdir(lock_dir)
    except OSError:
        return []
    for name in names:
        if not name.endswith(".lock"):
            continue
        path = os.path.join(lock_dir, name)
        try:
            fh = open(path, "a")  # noqa: SIM115
        except OSError:
            continue
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            if (
                os.fstat(fh.fileno()).st_size == 0
                and os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino
            ):
                os.unlink(path)  # while holding it: a job that opened it re-checks the path
                removed.append(name)
        except OSError:
            pass
        finally:
            fh.close()
    return removed


def remove_snapshots(
    ids: list[str],
    snapshots_root: str = SNAPSHOTS_ROOT,
    jobs_root: str = JOBS_ROOT,
    spare_job: str | None = None,
) -> None:
    """Remove snapshots and the jobs that ran them (apply, its rescue, restores of them)."""
    import shutil

    gone = set(ids)
    for name in os.listdir(jobs_root) if os.path.isdir(jobs_root) else []:
        if name == spare_job:
            continue
        bundle = load_json(os.path.join(jobs_root, name, "bundle.json")) or {}
        owner = str(bundle.get("snapshot_id") or name.replace("-rescue", ""))
        if owner in gone:
            shutil.rmtree(os.path.join(jobs_root, name), ignore_errors=True)
    for ident in ids:
        if ident and "/" not in ident and not ident.startswith("."):
            shutil.rmtree(os.path.join(snapshots_root, ident), ignore_errors=True)


def prune(
    keep: int,
    key: str | None = None,
    snapshots_root: str = SNAPSHOTS_ROOT,
    jobs_root: str = JOBS_ROOT,
    held: str | None = None,
    protect: tuple[str, ...] = (),
    spare_job: str | None = None,
) -> dict[str, Any]:
    """Keep at most ``keep`` snapshots per instance (``key``: only that one); what was removed.

    An instance whose lock another job holds is left alone (``held``: the caller holds
    that one's lock already). Afterwards the free, empty lock files are removed.
    """
    records = read_records(snapshots_root, jobs_root)
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(instance_key(record["manifest"]), []).append(record)
    removed: list[str] = []
    busy: list[str] = []
    for ident, group in sorted(groups.items()):
        if key is not None and ident != key:
            continue
        choice = prune_choice(group, keep, protect)
        if not choice:
            continue
        lock = None
        if ident and ident != held:
            lock = take_lock(ident)
            if lock is None:
                busy.append(ident)
                continue
        try:
            remove_snapshots(choice, snapshots_root, jobs_root, spare_job)
            removed += choice
        finally:
            if lock is not None:
                lock.close()
    return {"removed": removed, "busy": busy}


def verified_manifest(directory: str) -> dict[str, Any]:
    """A snapshot's manifest, its checksum and every saved file's checked."""
    data = read_or_none(os.path.join(directory, "manifest.json"))
    recorded = read_or_none(os.path.join(directory, "manifest.sha256"))
    if data is None or recorded is None:
        raise JobFailed(
            f"the snapshot in {directory} is missing (manifest.json or manifest.sha256)"
        )
    if sha256(data) != recorded.decode("ascii", "replace").split()[0]:
        raise JobFailed(
            f"the snapshot in {directory} is corrupt: manifest.json does not match its checksum"
        )
    manifest: dict[str, Any] = json.loads(data.decode("utf-8"))
    for entry in manifest["files"]:
        if entry["existed"]:
            content = base64.b64decode(entry["content_b64"])
            if entry.get("redacted") or sha256(content) != entry["sha256"]:
                raise JobFailed(
                    "the snapshot's copy of {} is corrupt or redacted".format(entry["path"])
                )
    return manifest


def merge_manifests(base: dict[str, Any], newer: list[dict[str, Any]]) -> dict[str, Any]:
    """One manifest restoring ``newer`` (newest first) and then ``base``, in one pass.

    For each file and value the oldest saved copy wins (``base``'s, else the oldest newer
    snapshot that touched it); a restart is wanted when any of them wanted one.
    """
    oldest_first = [base, *reversed(newer)]
    files: dict[str, dict[str, Any]] = {}
    values: dict[tuple[str, str, str], dict[str, Any]] = {}
    for manifest in oldest_first:
        for entry in manifest.get("files") or []:
            files.setdefault(entry["path"], entry)
        for value in manifest.get("values") or []:
            values.setdefault(
                (str(value.get("kind")), str(value.get("key")), str(value.get("path"))), value
            )
    merged = dict(base)
    merged["files"] = list(files.values())
    merged["values"] = list(values.values())
    how = dict(base.get("how") or {})
    how["restart_needed"] = any(
        (m.get("how") or {}).get("restart_needed", True) for m in oldest_first
    )
    merged["how"] = how
    return merged
