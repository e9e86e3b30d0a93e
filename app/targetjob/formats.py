"""The formats the runner and the job share: the bundle (what to do), the journal (how far).

Both sides import these classes, so a field cannot be written under one name and read
under another. The bundle carries :data:`FORMAT`; a job refuses a bundle of another
format than its own (the zipapp and the bundle always travel together, so this only
guards against a stray, hand-made or left-over bundle). Format 2 carries every value
typed (name, value, kind); formats 0 and 1 carried SQL text, which the job no longer
reads, so they are refused with what to do.

Standard library only, Python 3.7+: this module runs on the target too.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any

FORMAT = 2


def count(n: int, noun: str) -> str:
    """``n`` and the noun, singular for one ("1 file", "2 files", "3 other queries").

    The job's copy of ``app.domain.words.count`` (this module runs on the target with the
    standard library only); a test keeps the two the same.
    """
    if n == 1:
        return "%d %s" % (n, noun)
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return "%d %sies" % (n, noun[:-1])
    if noun.endswith(("s", "x", "ch", "sh")):
        return "%d %ses" % (n, noun)
    return "%d %ss" % (n, noun)


SNAPSHOTS_ROOT = "/var/lib/innotune/snapshots"
JOBS_ROOT = "/var/lib/innotune/jobs"
LOCK_DIR = "/var/lib/innotune/locks"  # one lock per server instance
TOOL_DIR = "/var/lib/innotune/tool"  # the zipapp the client runs for --list and --prune
# The job's code, as one zipapp, in each job's directory (and the tool's).
ZIPAPP_NAME = "job.pyz"

# A job's final states.
FINAL = ("applied", "refused", "rolled-back", "failed-rollback")
# Snapshot states whose changes are (or may be) on the host: a rollback without an id
# picks these.
IN_FORCE = ("applying", "awaiting-confirm", "applied", "kept", "failed-rollback")
# Snapshots that no longer matter much: the retention removes these first ("pruned": a
# local copy whose target copy the retention already removed).
SPENT = ("rolled-back", "superseded", "refused", "pruned")
DEFAULT_KEEP = 20


class FormatError(ValueError):
    """A bundle this job cannot read (a newer format, or not a bundle at all)."""


def _known(cls: Any, doc: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in doc.items() if k in names}


@dataclass
class FileItem:
    """A file the job writes: its new content and the checksum it must have before."""

    path: str
    before_sha256: str | None
    content_b64: str
    mode: str = ""  # octal, "" to keep the file's own
    owner: str = ""  # "user:group", "" to keep the file's own
    purpose: str = ""  # option_file, udev, sysctl
    # The plan's changes it keeps (udev, sysctl): not written when the host refuses one.
    covers: list[str] = field(default_factory=list)


@dataclass
class ValueItem:
    """A typed value the job sets live: sysfs, sysctl (through /proc/sys) or dynamic.

    A ``dynamic`` one is a server variable the job sets with ``SET GLOBAL``, spelled on the
    target by :func:`app.targetjob.values.set_global` from the name and the value.
    """

    kind: str
    key: str
    value: str | None
    path: str | None = None
    device: str | None = None
    change: str = ""  # the plan's change id ("" in older bundles: see value_id)


@dataclass
class PersistItem:
    """A value MySQL keeps in mysqld-auto.cnf that would beat the option files.

    ``how`` is ``reset`` (RESET PERSIST) or ``persist`` (SET PERSIST_ONLY ``value``); the
    job spells the statement with :func:`app.targetjob.values.persist_sql`.
    """

    key: str
    value: str
    how: str


@dataclass
class CommandItem:
    """A follow-up command (udevadm ...): an argv, never a shell line."""

    argv: list[str]
    why: str = ""
    covers: list[str] = field(default_factory=list)  # not run when the host refuses one


@dataclass
class Validate:
    """The server binary's own check of the new option files, run as ``user``."""

    argv: list[str]
    user: str | None = None


@dataclass
class Bundle:
    """Everything one job does, written by the runner as ``DIR/bundle.json``.

    ``mode`` is ``apply`` or ``restore``. A restore names its snapshot and, in ``undo``,
    the newer snapshots the preview said it undoes too (``only``: its own snapshot only,
    the watchdog's rescue). ``how`` overrides the snapshot's own record of how to restart
    and judge the server.
    """

    id: str
    mode: str
    snapshot_id: str
    snapshot_dir: str
    format: int = FORMAT
    files: list[FileItem] = field(default_factory=list)
    values: list[ValueItem] = field(default_factory=list)
    persisted: list[PersistItem] = field(default_factory=list)
    commands: list[CommandItem] = field(default_factory=list)
    validate: Validate | None = None
    buffer_pool_bytes: int | None = None
    restart_needed: bool = False
    restart_requested: bool = False
    persisted_keys: list[str] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)
    confirm_within: float | None = None
    watchdog_grace: float = 10.0
    how: dict[str, Any] = field(default_factory=dict)
    instance: str | None = None
    keep: int | None = None
    undo: list[str] | None = None
    only: bool = False
    changes: list[str] = field(default_factory=list)  # the plan's change ids it carries
    # Changes the preview already found this host cannot take (id -> why): not applied.
    refused: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> bytes:
        """The bundle as ``bundle.json`` holds it."""
        return (json.dumps(dataclasses.asdict(self), sort_keys=True, indent=1) + "\n").encode()

    @classmethod
    def from_dict(cls, doc: Any) -> Bundle:
        """A bundle from its JSON document.

        Raises:
            FormatError: not a bundle, or one of another format than this code reads.
        """
        if not isinstance(doc, dict) or not doc.get("id") or not doc.get("mode"):
            raise FormatError("not an InnoTune job bundle")
        version = int(doc.get("format") or 0)
        if version > FORMAT:
            raise FormatError(
                "bundle format %d is newer than this job's (%d): it was written by a newer "
                "InnoTune; run the job that came with it, or apply again with this InnoTune"
                % (version, FORMAT)
            )
        if version < FORMAT:
            raise FormatError(
                "bundle format %d is older than this job's (%d): it holds its server values "
                "as SQL text, which this job no longer reads (it takes typed values); nothing "
                "was changed. Preview and apply again with this InnoTune (a rollback of its "
                "snapshot works as before)" % (version, FORMAT)
            )
        fields = _known(cls, doc)
        fields["format"] = version
        fields["snapshot_id"] = str(doc.get("snapshot_id") or "")
        fields["snapshot_dir"] = str(doc.get("snapshot_dir") or "")
        fields["files"] = [FileItem(**_known(FileItem, f)) for f in doc.get("files") or []]
        fields["values"] = [ValueItem(**_known(ValueItem, v)) for v in doc.get("values") or []]
        fields["persisted"] = [
            PersistItem(**_known(PersistItem, p)) for p in doc.get("persisted") or []
        ]
        fields["commands"] = [
            CommandItem(**_known(CommandItem, c)) for c in doc.get("commands") or []
        ]
        check = doc.get("validate")
        fields["validate"] = Validate(**_known(Validate, check)) if check else None
        fields["persisted_keys"] = list(doc.get("persisted_keys") or [])
        fields["changes"] = [str(c) for c in doc.get("changes") or []]
        fields["refused"] = {str(k): str(v) for k, v in (doc.get("refused") or {}).items()}
        fields["expected"] = dict(doc.get("expected") or {})
        fields["how"] = dict(doc.get("how") or {})
        fields["watchdog_grace"] = float(doc.get("watchdog_grace") or 10.0)
        return cls(**fields)

    @classmethod
    def from_json(cls, data: bytes) -> Bundle:
        """A bundle from the bytes of ``bundle.json``."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except ValueError as exc:
            raise FormatError("bundle.json is not JSON: %s" % exc) from None
        return cls.from_dict(doc)


@dataclass
class JobState:
    """``DIR/state.json``, replaced atomically: where the job is, and what went wrong.

    ``state`` is ``running``, ``awaiting-confirm`` (until ``confirm_deadline``, a Unix
    time), then one of :data:`FINAL`; ``rescued_by`` names the watchdog's rescue job.
    """

    state: str
    job: str | None = None
    mode: str | None = None
    snapshot: str | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    log_lines: list[str] = field(default_factory=list)
    restarted: bool = False
    downtime_seconds: float | None = None
    cancelled: bool = False
    instance: str | None = None
    updated: str = ""
    confirm_deadline: float | None = None
    rescued_by: str | None = None
    # The plan's changes the job carried, and those the host refused (id -> why): an
    # "applied" job counts only the others as in force.
    changes: list[str] = field(default_factory=list)
    not_applied: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> bytes:
        """The state as ``state.json`` holds it."""
        return (json.dumps(dataclasses.asdict(self), sort_keys=True, indent=1) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes) -> JobState | None:
        """The state from the bytes of ``state.json``; None when absent or damaged."""
        try:
            doc = json.loads(data.decode("utf-8")) if data.strip() else None
        except ValueError:  # replaced atomically, so only a damaged file can get here
            return None
        if not isinstance(doc, dict) or not doc.get("state"):
            return None
        fields = _known(cls, doc)
        for name in ("errors", "warnings", "log_lines", "changes"):
            fields[name] = [str(x) for x in doc.get(name) or []]
        refused = doc.get("not_applied")
        fields["not_applied"] = (
            {str(k): str(v) for k, v in refused.items()} if isinstance(refused, dict) else {}
        )
        return cls(**fields)


def applied_words(changes: list[str], not_applied: dict[str, str]) -> str:
    """An applied job in words: "applied", or how many changes are in force and which not."""
    if not not_applied:
        return "applied"
    names = ", ".join(sorted(not_applied))
    if changes:
        taken = sum(1 for c in changes if c not in not_applied)
        return "applied %d of %d changes; not applied: %s" % (taken, len(changes), names)
    return "applied; not applied: " + names


def value_id(item: ValueItem) -> str:
    """The plan's change id of a value: ``key``, or ``key@device`` for a device's setting."""
    if item.change:
        return item.change
    return "%s@%s" % (item.key, item.device) if item.device else item.key


def now_iso() -> str:
    """The time as ISO 8601 UTC with milliseconds."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(t % 1 * 1000)


@dataclass(frozen=True)
class JournalLine:
    """One line of ``DIR/journal.jsonl``: a step of the job.

    ``status`` is one of start, ok, fail, info, progress, warn.
    """

    seq: int
    time: str
    step: str
    status: str
    detail: str = ""

    def to_json(self) -> str:
        """The line as the journal holds it (without its newline)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: Any) -> JournalLine | None:
        """The line from its JSON text; None for a damaged or partial line."""
        try:
            doc = json.loads(raw)
            return cls(
                int(doc["seq"]),
                str(doc["time"]),
                str(doc["step"]),
                str(doc["status"]),
                str(doc.get("detail", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def line(self) -> str:
        """One line for a log or the terminal."""
        mark = {"ok": "✓", "fail": "✗", "warn": "!", "start": "…", "progress": "…"}.get(
            self.status, "·"
        )
        first, *rest = self.detail.splitlines() or [""]
        more = "".join("\n      %s" % ln for ln in rest)
        return "%s %s: %s%s" % (mark, self.step, first, more)
