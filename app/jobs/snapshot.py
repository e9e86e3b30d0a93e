"""Snapshots: everything an apply will touch, saved on disk before the first change.

A snapshot is a manifest (JSON) holding, for every file InnoTune will create or modify,
its content (base64), owner, mode and sha256, or "did not exist"; the current value of
every dynamic variable, sysfs file and sysctl key it will set; and how to restart and
health-check the server (so a rollback started later, by another process, needs nothing
else). It is stored twice (house style: never only in memory):

* on the target, in ``/var/lib/innotune/snapshots/<id>/`` (directory mode 0700, files
  0600, root-owned): ``manifest.json`` and ``manifest.sha256``. The job on the target
  restores from this copy and verifies both checksums first;
* on this computer, in ``<data dir>/snapshots/<host>/<id>/``. A file that holds a secret
  (a password in an option file) is stored there redacted, with its checksum, and its
  restore always uses the target's copy.

The manifest records the server instance it belongs to (``instance["key"]``: datadir +
option file, see :mod:`app.jobs.history`); the jobs keep the snapshot's state beside it
on the target (``state.json``: applied, kept, rolled-back, superseded, ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from app.describe.actions import Action, ApplyError
from app.domain.words import count, sentence
from app.remote.transport import Transport
from app.targetjob import formats
from app.targetjob.values import active_value

FORMAT = "innotune-snapshot/1"
TARGET_ROOT = formats.SNAPSHOTS_ROOT

# F<mode> <user>:<group>\0<content> for a file, M for a missing one; symlinks followed.
_PROBE = (
    'if [ -e "$1" ]; then printf "F%s\\000" "$(stat -L -c "%a %U:%G" -- "$1")"; cat -- "$1"; '
    "else printf M; fi"
)


class SnapshotError(ApplyError):
    """A snapshot is missing, corrupt or cannot be written; nothing is restored from it."""


def sha256(data: bytes) -> str:
    """Hex sha256."""
    return hashlib.sha256(data).hexdigest()


def new_id() -> str:
    """A sortable, unique id: UTC time plus random hex, e.g. ``20261122T112455Z-3fa9c1``."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class SavedFile:
    """A file as it was: content and attributes, or that it did not exist."""

    path: str
    existed: bool
    sha256: str | None  # None when it did not exist ("did not exist" in the manifest text)
    mode: str = ""
    owner: str = ""
    purpose: str = ""
    content_b64: str = ""
    redacted: bool = False

    @property
    def content(self) -> bytes | None:
        """The saved bytes (None: did not exist)."""
        if not self.existed:
            return None
        if self.redacted:
            raise SnapshotError(
                f"The local copy of {self.path} is redacted (it holds a secret).",
                "Restore from the target's copy of the snapshot.",
            )
        return base64.b64decode(self.content_b64)


@dataclass(frozen=True)
class SavedValue:
    """A setting's value before the change: dynamic variable, sysfs file or sysctl key."""

    kind: str
    key: str
    value: str | None  # None: missing (not supported on this host)
    path: str | None = None
    device: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """The manifest. ``how`` says how to restart and health-check the server."""

    id: str
    created: str
    target: str
    instance: dict[str, Any]
    files: tuple[SavedFile, ...]
    values: tuple[SavedValue, ...]
    how: dict[str, Any] = field(default_factory=dict)
    actions: tuple[dict[str, Any], ...] = ()
    plan: str | None = None  # the plan's JSON, when there was one
    format: str = FORMAT
    taken: float = 0.0  # time.time() when taken: orders snapshots taken in the same second

    def to_json(self) -> str:
        """The manifest text (stable key order, so its checksum is reproducible)."""
        doc = asdict(self)
        return json.dumps(doc, sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        """Parse a manifest."""
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise SnapshotError(f"Not an InnoTune snapshot manifest (format {doc.get('format')}).")
        return cls(
            id=doc["id"],
            created=doc["created"],
            target=doc["target"],
            instance=doc.get("instance") or {},
            files=tuple(SavedFile(**f) for f in doc["files"]),
            values=tuple(SavedValue(**v) for v in doc["values"]),
            how=doc.get("how") or {},
            actions=tuple(doc.get("actions") or ()),
            plan=doc.get("plan"),
            taken=float(doc.get("taken") or 0.0),
        )

    def redacted(self) -> Snapshot:
        """The copy kept on this computer: secret-holding files replaced by their checksum."""
        return replace(
            self,
            files=tuple(
                replace(f, content_b64="", redacted=True) if _holds_secret(f) else f
                for f in self.files
            ),
        )

    def verify(self) -> None:
        """Every saved file matches its checksum (redacted ones excepted).

        Raises:
            SnapshotError: a file's content does not match its recorded sha256.
        """
        for f in self.files:
            if f.existed and not f.redacted and sha256(f.content or b"") != f.sha256:
                raise SnapshotError(
                    f"Snapshot {self.id} is corrupt: the saved {f.path} does not match its "
                    "checksum.",
                    "Nothing was restored. Use another snapshot, or restore by hand.",
                )

    def summary(self) -> str:
        """One line for lists."""
        created = [f.path for f in self.files if not f.existed]
        changed = [f.path for f in self.files if f.existed]
        parts = []
        if changed:
            parts.append("files " + ", ".join(changed))
        if created:
            parts.append("new " + ", ".join(created))
        if self.values:
            parts.append(count(len(self.values), "value"))
        return f"{self.id}  {self.created}  {self.target}  " + ("; ".join(parts) or "empty")


def _holds_secret(saved: SavedFile) -> bool:
    if not saved.existed or saved.purpose != "option_file":
        return False
    from app.optionfiles import holds_secrets, parse

    try:
        return holds_secrets(parse(base64.b64decode(saved.content_b64), saved.path))
    except Exception:  # noqa: BLE001 - a file we cannot parse is treated as secret
        return True


def read_state(transport: Transport, path: str, *, sudo: bool) -> tuple[bytes | None, str, str]:
    """(content or None, mode, owner) of ``path`` on the target.

    Raises:
        SnapshotError: the file exists but cannot be read.
    """
    result = transport.run(["sh", "-c", _PROBE, "sh", path], sudo=sudo)
    if not result.ok:
        raise SnapshotError(
            sentence(
                f"Cannot read {path} for the snapshot: {result.err.strip() or result.exit_status}"
            ),
            "Nothing was changed. Give InnoTune sudo rights on the host.",
        )
    if result.stdout.startswith(b"M"):
        return None, "", ""
    head, _, body = result.stdout[1:].partition(b"\0")
    mode, _, owner = head.decode().partition(" ")
    return body, mode.rjust(4, "0"), owner


def _read_value(
    transport: Transport, kind: str, key: str, path: str | None, sudo: bool
) -> str | None:
    if kind == "sysfs" and path:
        result = transport.run(["sh", "-c", 'cat -- "$1" 2>/dev/null', "sh", path], sudo=sudo)
        if not result.ok:
            return None
        return active_value(result.out)
    if kind == "sysctl":
        result = transport.run(["sysctl", "-n", key], sudo=sudo)
        return result.out.strip() if result.ok else None
    return None


def take(
    transport: Transport,
    actions: Sequence[Action],
    *,
    target: str,
    instance: dict[str, Any],
    how: dict[str, Any],
    plan_json: str | None = None,
    sudo: bool = True,
    snapshot_id: str | None = None,
) -> Snapshot:
    """Read, through the transport, everything ``actions`` will touch.

    Files are read now (not taken from the actions), so the snapshot is what is on disk
    when it is taken; the runner then refuses if that differs from what the plan saw.
    Dynamic variables keep the value the applier read from the server.
    """
    files: list[SavedFile] = []
    seen: set[str] = set()
    touched = [(w.path, w.purpose) for a in actions for w in a.files]
    touched += [(path, "persisted") for a in actions for path in a.server_files]
    for path, purpose in touched:
        if path in seen:
            continue
        seen.add(path)
        content, mode, owner = read_state(transport, path, sudo=sudo)
        if content is None:
            files.append(SavedFile(path, False, None, purpose=purpose))
        else:
            files.append(
                SavedFile(
                    path,
                    True,
                    sha256(content),
                    mode,
                    owner,
                    purpose,
                    base64.b64encode(content).decode("ascii"),
                )
            )
    values: list[SavedValue] = []
    for action in actions:
        for v in action.values:
            if v.kind == "dynamic":
                values.append(SavedValue("dynamic", v.key, v.current))
            else:
                now = _read_value(transport, v.kind, v.key, v.path, sudo)
                values.append(SavedValue(v.kind, v.key, now, v.path, v.device))
    taken = time.time()
    return Snapshot(
        id=snapshot_id or new_id(),
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken)),
        taken=taken,
        target=target,
        instance=instance,
        files=tuple(files),
        values=tuple(values),
        how=how,
        actions=tuple(
            {"applier": a.applier, "summary": a.summary, "change_ids": list(a.change_ids)}
            for a in actions
        ),
        plan=plan_json,
    )


# -- the two stores ------------------------------------------------------------------------


def target_dir(snapshot_id: str) -> str:
    """Where the target keeps a snapshot."""
    if "/" in snapshot_id or snapshot_id.startswith("."):
        raise SnapshotError(f"Not a snapshot id: {snapshot_id!r}.")
    return f"{TARGET_ROOT}/{snapshot_id}"


def make_root_dir(transport: Transport, path: str, *, sudo: bool) -> None:
    """Create ``path`` (and parents) as a root-only directory (0700)."""
    result = transport.run(
        ["sh", "-c", 'umask 077 && mkdir -p -- "$1" && chmod 0700 -- "$1"', "sh", path], sudo=sudo
    )
    if not result.ok:
        raise SnapshotError(
            sentence(f"Cannot create {path} on the target: {result.err.strip()}"),
            "Nothing was changed. InnoTune needs root (or sudo) on the host.",
        )


def store_on_target(transport: Transport, snapshot: Snapshot, *, sudo: bool) -> str:
    """Write the manifest and its checksum to the target's root-only directory; the dir."""
    snapshot.verify()
    directory = target_dir(snapshot.id)
    make_root_dir(transport, directory, sudo=sudo)
    text = snapshot.to_json().encode()
    transport.write_file_atomic(
        f"{directory}/manifest.json", text, sudo=sudo, mode="0600", owner="root:root"
    )
    transport.write_file_atomic(
        f"{directory}/manifest.sha256",
        f"{sha256(text)}  manifest.json\n".encode(),
        sudo=sudo,
        mode="0600",
        owner="root:root",
    )
    back = transport.run(["cat", f"{directory}/manifest.json"], sudo=sudo)
    if not back.ok or back.stdout != text:
        raise SnapshotError(
            f"The snapshot in {directory} does not read back as written.",
            "Nothing was changed. Check the disk space under /var/lib on the host.",
        )
    return directory


def load_from_target(transport: Transport, snapshot_id: str, *, sudo: bool) -> Snapshot:
    """Read and verify the target's copy.

    Raises:
        SnapshotError: missing, or the manifest or a file does not match its checksum.
    """
    directory = target_dir(snapshot_id)
    text = transport.run(["cat", f"{directory}/manifest.json"], sudo=sudo)
    recorded = transport.run(["cat", f"{directory}/manifest.sha256"], sudo=sudo)
    if not text.ok or not recorded.ok:
        raise SnapshotError(
            f"Snapshot {snapshot_id} is missing on the target ({directory}).",
            "Nothing was restored. `innotune snapshots TARGET` lists the ones there.",
        )
    if sha256(text.stdout) != (recorded.out.split() or [""])[0]:
        raise SnapshotError(
            f"Snapshot {snapshot_id} on the target is corrupt: manifest.json does not match "
            "manifest.sha256.",
            "Nothing was restored. Use another snapshot, or restore by hand.",
        )
    snapshot = Snapshot.from_json(text.out)
    snapshot.verify()
    return snapshot


def list_on_target(transport: Transport, *, sudo: bool) -> list[Snapshot]:
    """Every snapshot on the target, oldest first (unreadable ones skipped)."""
    script = (
        'for d in "$1"/*/; do [ -f "$d/manifest.json" ] || continue; '
        'cat "$d/manifest.json"; printf "\\000"; done; true'
    )
    result = transport.run(["sh", "-c", script, "sh", TARGET_ROOT], sudo=sudo)
    found = []
    for chunk in result.stdout.split(b"\0"):
        if chunk.strip():
            try:
                found.append(Snapshot.from_json(chunk.decode("utf-8", "replace")))
            except (ValueError, KeyError, TypeError, SnapshotError):
                continue
    return sorted(found, key=lambda s: s.id)


def store_locally(snapshot: Snapshot, directory: Path) -> Path:
    """Write the redacted copy to ``directory/<id>/``; the manifest's path."""
    local = snapshot.redacted()
    folder = Path(directory) / snapshot.id
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.chmod(0o700)
    text = local.to_json().encode()
    manifest = folder / "manifest.json"
    tmp = folder / ".manifest.json.tmp"
    tmp.write_bytes(text)
    tmp.chmod(0o600)
    tmp.replace(manifest)
    (folder / "manifest.sha256").write_text(f"{sha256(text)}  manifest.json\n")
    return manifest


def store_bench_locally(directory: Path, snapshot_id: str, label: str, report_json: str) -> Path:
    """Keep a benchmark result beside the snapshot it belongs to (``bench-<label>.json``).

    "before" is the server as the snapshot found it, "after" with the changes; a run after a
    rollback is stored as "after-rollback", so each state can be compared later.
    """
    return _store_beside(directory, snapshot_id, "bench", label, report_json)


def store_watch_locally(directory: Path, snapshot_id: str, label: str, watch_json: str) -> Path:
    """Keep a watch of the server's own workload beside its snapshot (``watch-<label>.json``).

    In the form ``innotune watch --out`` saves, so ``--compare`` reads it.
    """
    return _store_beside(directory, snapshot_id, "watch", label, watch_json)


def _store_beside(directory: Path, snapshot_id: str, kind: str, label: str, text: str) -> Path:
    folder = Path(directory) / snapshot_id
    if not (folder / "manifest.json").exists():
        raise SnapshotError(f"Snapshot {snapshot_id} is not on this computer ({folder}).")
    safe = "".join(ch for ch in label if ch.isalnum() or ch in "-_") or "run"
    path = folder / f"{kind}-{safe}.json"
    tmp = folder / f".{kind}-{safe}.json.tmp"
    tmp.write_text(text)
    tmp.chmod(0o600)
    tmp.replace(path)
    return path


def load_bench_locally(directory: Path, snapshot_id: str) -> dict[str, str]:
    """The benchmark results kept with a snapshot: label → JSON text."""
    folder = Path(directory) / snapshot_id
    return {
        p.stem.removeprefix("bench-"): p.read_text() for p in sorted(folder.glob("bench-*.json"))
    }


def load_locally(directory: Path, snapshot_id: str) -> Snapshot:
    """Read and verify the local copy.

    Raises:
        SnapshotError: missing or corrupt.
    """
    folder = Path(directory) / snapshot_id
    try:
        text = (folder / "manifest.json").read_bytes()
        recorded = (folder / "manifest.sha256").read_text().split()[0]
    except (OSError, IndexError):
        raise SnapshotError(f"Snapshot {snapshot_id} is not on this computer ({folder}).") from None
    if sha256(text) != recorded:
        raise SnapshotError(
            f"The local copy of snapshot {snapshot_id} is corrupt (checksum mismatch).",
            "Nothing was restored.",
        )
    snapshot = Snapshot.from_json(text.decode())
    snapshot.verify()
    return snapshot


def list_locally(directory: Path) -> list[Snapshot]:
    """Snapshots kept on this computer for one host, oldest first."""
    found = []
    base = Path(directory)
    if not base.is_dir():
        return []
    for folder in sorted(base.iterdir()):
        try:
            found.append(load_locally(base, folder.name))
        except SnapshotError:
            continue
    return found
