"""Which server instance each snapshot belongs to, what state it is in, and how many to keep.

Every snapshot records its instance by an identity that survives a restart: the data
directory and the option file the server was started with (``--defaults-file``, else the
default search), never a pid. The job on the target keeps each snapshot's state in
``/var/lib/innotune/snapshots/<id>/state.json`` (see :mod:`app.targetjob.records`):

* ``applied`` (or ``kept``, when a change made with a deadline was confirmed), and
  ``applying`` / ``awaiting-confirm`` while its job runs: its changes are in force;
* ``rolled-back``: it was restored (by a rollback, or by its own job on a failure);
* ``superseded``: a rollback to an OLDER snapshot of the same instance undid it too;
* ``refused``: its job changed nothing; ``failed-rollback``: a restore did not complete
  (still counted as in force, so a rollback tries again).

A rollback without a snapshot id restores the newest snapshot of the chosen instance that
is still in force; restoring an older one also restores, newest first, the newer ones of
that instance still in force (:func:`choose_rollback` says which, for the preview).

Retention keeps at most ``keep`` snapshots per instance (default 20, or
``INNOTUNE_KEEP_SNAPSHOTS``): rolled-back, superseded and refused ones go first, oldest
first, never the newest one in force. The job prunes its own instance at its end; this
computer's copies are pruned by the same rule (:func:`prune_locally`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.describe.actions import ApplyError
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.words import count, sentence
from app.jobs import snapshot as snap
from app.remote.transport import Transport
from app.targetjob import formats, pack
from app.targetjob import records as job_records

TOOL_DIR = formats.TOOL_DIR
DEFAULT_KEEP = formats.DEFAULT_KEEP
KEEP_ENV = "INNOTUNE_KEEP_SNAPSHOTS"

STATE_TEXT = {
    "applying": "applying",
    "awaiting-confirm": "awaiting confirmation",
    "applied": "applied",
    "kept": "kept",
    "rolled-back": "rolled back",
    "superseded": "superseded",
    "refused": "refused (nothing changed)",
    "failed-rollback": "rollback incomplete",
    "unknown": "unknown",
}

# The identity: realpath of the datadir (the server's working directory, else --datadir,
# else the datadir variable) and of --defaults-file.
_IDENTITY = r"""
d=$(readlink -f "/proc/$1/cwd" 2>/dev/null) || d=
if [ -z "$d" ] && [ -n "$2" ]; then d=$(readlink -f -- "$2" 2>/dev/null) || d=$2; fi
f=
if [ -n "$3" ]; then f=$(readlink -f -- "$3" 2>/dev/null) || f=$3; fi
printf '%s\n%s\n' "$d" "$f"
"""


def keep_default() -> int:
    """Snapshots kept per instance: ``INNOTUNE_KEEP_SNAPSHOTS`` (1-1000), else 20."""
    text = os.environ.get(KEEP_ENV, "").strip()
    if text.isdigit() and 1 <= int(text) <= 1000:
        return int(text)
    return DEFAULT_KEEP


def identity_key(datadir: str, option_file: str | None) -> str:
    """The one-line identity of an instance."""
    return f"datadir={datadir.rstrip('/') or '/'};option-file={option_file or 'default'}"


def identity(
    transport: Transport, instance: ServerInstance, datadir: str | None = None
) -> dict[str, Any]:
    """The identity of a running instance: ``key``, ``datadir``, ``option_file``.

    The datadir is the server process's working directory; when the process cannot be read
    (no root, or it was restarted since ``instance`` was found), ``--datadir``, else
    ``datadir`` (the server's variable), resolved the same way.
    """
    if instance.container is not None:
        # Every container sees its own /var/lib/mysql: the container names the instance.
        c = instance.container
        inside = (instance.datadir or datadir or "/var/lib/mysql").rstrip("/") or "/"
        return {
            "key": f"container={c.engine}/{c.name}",
            "datadir": c.host_path(inside) or inside,
            "option_file": None,
        }
    argv_dir = next((a.split("=", 1)[1] for a in instance.argv if a.startswith("--datadir=")), "")
    argv_dir = argv_dir or instance.datadir or ""
    result = transport.run(
        [
            "sh",
            "-c",
            _IDENTITY,
            "sh",
            str(instance.pid or 0),
            argv_dir or datadir or "",
            instance.defaults_file or "",
        ],
        sudo=not transport.is_root,
    )
    lines = (result.out.splitlines() + ["", ""])[:2] if result.ok else ["", ""]
    found_dir = lines[0].strip() or argv_dir or datadir or ""
    option_file = lines[1].strip() or instance.defaults_file or None
    if not found_dir:
        # Nothing tells this server apart by its files: its socket stands in.
        found_dir = f"(socket {instance.socket or instance.port or instance.pid})"
    return {
        "key": identity_key(found_dir, option_file),
        "datadir": found_dir.rstrip("/") or "/",
        "option_file": option_file,
    }


def describe_instance(doc: dict[str, Any]) -> str:
    """An instance as people know it: its datadir and option file, then where it listens."""
    if not doc.get("key"):
        where = f"; it ran at {doc['socket']}" if doc.get("socket") else ""
        return f"not recorded (taken before InnoTune recorded instances{where})"
    if str(doc["key"]).startswith("container="):
        return f"the container {str(doc['key']).split('/', 1)[-1]} (data in {doc.get('datadir')})"
    option = doc.get("option_file")
    files = f"--defaults-file={option}" if option else "default option files"
    text = f"{doc.get('datadir')} ({files})"
    if doc.get("socket"):
        text += f", socket {doc['socket']}"
    return text


@dataclass(frozen=True)
class Record:
    """A snapshot on the target with its state (file contents left out)."""

    snapshot: snap.Snapshot
    state: str
    updated: str | None = None
    by: str | None = None
    superseded_by: str | None = None

    @property
    def id(self) -> str:
        """The snapshot's id."""
        return self.snapshot.id

    @property
    def instance_key(self) -> str:
        """The identity of its instance ("" for a snapshot recorded before identities)."""
        return str(self.snapshot.instance.get("key") or "")

    @property
    def in_force(self) -> bool:
        """True when its changes are (or may be) on the host."""
        return self.state in formats.IN_FORCE

    def state_text(self) -> str:
        """The state in words."""
        text = STATE_TEXT.get(self.state, self.state)
        if self.state == "superseded" and self.superseded_by:
            text += f" (undone by the restore of {self.superseded_by})"
        return text

    def line(self) -> str:
        """One line for lists: id, time, state, what it saved."""
        what = self.snapshot.summary().split("  ", 3)[-1]
        return f"{self.id}  {self.snapshot.created}  {self.state_text()}  {what}"

    def as_targetjob(self) -> dict[str, Any]:
        """The record in the shape :mod:`app.targetjob.records` works on."""
        return {
            "id": self.id,
            "state": self.state,
            "manifest": {
                "id": self.id,
                "taken": self.snapshot.taken,
                "instance": dict(self.snapshot.instance),
            },
        }


def _record(doc: dict[str, Any]) -> Record | None:
    manifest = dict(doc.get("manifest") or {})
    for entry in manifest.get("files") or []:
        entry.setdefault("content_b64", "")
    try:
        found = snap.Snapshot.from_json(json.dumps(manifest))
    except (ValueError, KeyError, TypeError, InnoTuneError):
        return None
    return Record(
        found,
        str(doc.get("state") or "unknown"),
        doc.get("updated"),
        doc.get("by"),
        doc.get("superseded_by"),
    )


def _tool(transport: Transport) -> str:
    """The job's code on the target (for --list and --prune), put there when it differs.

    Named by its checksum: Python reads a zipapp's modules from the path again as it imports
    them, so a zipapp replaced under a running tool (another InnoTune version listing the
    same host at that moment) broke its imports ("bad local file header").
    """
    sudo = not transport.is_root
    source = pack.zipapp()
    digest = hashlib.sha256(source).hexdigest()
    path = f"{TOOL_DIR}/{digest[:16]}-{formats.ZIPAPP_NAME}"
    have = transport.run(["sha256sum", path], sudo=sudo)
    if not have.ok or (have.out.split() or [""])[0] != digest:
        snap.make_root_dir(transport, TOOL_DIR, sudo=sudo)
        transport.write_file_atomic(path, source, sudo=sudo, mode="0600", owner="root:root")
    return path


def list_records(transport: Transport) -> list[Record]:
    """Every snapshot on the target with its state, oldest first.

    Raises:
        ApplyError: the target could not be read (python3 missing, no sudo).
    """
    sudo = not transport.is_root
    result = transport.run(["python3", _tool(transport), "--list"], sudo=sudo, timeout=60)
    try:
        docs = json.loads(result.out) if result.ok else None
    except ValueError:
        docs = None
    if not isinstance(docs, list):
        raise ApplyError(
            sentence(
                f"Cannot read the snapshots on the host: {result.err.strip() or result.out[-200:]}"
            ),
            "InnoTune needs python3 and sudo rights on the host.",
        )
    return [r for r in (_record(d) for d in docs if isinstance(d, dict)) if r is not None]


def prune_on_target(transport: Transport, keep: int, key: str | None = None) -> dict[str, Any]:
    """Apply the retention on the target (``key``: one instance only); what it removed.

    Instances a job is changing right now are left alone (listed under ``busy``); free,
    empty lock files are removed.
    """
    sudo = not transport.is_root
    argv = ["python3", _tool(transport), "--prune", str(int(keep))]
    if key is not None:
        argv.append(key)
    result = transport.run(argv, sudo=sudo, timeout=120)
    try:
        done = json.loads(result.out) if result.ok else None
    except ValueError:
        done = None
    if not isinstance(done, dict):
        raise ApplyError(
            sentence(
                "Pruning the snapshots on the host failed: "
                f"{result.err.strip() or result.out[-200:]}"
            )
        )
    return done


def prune_locally(
    directory: Path, records: Sequence[Record], keep: int, key: str | None = None
) -> list[str]:
    """The same retention for this computer's copies; the ids removed.

    A copy's state is the target's (``records``); one the target no longer has was pruned
    there by the same rule (or lost), so it goes first.
    """
    states = {r.id: r for r in records}
    local = snap.list_locally(directory)
    groups: dict[str, list[dict[str, Any]]] = {}
    for found in local:
        record = states.get(found.id) or Record(found, "pruned")
        shaped = record.as_targetjob()
        shaped["manifest"]["instance"] = dict(found.instance)
        groups.setdefault(str(found.instance.get("key") or ""), []).append(shaped)
    removed: list[str] = []
    for ident, group in groups.items():
        if key is not None and ident != key:
            continue
        for gone in job_records.prune_choice(group, keep):
            shutil.rmtree(Path(directory) / gone, ignore_errors=True)
            removed.append(gone)
    return removed


def by_instance(records: Sequence[Record]) -> list[tuple[dict[str, Any], list[Record]]]:
    """Records grouped per instance (the instance's doc, its records newest first).

    The instance whose newest snapshot is newest comes first.
    """
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.instance_key or f"legacy:{record.id}", []).append(record)

    def order(r: Record) -> tuple[str, float, str]:
        return job_records.order_key({"id": r.id, "taken": r.snapshot.taken})

    out = []
    for group in groups.values():
        group.sort(key=order, reverse=True)
        out.append((dict(group[0].snapshot.instance), group))
    out.sort(key=lambda pair: order(pair[1][0]), reverse=True)
    # Snapshots recorded before identities: one group for them all.
    legacy = [r for doc, g in out if not doc.get("key") for r in g]
    out = [(d, g) for d, g in out if d.get("key")]
    if legacy:
        legacy.sort(key=order, reverse=True)
        out.append(({}, legacy))
    return out


class RollbackRefused(InnoTuneError):
    """Nothing to roll back (nothing in force, no such snapshot, no instance chosen)."""


@dataclass(frozen=True)
class RollbackChoice:
    """What a rollback would restore, and what the person must know first.

    ``undo``: the newer snapshots of the same instance still in force, newest first, that
    the restore undoes too (they become superseded). ``caveats``: reasons to ask before
    going on (another instance's snapshot, one already rolled back).
    """

    record: Record
    undo: tuple[Record, ...] = ()
    caveats: tuple[str, ...] = ()

    def text(self, spell: Callable[[str, str], str] | None = None) -> str:
        """The rollback's preview: what comes back, and the later changes it undoes.

        ``spell(key, value)``: a saved value as people read it (sizes as 128 MiB).
        """
        lines = [
            f"Restore snapshot {self.record.id} ({self.record.state_text()}) of "
            f"{describe_instance(self.record.snapshot.instance)}:",
        ]
        for saved in self.record.snapshot.files:
            lines.append(
                f"  {saved.path}: back to its content of {self.record.snapshot.created}"
                if saved.existed
                else f"  {saved.path}: removed (it did not exist)"
            )
        for value in self.record.snapshot.values:
            where = value.path or value.key
            shown = spell(value.key, value.value) if spell and value.value else value.value
            lines.append(f"  {value.kind} {where}: back to {shown}")
        if self.undo:
            lines.append(
                f"This also undoes {count(len(self.undo), 'later change')} of this server still in "
                "force (each becomes superseded):"
            )
            for later in self.undo:
                lines.append(f"  {later.line()}")
                changes = [a.get("summary", "") for a in later.snapshot.actions if a]
                lines += [f"      {c}" for c in changes if c]
            lines.append(
                "Every file comes back byte for byte as it was before "
                f"{self.record.id}; the later files and values are undone first."
            )
        return "\n".join(lines)


def _order(record: Record) -> tuple[str, float, str]:
    return job_records.order_key({"id": record.id, "taken": record.snapshot.taken})


def choose_rollback(
    records: Sequence[Record], instance_key: str | None, snapshot_id: str | None
) -> RollbackChoice:
    """The snapshot a rollback restores, the later ones it undoes, and its caveats.

    Without ``snapshot_id``: the newest snapshot of ``instance_key`` still in force.

    Raises:
        RollbackRefused: nothing in force for that instance, no instance chosen, or no
            snapshot with that id.
    """
    ordered = sorted(records, key=_order)
    if snapshot_id is None:
        if instance_key is None:
            raise RollbackRefused(
                "Which server's snapshot? This host has snapshots of several instances.",
                "Choose one with --instance SOCKET|PORT|PID (`innotune snapshots` lists them).",
            )
        mine = [r for r in ordered if r.instance_key == instance_key]
        live = [r for r in mine if r.in_force]
        if not live:
            raise RollbackRefused(
                "No snapshot of this server is in force: "
                + (
                    f"its {count(len(mine), 'snapshot')} "
                    f"{'is' if len(mine) == 1 else 'are'} rolled back, superseded or refused."
                    if mine
                    else "it has no snapshots on this host."
                ),
                "Nothing was changed. Name a snapshot to restore it anyway.",
            )
        chosen = live[-1]
    else:
        found = [r for r in ordered if r.id == snapshot_id]
        if not found:
            raise RollbackRefused(
                f"No snapshot {snapshot_id} on this host.",
                "Nothing was changed. `innotune snapshots TARGET` lists them.",
            )
        chosen = found[0]
    undo_ids = job_records.newer_in_force([r.as_targetjob() for r in ordered], chosen.id)
    by_id = {r.id: r for r in ordered}
    caveats = []
    if instance_key is not None and chosen.instance_key != instance_key:
        caveats.append(
            f"Snapshot {chosen.id} belongs to another server instance: "
            f"{describe_instance(chosen.snapshot.instance)}, not the one chosen."
        )
    if not chosen.in_force:
        caveats.append(
            f"Snapshot {chosen.id} is {chosen.state_text()}: its changes are not in force, "
            "so restoring it may change the server back to an older state."
        )
    return RollbackChoice(chosen, tuple(by_id[i] for i in undo_ids), tuple(caveats))


def instance_for(
    records: Sequence[Record],
    running: Sequence[tuple[ServerInstance, dict[str, Any]]],
    spec: str | None,
) -> str | None:
    """The identity key of the instance ``spec`` names (socket, port or pid), or None.

    A running instance is matched first; a stopped one by the socket or port its snapshots
    recorded. Without ``spec``: the only running instance, else the only one with
    snapshots here, else None (the caller asks for ``--instance``).

    Raises:
        RollbackRefused: ``spec`` matches no instance, running or recorded.
    """
    if spec is None:
        if len(running) == 1:
            return str(running[0][1]["key"])
        keys = {r.instance_key for r in records if r.instance_key}
        return keys.pop() if len(keys) == 1 and not running else None
    spec = spec.strip()
    for instance, ident in running:
        if (
            spec in instance.sockets
            or (spec.isdigit() and int(spec) in (*instance.ports, instance.pid))
            or spec == ident.get("datadir")
            or (instance.container is not None and spec == instance.container.name)
        ):
            return str(ident["key"])
    for record in reversed(list(records)):
        doc = record.snapshot.instance
        container = record.instance_key.startswith("container=") and (
            record.instance_key.split("/", 1)[-1] == spec
        )
        if record.instance_key and (
            container
            or spec
            in (
                str(doc.get("socket") or ""),
                str(doc.get("port") or ""),
                str(doc.get("datadir") or ""),
            )
        ):
            return record.instance_key
    raise RollbackRefused(
        f"No server instance matches --instance {spec}, running or in the snapshots here.",
        "Running: "
        + ("; ".join(i.label for i, _ in running) or "none")
        + ". `innotune snapshots TARGET` lists the instances with snapshots.",
    )
