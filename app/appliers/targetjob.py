"""The apply/restore job that runs ON THE TARGET, detached from the SSH session.

This file is shipped as it is (its source text) to ``/var/lib/innotune/jobs/<id>/job.py``
and run there as root with ``python3 job.py DIR``, under ``setsid -f`` or
``systemd-run``. It must therefore stay self-contained: Python 3.7+ standard library only,
no ``app.*`` import. Everything it needs is in ``DIR/bundle.json`` (written by
:mod:`app.appliers.runner`) and in the snapshot directory the bundle names.

What it writes:

* ``DIR/journal.jsonl``: one JSON object per step (``seq``, ``time``, ``step``,
  ``status`` in start/ok/fail/info/progress/warn, ``detail``), each line fsync'd, so a
  client that reconnects after a dropped link reads exactly how far it got;
* ``DIR/state.json`` (replaced atomically): ``running``, ``awaiting-confirm``, then one of
  the final states ``applied``, ``refused`` (nothing was changed), ``rolled-back`` or
  ``failed-rollback``, with the errors, warnings and the error-log lines that explain a
  failure;
* ``DIR/pid``: its own pid, so a reader can tell a running job from an interrupted one.

The order (reliability.md 2.5, 3.1-3.4; house style: save first, undo newest first, keep
going past a failure): refuse when a file changed since it was planned; write files
atomically; validate the server's options before any restart; set dynamic variables, sysfs
and sysctl values live; run the follow-up commands (udevadm); restart only when needed;
judge health by polling (process, socket greeting, a login, "ready for connections"),
waiting as long as a crash recovery may take; compare the settings in force with the
expected ones; watch a short window for the process dying; wait for a confirmation if
asked. Any failure restores the snapshot newest first and restarts on the old files.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import base64
import errno
import fcntl
import grp
import hashlib
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

FINAL = ("applied", "refused", "rolled-back", "failed-rollback")
LOCK_DIR = "/var/lib/innotune/locks"  # one lock per server instance
SERVER_NAMES = ("mariadbd", "mysqld")
# Case matters: the --help output is full of option names like "log-error".
_ERROR_LINE = re.compile(r"\[ERROR\]|^ERROR\b|unknown (variable|option)|\bAborting\b|Fatal error")


class JobFailed(Exception):
    """A step failed; the message says which and why."""


class JobCancelled(JobFailed):
    """The person asked (``DIR/cancel``) to stop; what was changed is rolled back."""


def sha256(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def now_iso() -> str:
    """The time as ISO 8601 UTC with milliseconds."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(t % 1 * 1000)


def fsync_dir(path: str) -> None:
    """Make a rename in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, mode: int | None, owner: str) -> None:
    """Replace ``path`` with ``data``: temp file in the same directory, fsync, rename, fsync dir.

    The temp name starts with a dot and never ends in ``.cnf`` (``!includedir`` reads only
    ``*.cnf``). A symlink is written through (its target is replaced), never replaced
    itself. Owner and mode are set on the temp file before the rename, so the file never
    appears with the wrong ones.
    """
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    old: os.stat_result | None
    try:
        old = os.stat(real)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(real) + ".", suffix=".innotune-tmp", dir=directory
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        uid, gid = -1, -1
        if owner:
            user, _, group = owner.partition(":")
            uid = pwd.getpwnam(user).pw_uid if user else -1
            gid = grp.getgrnam(group).gr_gid if group else -1
        elif old is not None:
            uid, gid = old.st_uid, old.st_gid
        os.chown(tmp, uid, gid)
        if mode is None:
            mode = (old.st_mode & 0o7777) if old is not None else 0o644
        os.chmod(tmp, mode)
        os.rename(tmp, real)
        fsync_dir(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_or_none(path: str) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def sysctl_path(key: str) -> str:
    """``vm.swappiness`` → ``/proc/sys/vm/swappiness``."""
    return "/proc/sys/" + key.replace(".", "/")


def active_value(text: str) -> str:
    """The value as set: the bracketed entry of ``none [mq-deadline] bfq``, else the text."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


def sql_literal(value: str) -> str:
    """A value for SET GLOBAL: a plain number as it is, anything else quoted and escaped."""
    if re.match(r"^-?[0-9]+(\.[0-9]+)?$", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def same_setting(actual: str | None, wanted: str, key: str = "") -> bool:
    """True when the server's value is the wanted one, allowing for its own rounding.

    The buffer pool is rounded UP to a multiple of chunk size x instances (128 MiB x up
    to 8 on MySQL 8); other numbers to a block size (within 2 %, or 1 MiB).
    """
    if actual is None:
        return False
    a, w = actual.strip(), wanted.strip()
    if a.lower() == w.lower():
        return True
    truth = {
        "1": "on",
        "on": "on",
        "true": "on",
        "yes": "on",
        "0": "off",
        "off": "off",
        "false": "off",
        "no": "off",
    }
    if a.lower() in truth and w.lower() in truth:
        return truth[a.lower()] == truth[w.lower()]
    try:
        fa, fw = float(a), float(w)
    except ValueError:
        return False
    if key == "innodb_buffer_pool_size":
        return fw <= fa <= fw + 1073741824
    return abs(fa - fw) <= max(abs(fw) * 0.02, 1048576.0 if fw >= 16777216 else 0.0)


# -- the snapshots' record: instance, state, retention -----------------------------------------
#
# Each snapshot directory holds, beside its manifest, a ``state.json`` the jobs keep up to
# date: ``applying``, ``awaiting-confirm``, ``applied``, ``kept`` (confirmed), ``rolled-back``,
# ``superseded`` (a restore of an older snapshot of the same instance undid it too),
# ``refused`` (nothing was changed) or ``failed-rollback``. Snapshots made before the file
# existed get theirs from the jobs that ran them.

SNAPSHOTS_ROOT = "/var/lib/innotune/snapshots"
JOBS_ROOT = "/var/lib/innotune/jobs"
# States whose changes are (or may be) on the host: a rollback without an id picks these.
IN_FORCE = ("applying", "awaiting-confirm", "applied", "kept", "failed-rollback")
# Snapshots that no longer matter much: the retention removes these first ("pruned": a
# local copy whose target copy the retention already removed).
SPENT = ("rolled-back", "superseded", "refused", "pruned")
DEFAULT_KEEP = 20


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


def _load_json(path: str) -> Any:
    data = read_or_none(path)
    try:
        return json.loads(data.decode("utf-8")) if data else None
    except ValueError:
        return None


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
        bundle = _load_json(os.path.join(jobs_root, name, "bundle.json"))
        if isinstance(bundle, dict) and bundle.get("mode") == "restore":
            done = _load_json(os.path.join(jobs_root, name, "state.json")) or {}
            restores.setdefault(str(bundle.get("snapshot_id")), []).append(
                (name, str(done.get("state") or ""))
            )
    for name in names:
        directory = os.path.join(snapshots_root, name)
        manifest = _load_json(os.path.join(directory, "manifest.json"))
        if not isinstance(manifest, dict) or "id" not in manifest:
            continue
        if not contents:
            for entry in manifest.get("files") or []:
                entry["content_b64"] = ""
        doc = _load_json(os.path.join(directory, "state.json"))
        if isinstance(doc, dict) and doc.get("state"):
            state = dict(doc)
        else:
            state = {
                "state": _legacy_state(_load_json(os.path.join(jobs_root, name, "state.json")))
            }
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


def remove_free_locks(lock_dir: str = LOCK_DIR) -> list[str]:
    """Remove the empty lock files no job holds; their names."""
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
        bundle = _load_json(os.path.join(jobs_root, name, "bundle.json")) or {}
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


class Job:
    """One run of the job in DIR."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        with open(os.path.join(directory, "bundle.json"), encoding="utf-8") as fh:
            self.bundle: dict[str, Any] = json.load(fh)
        self.seq = 0
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.log_lines: list[str] = []
        self.restarted = False
        self.downtime: float | None = None
        self.manifest: dict[str, Any] = {}
        self.how: dict[str, Any] = {}
        self.log_mark: Any = None
        self.client_ok: bool | None = None
        self.healthy_pid: int | None = None
        self.restart_attempted = False
        self.cancelled = False
        # Dynamic variables this apply set live (SET GLOBAL): its own rollback sets back only
        # these; None for a standalone rollback, which sets back every saved value.
        self.live_set: set[str] | None = None
        self.kept = False  # a change made with a deadline was confirmed
        self.undone: list[str] = []  # newer snapshots a restore undid too (superseded)
        self.journal = open(os.path.join(directory, "journal.jsonl"), "a", encoding="utf-8")  # noqa: SIM115

    # -- journal and state ------------------------------------------------------------------
    def step(self, step: str, status: str, detail: str = "") -> None:
        """Append one line to the journal, durably."""
        self.seq += 1
        line = {
            "seq": self.seq,
            "time": now_iso(),
            "step": step,
            "status": status,
            "detail": detail,
        }
        self.journal.write(json.dumps(line, sort_keys=True) + "\n")
        self.journal.flush()
        os.fsync(self.journal.fileno())

    def state(self, state: str, **extra: Any) -> None:
        """Replace DIR/state.json atomically."""
        doc = {
            "state": state,
            "job": self.bundle.get("id"),
            "mode": self.bundle.get("mode"),
            "snapshot": self.manifest.get("id") or self.bundle.get("snapshot_id"),
            "errors": self.errors,
            "warnings": self.warnings,
            "log_lines": self.log_lines,
            "restarted": self.restarted,
            "downtime_seconds": self.downtime,
            "cancelled": self.cancelled,
            "instance": self.bundle.get("instance"),
            "updated": now_iso(),
        }
        doc.update(extra)
        atomic_write(
            os.path.join(self.dir, "state.json"),
            (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode(),
            0o600,
            "",
        )

    # -- the snapshot -------------------------------------------------------------------------
    def load_snapshot(self) -> None:
        """Read and verify the snapshot's manifest; a bad one stops everything loudly."""
        self.manifest = _verified_manifest(self.bundle["snapshot_dir"])
        self.how = dict(self.manifest.get("how") or {})
        self.how.update(self.bundle.get("how") or {})

    # -- running things ---------------------------------------------------------------------
    def run(
        self, argv: list[str], timeout: float = 120.0, user: str | None = None
    ) -> tuple[int, str]:
        """Run argv; exit status and combined output (never a shell)."""
        preexec = None
        if user and user != "root":
            entry = pwd.getpwnam(user)

            def preexec() -> None:
                os.setgid(entry.pw_gid)
                os.initgroups(user, entry.pw_gid)
                os.setuid(entry.pw_uid)

        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                preexec_fn=preexec,  # noqa: PLW1509 - drop to the service user
                check=False,
            )
        except FileNotFoundError:
            return 127, f"{argv[0]}: not found"
        except subprocess.TimeoutExpired:
            return 124, "timed out after %d s" % timeout
        return proc.returncode, proc.stdout.decode("utf-8", "replace")

    def client(self, sql: str, timeout: float = 15.0) -> tuple[bool, str]:
        """Run SQL through the server's client as root over the socket."""
        argv = self.how.get("client")
        if not argv:
            return False, "no client login"
        status, out = self.run(list(argv) + ["-N", "-B", "-e", sql], timeout=timeout)
        return status == 0, out.strip()

    def globals_now(self) -> dict[str, str]:
        """The server's values now of the variables in :data:`ORDERED_PAIRS` (empty: unknown)."""
        names = [name for pair in ORDERED_PAIRS for name in pair]
        if not self.how.get("client"):
            return {}
        ok, out = self.client("SELECT " + ", ".join("@@GLOBAL." + n for n in names))
        values = out.split("\t") if ok else []
        return dict(zip(names, values)) if len(values) == len(names) else {}  # noqa: B905 (3.7+)

    # -- cancelling ---------------------------------------------------------------------------
    def cancel_requested(self) -> bool:
        """True once the client asked to cancel (it creates ``DIR/cancel``)."""
        return os.path.exists(os.path.join(self.dir, "cancel"))

    def check_cancel(self, where: str) -> None:
        """Stop here when a cancel was asked for: the caller rolls back what was changed.

        Only called between steps, never while a restart is under way: a server being
        restarted is waited for until it is healthy (or judged failed) first, so a cancel
        never leaves it down.
        """
        if self.cancel_requested():
            self.cancelled = True
            self.step("cancel", "info", f"cancel asked for; stopping {where} and rolling back")
            raise JobCancelled(f"cancelled by the user {where}; every change is rolled back")

    # -- server health ------------------------------------------------------------------------
    def server_pid(self) -> int | None:
        """The server's pid: from its pid file, else a server process with its markers."""
        pid_file = self.how.get("pid_file")
        if pid_file:
            try:
                with open(pid_file) as fh:
                    pid = int(fh.read().strip())
                if self._is_server(pid, require_marker=False):
                    return pid
            except (OSError, ValueError):
                pass
        for name in os.listdir("/proc"):
            if name.isdigit() and self._is_server(int(name), require_marker=True):
                return int(name)
        return None

    def _is_server(self, pid: int, require_marker: bool) -> bool:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as fh:
                argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
            with open("/proc/%d/stat" % pid) as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
                    return False
        except OSError:
            return False
        if not argv or os.path.basename(argv[0]) not in SERVER_NAMES:
            return False
        if not require_marker:
            return True
        markers = self.how.get("markers") or []
        return any(m in argv for m in markers)

    def greets(self) -> bool:
        """True when the socket answers with a MySQL protocol greeting."""
        path = self.how.get("socket")
        if not path:
            return True
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(3)
                sock.connect(path)
                greeting = sock.recv(512)
        except OSError:
            return False
        return len(greeting) > 5 and greeting[3] == 0 and greeting[4] in (10, 255)

    def mark_log(self) -> None:
        """Remember where the error log ends now, so only new lines are read later."""
        log = self.how.get("log") or {}
        if log.get("kind") in ("file", "syslog"):
            try:
                self.log_mark = os.path.getsize(log["path"])
            except OSError:
                self.log_mark = 0
        else:
            self.log_mark = time.time()

    def new_log_lines(self) -> list[str] | None:
        """Lines the server logged since :meth:`mark_log`; None when there is no log to read."""
        log = self.how.get("log") or {}
        kind = log.get("kind")
        if kind in ("file", "syslog"):
            try:
                with open(log["path"], "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
                    fh.seek(
                        self.log_mark if self.log_mark is not None and self.log_mark <= size else 0
                    )
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                return None
            lines = text.splitlines()
            if kind == "syslog":
                names = log.get("match") or ["mariadbd", "mysqld"]
                lines = [ln for ln in lines if any(n in ln for n in names)]
            return lines
        if kind == "journal" and log.get("unit"):
            since = "@%d" % int(self.log_mark or time.time())
            status, out = self.run(
                ["journalctl", "-u", log["unit"], "--since", since, "-o", "cat", "--no-pager"],
                timeout=30,
            )
            return out.splitlines() if status == 0 else None
        return None

    def explain(self) -> None:
        """Keep the error-log lines that explain a failure (the last 25 error lines)."""
        lines = self.new_log_lines() or []
        bad = [ln for ln in lines if _ERROR_LINE.search(ln)]
        self.log_lines = (bad or lines)[-25:]
        if self.log_lines:
            self.step("error-log", "info", "\n".join(self.log_lines))

    def wait_healthy(
        self, old_pid: int | None, proc: subprocess.Popen[bytes] | None, timeout: float
    ) -> int:
        """Poll until the restarted server is healthy; its pid, or JobFailed.

        Healthy: a server process other than ``old_pid``, its socket greets, a login works
        (when the job can log in). While a server process lives (crash recovery in
        progress) it waits up to ``timeout``; with no process for ``grace`` seconds after
        the restart command returned, the start failed.
        """
        start = time.monotonic()
        grace = float(self.how.get("gone_grace", 3))
        gone_since: float | None = None
        last_note = start
        while True:
            elapsed = time.monotonic() - start
            pid = self.server_pid()
            restart_done = proc is None or proc.poll() is not None
            if pid is not None and (pid != old_pid or restart_done) and self.greets():
                ok, out = self.client("SELECT 1") if self.how.get("client") else (True, "")
                if ok:
                    return pid
                if self.client_ok is False:  # login never worked, even before: socket is enough
                    return pid
            if pid is None and restart_done:
                gone_since = gone_since if gone_since is not None else time.monotonic()
                if time.monotonic() - gone_since > grace:
                    raise JobFailed(
                        f"the server is not running {grace:.0f} s after the restart command ended"
                    )
            else:
                gone_since = None
            if elapsed > timeout:
                raise JobFailed(f"the server was not healthy after {timeout:.0f} s")
            if time.monotonic() - last_note >= 5:
                last_note = time.monotonic()
                lines = self.new_log_lines() or []
                self.step(
                    "health",
                    "progress",
                    "{:.0f} s: process {}, waiting (last log line: {})".format(
                        elapsed, pid or "absent", lines[-1] if lines else "-"
                    ),
                )
            time.sleep(0.2)

    def restart(self, phase: str) -> None:
        """Restart through the service manager (or the given command) and wait for health."""
        argv = self.how.get("restart")
        if not argv:
            raise JobFailed("no way to restart the server is known (started by hand?)")
        unit = self.how.get("unit")
        if unit and phase == "restart-old":
            # A unit that failed to start may have hit systemd's start rate limit.
            self.run(["systemctl", "reset-failed", unit], timeout=30)
        old_pid = self.server_pid()
        self.mark_log()
        self.restart_attempted = True
        self.step(phase, "start", " ".join(argv))
        began = time.monotonic()
        out_path = os.path.join(self.dir, f"{phase}.out")
        with open(out_path, "ab") as out:
            # Output to a file, never a pipe: the daemon it starts inherits it and would keep
            # a pipe open for ever.
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        timeout = float(self.how.get("health_timeout", 300))
        try:
            pid = self.wait_healthy(old_pid, proc, timeout)
        finally:
            if proc.poll() is None:
                try:
                    proc.wait(timeout=max(1.0, timeout - (time.monotonic() - began)))
                except subprocess.TimeoutExpired:
                    self.warnings.append(
                        f"the restart command `{' '.join(argv)}` was still running when the "
                        "server became healthy"
                    )
        self.downtime = time.monotonic() - began
        if proc.returncode not in (0, None):
            self.warnings.append(
                f"`{' '.join(argv)}` exited {proc.returncode}, but the server is healthy "
                "(judged by polling, not the exit code)"
            )
        lines = self.new_log_lines()
        ready = None if lines is None else any("ready for connections" in ln for ln in lines)
        if ready is False:
            # The line can lag the socket by a moment.
            time.sleep(1.0)
            lines = self.new_log_lines() or []
            ready = any("ready for connections" in ln for ln in lines)
        detail = "pid %d healthy after %.1f s (socket greets%s; %s)" % (
            pid,
            self.downtime,
            ", login works" if self.how.get("client") else "",
            {
                True: '"ready for connections" logged',
                False: '"ready for connections" not found in the log',
                None: "no log to read",
            }[ready],
        )
        if ready is False:
            self.warnings.append(
                'the server answers but "ready for connections" was not found in its log'
            )
        self.step(phase, "ok", detail)
        self.restarted = True
        self.healthy_pid = pid

    def watch(self) -> None:
        """Watch a short window after start for the server dying (an OOM kill, a crash)."""
        seconds = float(self.how.get("watch_seconds", 15))
        pid = self.healthy_pid
        self.step("watch", "start", f"watching the server for {seconds:.0f} s")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.check_cancel("while watching the restarted server")
            if pid is not None and not self._is_server(pid, require_marker=False):
                status, out = self.run(["dmesg"], timeout=10)
                oom = [
                    ln
                    for ln in out.splitlines()
                    if "Killed process %d" % pid in ln or ("oom" in ln.lower() and str(pid) in ln)
                ]
                raise JobFailed(
                    "the server (pid %d) died within %.0f s of starting%s"
                    % (pid, seconds, ": " + oom[-1] if oom else "")
                )
            time.sleep(0.25)
        lines = self.new_log_lines() or []
        errors = [ln for ln in lines if "[ERROR]" in ln]
        if errors:
            self.warnings.append(
                "new [ERROR] lines in the error log since the restart: " + " | ".join(errors[-5:])
            )
            self.step("watch", "warn", "\n".join(errors[-10:]))
        self.step("watch", "ok", "the server kept running")

    # -- apply -------------------------------------------------------------------------------
    def check_unchanged(self) -> None:
        """Refuse when a file changed since the plan (checksums)."""
        self.step("check", "start", "files unchanged since the plan")
        changed = []
        for item in self.bundle.get("files", []):
            now = read_or_none(item["path"])
            now_sum = None if now is None else sha256(now)
            if now_sum != item["before_sha256"]:
                changed.append(
                    "{} {} since the plan".format(
                        item["path"],
                        "was removed"
                        if now is None
                        else ("appeared" if item["before_sha256"] is None else "changed"),
                    )
                )
        if changed:
            raise JobFailed("; ".join(changed))
        self.step("check", "ok", "%d file(s) as planned" % len(self.bundle.get("files", [])))

    def clean_leftovers(self) -> None:
        """Remove temp files an earlier job left when it was killed mid-write.

        They never end in ``.cnf`` (so no server ever read them), but they are clutter.
        """
        for item in self.bundle.get("files", []):
            real = os.path.realpath(item["path"])
            directory, name = os.path.split(real)
            try:
                entries = os.listdir(directory)
            except OSError:
                continue
            for entry in entries:
                if entry.startswith("." + name + ".") and entry.endswith(".innotune-tmp"):
                    try:
                        os.unlink(os.path.join(directory, entry))
                        self.step("write", "info", "removed a leftover temp file " + entry)
                    except OSError:
                        pass

    def write_files(self) -> None:
        """Write every file atomically, read it back, record each."""
        self.clean_leftovers()
        for item in self.bundle.get("files", []):
            data = base64.b64decode(item["content_b64"])
            self.step("write", "start", item["path"])
            mode = int(item["mode"], 8) if item.get("mode") else None
            atomic_write(item["path"], data, mode, item.get("owner") or "")
            if read_or_none(item["path"]) != data:
                raise JobFailed("{} does not read back as written".format(item["path"]))
            self.step(
                "write",
                "ok",
                "%s (%d bytes, sha256 %s)" % (item["path"], len(data), sha256(data)[:12]),
            )
            self.check_cancel("after writing %s" % item["path"])

    def validate(self) -> None:
        """Ask the server binary about the new files, and check the memory fits."""
        check = self.bundle.get("validate")
        if check:
            self.step("validate", "start", " ".join(check["argv"]))
            status, out = self.run(check["argv"], timeout=120, user=check.get("user") or None)
            bad = [ln for ln in out.splitlines() if _ERROR_LINE.search(ln)]
            if status != 0 or bad:
                self.log_lines = (bad or out.splitlines())[-25:]
                raise JobFailed(
                    "the server rejects the new options (exit %d): %s"
                    % (status, "; ".join(bad[:5]) or out.strip()[-300:])
                )
            self.step("validate", "ok", "the server binary accepts the options")
        pool = self.bundle.get("buffer_pool_bytes")
        if pool:
            with open("/proc/meminfo") as fh:
                total = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("MemTotal:"))
            limit = self.how.get("memory_max_bytes")
            if limit:  # the unit's MemoryMax: the OOM killer acts there first
                total = min(total, int(limit))
            if int(pool) > total * 0.9:
                raise JobFailed(
                    "innodb_buffer_pool_size %d bytes does not fit in this host's %d bytes of RAM"
                    % (int(pool), total)
                )
            self.step(
                "validate",
                "ok",
                "buffer pool %d MiB fits in %d MiB of RAM" % (int(pool) >> 20, total >> 20),
            )

    def set_values(self, values: list[dict[str, Any]], phase: str, restoring: bool) -> list[str]:
        """Write sysfs/sysctl values and SET GLOBAL; failures returned (restore) or raised."""
        failures = []
        for value in values:
            kind, key, new = value["kind"], value["key"], value["value"]
            if new is None:
                continue
            what = "{} {} = {}".format(kind, value.get("path") or key, new)
            self.step(phase, "start", what)
            try:
                if kind == "dynamic":
                    if not re.match(r"^[a-z][a-z0-9_]*$", key):
                        raise OSError(errno.EINVAL, "not a variable name")
                    ok, out = self.client(f"SET GLOBAL {key} = {sql_literal(new)}")
                    if not ok:
                        raise OSError(errno.EIO, out or "the client could not log in")
                    if self.live_set is not None and not restoring:
                        self.live_set.add(key)
                elif kind in ("sysfs", "sysctl"):
                    path = str(value.get("path") or "") if kind == "sysfs" else sysctl_path(key)
                    if restoring and _reads(path) == new.split():
                        # Already the saved value: a second rollback writes nothing.
                        self.step(phase, "ok", f"{what} (already)")
                        continue
                    try:
                        with open(path, "w") as fh:
                            fh.write(new + "\n")
                    except FileNotFoundError:
                        note = f"{path} does not exist: not supported on this host"
                        self.warnings.append(note)
                        self.step(phase, "warn", note)
                        continue
                    except OSError as exc:
                        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and not restoring:
                            note = (
                                f"{path} is read-only ({exc.strerror}): not supported on this host"
                            )
                            self.warnings.append(note)
                            self.step(phase, "warn", note)
                            continue
                        raise
                    with open(path) as fh:
                        reads = active_value(fh.read())
                    if reads.split() != new.split():
                        raise OSError(errno.EIO, f"reads {reads} after writing {new}")
                else:
                    raise OSError(errno.EINVAL, f"unknown kind {kind}")
            except OSError as exc:
                message = f"{what} failed: {exc.strerror or exc}"
                self.step(phase, "fail", message)
                if not restoring:
                    raise JobFailed(message) from None
                failures.append(message)
                continue
            self.step(phase, "ok", what)
        return failures

    def run_commands(self, commands: list[dict[str, Any]], phase: str) -> None:
        """Run the follow-up commands (udevadm ...); a failure is a warning, not fatal."""
        for command in commands:
            self.step(phase, "start", " ".join(command["argv"]))
            status, out = self.run(command["argv"], timeout=60)
            if status != 0:
                note = "`{}` failed ({}): {}".format(
                    " ".join(command["argv"]),
                    status,
                    out.strip()[-200:],
                )
                self.warnings.append(note)
                self.step(phase, "warn", note)
            else:
                self.step(phase, "ok", command.get("why", ""))

    def check_settings(self) -> None:
        """Compare the settings in force with the expected ones (allowing rounding)."""
        expected = self.bundle.get("expected") or {}
        if not expected:
            return
        if not self.how.get("client"):
            self.warnings.append("settings in force not checked: no client login on the target")
            return
        self.step("verify", "start", "settings in force")
        wrong = []
        for key, wanted in sorted(expected.items()):
            ok, out = self.client(f"SELECT @@GLOBAL.{key}")
            if not ok:
                wrong.append(f"{key}: cannot read ({out[-200:]})")
            elif not same_setting(out, str(wanted), key):
                wrong.append(f"{key} is {out}, not {wanted}")
        if wrong:
            raise JobFailed("settings in force differ from the plan: " + "; ".join(wrong))
        self.step("verify", "ok", ", ".join("{}={}".format(*kv) for kv in sorted(expected.items())))

    def wait_confirm(self) -> bool:
        """Wait for DIR/confirm until the deadline; True when it came."""
        seconds = float(self.bundle["confirm_within"])
        deadline = time.time() + seconds
        self.step("confirm", "start", f"waiting up to {seconds:.0f} s for a confirmation")
        self.state("awaiting-confirm", confirm_deadline=deadline)
        self.mark(self.manifest.get("id"), "awaiting-confirm")
        path = os.path.join(self.dir, "confirm")
        while time.time() < deadline:
            if os.path.exists(path):
                self.step("confirm", "ok", "confirmed")
                self.kept = True
                return True
            if self.cancel_requested():
                self.cancelled = True
                self.step("cancel", "info", "cancel asked for while waiting for a confirmation")
                return False
            time.sleep(0.2)
        self.step("confirm", "fail", f"no confirmation within {seconds:.0f} s")
        return False

    def set_persisted(self, statements: list[str], logged_in: bool) -> None:
        """RESET PERSIST / SET PERSIST_ONLY: mysqld-auto.cnf must not undo the option files.

        Without them the change would be undone at the next start, so they are not skipped
        like SET GLOBAL when the job cannot log in: the apply fails and rolls back.
        """
        if statements and not logged_in:
            raise JobFailed(
                "cannot log in to the server to change mysqld-auto.cnf (%s)" % statements[0]
            )
        for sql in statements:
            self.step("persisted", "start", sql)
            good, reply = self.client(sql)
            if not good:
                raise JobFailed(f"{sql} failed: {reply[-300:]}")
            self.step("persisted", "ok", sql)

    # -- restore ----------------------------------------------------------------------------
    def restore(self, standalone: bool) -> bool:
        """Put the snapshot back, newest first, past failures; True when all of it worked.

        Args:
            standalone: a rollback asked for later (restart when an option file changed
                back); otherwise the rollback of this job's own apply (restart only when
                it restarted or tried to, or the server is down: a failed validation
                restarts nothing).
        """
        self.step("restore", "start", "snapshot {}".format(self.manifest.get("id")))
        failures: list[str] = []
        values = list(reversed(self.manifest.get("values", [])))
        failures += self.set_values([v for v in values if v["kind"] != "dynamic"], "restore", True)
        option_changed = False
        udev_changed = False
        for entry in reversed(self.manifest.get("files", [])):
            path = entry["path"]
            try:
                now = read_or_none(path)
                if entry["existed"]:
                    data = base64.b64decode(entry["content_b64"])
                    if now == data and _mode_owner(path) == (entry["mode"], entry["owner"]):
                        self.step("restore", "ok", f"{path} already as in the snapshot")
                        continue
                    atomic_write(path, data, int(entry["mode"], 8), entry["owner"])
                    if sha256(read_or_none(path) or b"") != entry["sha256"]:
                        raise OSError(errno.EIO, "does not read back as the snapshot")
                    self.step(
                        "restore",
                        "ok",
                        "{} put back (sha256 {})".format(path, entry["sha256"][:12]),
                    )
                else:
                    if now is None:
                        self.step("restore", "ok", f"{path} already absent")
                        continue
                    os.unlink(path)
                    fsync_dir(os.path.dirname(path))
                    self.step("restore", "ok", f"{path} removed (it did not exist before)")
                option_changed = option_changed or entry.get("purpose") == "option_file"
                udev_changed = udev_changed or entry.get("purpose") == "udev"
            except (OSError, KeyError, ValueError) as exc:
                message = "restoring {} failed: {}".format(
                    path, getattr(exc, "strerror", None) or exc
                )
                self.step("restore", "fail", message)
                failures.append(message)
        if udev_changed:
            self.run_commands(
                [
                    {
                        "argv": ["udevadm", "control", "--reload-rules"],
                        "why": "udev reads the restored rules",
                    }
                ],
                "restore",
            )
        down = self.server_pid() is None
        restarted_before = self.restart_attempted
        # A standalone rollback restarts when the apply needed one (old manifests: when an
        # option file changed back); a dynamic-only change is undone live.
        wanted = self.how.get("restart_needed", True) and option_changed
        if down or self.restart_attempted or (standalone and wanted):
            if self.how.get("restart"):
                try:
                    self.restart("restart-old")
                except JobFailed as exc:
                    failures.append(f"restart with the old configuration failed: {exc}")
                    self.step("restart-old", "fail", str(exc))
                    self.explain()
            else:
                failures.append(
                    "the server needs a restart and no restart command is known "
                    "(give one with --restart-command)"
                )
        dynamic = [v for v in values if v["kind"] == "dynamic"]
        if self.live_set is not None and not standalone:
            # Values this apply never set live are still as saved: nothing to set back.
            dynamic = [v for v in dynamic if v["key"] in self.live_set]
        if dynamic and not (restarted_before or self.restarted):
            applied: dict[str, Any] = {
                str(_set_key(sql)): _set_value(sql) for sql in self.bundle.get("statements") or []
            }
            applied.update(self.globals_now())
            dynamic = ordered_settings(dynamic, lambda v: v["key"], lambda v: v["value"], applied)
            failures += self.set_values(dynamic, "restore", True)
        elif dynamic:
            self.step(
                "restore",
                "ok",
                "dynamic variables come back from the restored files with the restart",
            )
        self.errors += failures
        self.step(
            "restore",
            "fail" if failures else "ok",
            "%d item(s) failed" % len(failures) if failures else "snapshot restored",
        )
        return not failures

    # -- main -------------------------------------------------------------------------------
    def apply(self) -> str:
        """The apply order; the final state."""
        bundle = self.bundle
        self.live_set = set()
        if self.cancel_requested():
            self.cancelled = True
            self.errors.append("cancelled by the user before anything was changed")
            self.step("cancel", "info", self.errors[-1])
            return "refused"
        try:
            self.check_unchanged()
        except JobFailed as exc:
            self.errors.append(str(exc))
            self.step("check", "fail", str(exc))
            return "refused"
        restarting = bool(bundle.get("restart_needed"))
        try:
            self.write_files()
            if bundle.get("validate") or bundle.get("buffer_pool_bytes"):
                self.validate()
            self.check_cancel("after validating")
            ok, out = self.client("SELECT 1") if self.how.get("client") else (False, "")
            self.client_ok = ok
            statements = bundle.get("statements") or []
            if restarting:
                # The restart reads these values from the option files: setting them live
                # too would apply them twice (a buffer-pool or redo-log resize started
                # right before a shutdown), and the check after the restart would then
                # not prove that the files carry them.
                persisted = set(bundle.get("persisted_keys") or [])
                held = [sql for sql in statements if _set_key(sql) in persisted]
                statements = [sql for sql in statements if _set_key(sql) not in persisted]
                if held:
                    self.step(
                        "dynamic",
                        "info",
                        "not set live, the restart applies them from the option files: "
                        + ", ".join(str(_set_key(sql)) for sql in held),
                    )
            if statements and not ok:
                note = (
                    f"SET GLOBAL skipped: the job cannot log in to the server ({out[-200:]}); "
                    "the values apply at the next restart"
                )
                self.warnings.append(note)
                self.step("dynamic", "warn", note)
            elif statements:
                saved = {
                    v["key"]: v.get("value")
                    for v in self.manifest.get("values", [])
                    if v.get("kind") == "dynamic"
                }
                saved.update(self.globals_now())
                statements = ordered_settings(statements, _set_key, _set_value, saved)
                for sql in statements:
                    self.step("dynamic", "start", sql)
                    good, reply = self.client(sql)
                    if not good:
                        raise JobFailed(f"{sql} failed: {reply[-300:]}")
                    self.live_set.add(str(_set_key(sql)))
                    self.step("dynamic", "ok", sql)
                    self.check_cancel("after " + sql)
            self.set_persisted(bundle.get("persist_statements") or [], ok)
            self.set_values(
                [v for v in bundle.get("values", []) if v["kind"] != "dynamic"], "live", False
            )
            self.run_commands(bundle.get("commands") or [], "commands")
            if restarting:
                self.check_cancel("before the restart")
                if bundle.get("restart_requested"):
                    self.step(
                        "restart",
                        "info",
                        "asked for: every change takes effect live, the restart proves the "
                        "server starts with the new option files",
                    )
                self.restart("restart")
                self.check_cancel("after the restart")
                self.check_settings()
                self.watch()
            elif ok:
                self.check_settings()
            self.check_cancel("after the changes were made")
        except (JobFailed, OSError, KeyError, ValueError) as exc:
            self.errors.append(str(exc))
            self.step("apply", "info" if isinstance(exc, JobCancelled) else "fail", str(exc))
            if not self.log_lines and not isinstance(exc, JobCancelled):
                self.explain()
            return "rolled-back" if self.restore(False) else "failed-rollback"
        if bundle.get("confirm_within"):
            if not self.wait_confirm():
                self.errors.append(
                    "cancelled by the user while waiting for a confirmation"
                    if self.cancelled
                    else "not confirmed within {} s".format(bundle["confirm_within"])
                )
                return "rolled-back" if self.restore(False) else "failed-rollback"
        self.step("apply", "ok", "applied")
        return "applied"

    def main(self) -> str:
        """Run the job; always ends with a final state file."""
        with open(os.path.join(self.dir, "pid"), "w") as fh:
            fh.write("%d\n" % os.getpid())
        self.state("running")
        self.step(
            "start",
            "ok",
            "job %s (%s), pid %d" % (self.bundle.get("id"), self.bundle.get("mode"), os.getpid()),
        )
        try:
            self.load_snapshot()
        except (JobFailed, OSError, ValueError, KeyError) as exc:
            self.errors.append("snapshot unusable, nothing changed: %s" % exc)
            self.step("snapshot", "fail", self.errors[-1])
            final = "refused" if self.bundle.get("mode") == "apply" else "failed-rollback"
            self.state(final)
            return final
        self.step(
            "snapshot",
            "ok",
            "snapshot %s verified (%d file(s))"
            % (self.manifest.get("id"), len(self.manifest.get("files", []))),
        )
        # One job at a time per server instance (its identity; old snapshots: its socket).
        key = lock_key(self.manifest, self.how)
        lock = take_lock(key)
        if lock is None:
            self.errors.append("another InnoTune job is changing this server right now")
            self.step("start", "fail", self.errors[-1])
            self.mark_snapshots("refused")
            self.state("refused")
            return "refused"
        try:
            final = self.run_locked()
            self.mark_snapshots(final)
            self.retain(key)
            self.step("end", "ok" if final in ("applied", "rolled-back") else "fail", final)
            self.state(final)
        finally:
            lock.close()
        remove_free_locks()
        return final

    def run_locked(self) -> str:
        """The job's work, holding the instance's lock; the final state."""
        if self.bundle.get("mode") == "apply":
            self.mark(self.manifest.get("id"), "applying")
        if self.bundle.get("mode") == "restore":
            try:
                self.load_chain()
            except (JobFailed, OSError, ValueError, KeyError) as exc:
                self.errors.append("nothing was restored: %s" % exc)
                self.step("snapshot", "fail", self.errors[-1])
                return "refused"
        try:
            if self.bundle.get("mode") == "restore":
                return "rolled-back" if self.restore(True) else "failed-rollback"
            return self.apply()
        except Exception as exc:  # noqa: BLE001 - the state file must always be written
            self.errors.append(f"internal error: {exc!r}")
            self.step("job", "fail", self.errors[-1])
            return "rolled-back" if self.restore(False) else "failed-rollback"

    # -- the snapshots' record ----------------------------------------------------------------
    def snapshots_root(self) -> str:
        """The directory holding every snapshot (the parent of this job's)."""
        return os.path.dirname(str(self.bundle["snapshot_dir"]).rstrip("/"))

    def mark(self, snapshot_id: Any, state: str, **extra: Any) -> None:
        """Record a snapshot's state; a snapshot gone meanwhile is only noted."""
        if not snapshot_id or "/" in str(snapshot_id):
            return
        try:
            write_snapshot_state(
                os.path.join(self.snapshots_root(), str(snapshot_id)),
                state,
                by=self.bundle.get("id"),
                **extra,
            )
        except (OSError, KeyError) as exc:
            self.step(
                "record", "warn", "state of snapshot %s not recorded: %s" % (snapshot_id, exc)
            )

    def mark_snapshots(self, final: str) -> None:
        """After the job: its snapshot's state, and (a restore) the newer ones it undid."""
        own = self.manifest.get("id") or self.bundle.get("snapshot_id")
        if self.bundle.get("mode") == "restore":
            if final == "rolled-back":
                self.mark(own, "rolled-back")
                for newer in self.undone:
                    self.mark(newer, "superseded", superseded_by=own)
                if self.undone:
                    self.step(
                        "record",
                        "info",
                        "superseded by this restore: " + ", ".join(self.undone),
                    )
            elif final == "failed-rollback":
                self.mark(own, "failed-rollback")
            return
        state = "kept" if final == "applied" and self.kept else final
        self.mark(own, state)

    def load_chain(self) -> None:
        """A later rollback: the newer snapshots of this instance still in force come too.

        Restoring them newest first, then this one, is the same as putting back, for every
        file and value, the oldest saved copy among them: the merged manifest.
        """
        if self.bundle.get("only"):
            return
        records = read_records(self.snapshots_root(), os.path.dirname(self.dir.rstrip("/")))
        chain = newer_in_force(records, str(self.manifest.get("id")))
        expected = self.bundle.get("undo")
        if expected is not None and list(expected) != chain:
            raise JobFailed(
                "the snapshots of this server changed since the rollback was previewed "
                "(newer ones in force now: %s); preview it again" % (", ".join(chain) or "none")
            )
        if not chain:
            return
        manifests = []
        for newer in chain:
            directory = os.path.join(self.snapshots_root(), newer)
            manifests.append(_verified_manifest(directory))
        self.undone = chain
        self.manifest = merge_manifests(self.manifest, manifests)
        self.step(
            "snapshot",
            "info",
            "also undoing the later change(s) of this server: " + ", ".join(chain),
        )

    def retain(self, key: str) -> None:
        """Keep at most ``keep`` snapshots of this instance (the bundle says how many)."""
        keep = self.bundle.get("keep")
        if not keep or not instance_key(self.manifest):
            return  # snapshots recorded before identities are pruned only when asked
        try:
            done = prune(
                int(keep),
                instance_key(self.manifest),
                self.snapshots_root(),
                os.path.dirname(self.dir.rstrip("/")),
                held=instance_key(self.manifest),
                protect=tuple(str(i) for i in [self.manifest.get("id"), *self.undone] if i),
                spare_job=os.path.basename(self.dir.rstrip("/")),
            )
        except (OSError, ValueError) as exc:
            self.step("retain", "warn", "old snapshots not pruned: %s" % exc)
            return
        if done["removed"]:
            self.step(
                "retain",
                "info",
                "kept %d snapshot(s) of this server; removed %s"
                % (int(keep), ", ".join(done["removed"])),
            )


def _verified_manifest(directory: str) -> dict[str, Any]:
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


#: Pairs (low, high) of dynamic variables the server keeps as low <= high. MySQL clamps a
#: SET GLOBAL that would break it (innodb_io_capacity_update() and
#: innodb_io_capacity_max_update() in ha_innodb.cc: "Setting innodb_io_capacity to ...");
#: MariaDB 10.11 moves the other value instead. Either way the pair must change in an order
#: where every single statement keeps low <= high.
ORDERED_PAIRS = (("innodb_io_capacity", "innodb_io_capacity_max"),)


def _set_value(sql: str) -> str | None:
    """The value a ``SET GLOBAL name = value`` statement sets (quotes removed)."""
    match = re.match(r"^\s*SET\s+GLOBAL\s+[A-Za-z0-9_]+\s*=\s*'?([^']*)'?\s*$", sql, re.I)
    return match.group(1) if match else None


def _number(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def ordered_settings(
    items: list[Any], key_of: Any, value_of: Any, now: dict[str, Any]
) -> list[Any]:
    """``items`` (statements or saved values) in an order the server takes without clamping.

    For each pair in :data:`ORDERED_PAIRS` that both change: when ``low`` rises above its
    value ``now`` the ``high`` one goes first (it makes room), otherwise ``low`` goes first
    (it gets out of the way). Every statement then keeps low <= high, given that the final
    values do. Items outside the pairs keep their places.
    """
    items = list(items)
    for low, high in ORDERED_PAIRS:
        spots = {key_of(item): i for i, item in enumerate(items)}
        if low not in spots or high not in spots:
            continue
        i, j = sorted((spots[low], spots[high]))
        new_low, old_low = _number(value_of(items[spots[low]])), _number(now.get(low))
        raising = new_low is not None and old_low is not None and new_low > old_low
        first, second = (high, low) if raising else (low, high)
        pair = {low: items[spots[low]], high: items[spots[high]]}
        items[i], items[j] = pair[first], pair[second]
    return items


def _set_key(sql: str) -> str | None:
    """The variable a ``SET GLOBAL name = value`` statement sets."""
    match = re.match(r"^\s*SET\s+GLOBAL\s+([A-Za-z0-9_]+)\s*=", sql, re.IGNORECASE)
    return match.group(1).lower() if match else None


def _reads(path: str) -> list[str] | None:
    """The value a sysfs/procfs file holds now (split on blanks), None when unreadable."""
    try:
        with open(path) as fh:
            return active_value(fh.read()).split()
    except OSError:
        return None


def _mode_owner(path: str) -> tuple[str, str]:
    st = os.stat(path)
    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return "%04o" % (st.st_mode & 0o7777), f"{user}:{group}"


def _job_alive(pid: int, directory: str) -> bool:
    """True while ``pid`` is this job's process (not a zombie, not a reused pid)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        with open("/proc/%d/stat" % pid) as fh:
            if fh.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
                return False
    except OSError:
        return False
    return directory in argv and "--watchdog" not in argv


def _read_state(directory: str) -> dict[str, Any]:
    data = read_or_none(os.path.join(directory, "state.json"))
    try:
        return json.loads(data.decode("utf-8")) if data else {}
    except ValueError:
        return {}


def watchdog(directory: str, poll: float = 0.5, start_wait: float = 120.0) -> str:
    """The dead-man switch next to a job: restore its snapshot if the job dies unfinished.

    It runs as its own detached process (launched with the job), so a job killed by
    SIGKILL, the OOM killer or a crash still ends rolled back. It never acts while the job's
    process lives (a health wait may legitimately take minutes), nor when the job never
    started (nothing was changed). Once the job's process is gone without a final state for
    ``watchdog_grace`` seconds, it runs the job in restore mode in ``DIR-rescue`` and writes
    the outcome into the dead job's own journal and state, so a reconnecting client sees
    ``rolled-back`` (or ``failed-rollback``).

    Returns:
        What it did: ``ended`` (the job ended by itself), ``not-started`` or the rescue's
        final state.
    """
    directory = directory.rstrip("/")
    with open(os.path.join(directory, "watchdog.pid"), "w") as fh:
        fh.write("%d\n" % os.getpid())
    with open(os.path.join(directory, "bundle.json"), encoding="utf-8") as fh:
        bundle = json.load(fh)
    grace = float(bundle.get("watchdog_grace") or 10.0)
    began = time.time()
    dead_since: float | None = None
    pid: int | None = None
    while True:
        if not os.path.isdir(directory):
            return "ended"  # the job's record was removed: nothing left to watch over
        if _read_state(directory).get("state") in FINAL:
            return "ended"
        try:
            with open(os.path.join(directory, "pid")) as fh:
                pid = int(fh.read().strip())
        except (OSError, ValueError):
            pid = None
        if pid is None and time.time() - began > start_wait:
            return "not-started"
        if pid is None or _job_alive(pid, directory):
            dead_since = None
        elif dead_since is None:
            dead_since = time.time()
        elif time.time() - dead_since >= grace:
            break
        time.sleep(poll)
    if _read_state(directory).get("state") in FINAL:
        return "ended"
    rescue_dir = directory + "-rescue"
    os.makedirs(rescue_dir, mode=0o700, exist_ok=True)
    with open(os.path.join(directory, "job.py"), "rb") as src:
        source = src.read()
    atomic_write(os.path.join(rescue_dir, "job.py"), source, 0o600, "")
    rescue_bundle = {
        "id": "%s-rescue" % bundle.get("id"),
        "mode": "restore",
        "snapshot_id": bundle.get("snapshot_id"),
        "snapshot_dir": bundle.get("snapshot_dir"),
        "how": bundle.get("how") or {},
        "only": True,  # its own snapshot only: the job it stands in for was the newest
    }
    atomic_write(
        os.path.join(rescue_dir, "bundle.json"),
        (json.dumps(rescue_bundle, sort_keys=True, indent=1) + "\n").encode(),
        0o600,
        "",
    )
    final = Job(rescue_dir).main()
    # The dead job's own record: its journal goes on, its state becomes final.
    dead = Job(directory)
    journal = read_or_none(os.path.join(directory, "journal.jsonl")) or b""
    dead.seq = journal.count(b"\n")
    dead.manifest = {"id": bundle.get("snapshot_id")}
    dead.step(
        "watchdog",
        "fail",
        "the job (pid %s) died before it ended; restoring snapshot %s"
        % (pid, bundle.get("snapshot_id")),
    )
    for raw in (read_or_none(os.path.join(rescue_dir, "journal.jsonl")) or b"").splitlines():
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        dead.step(
            "watchdog:" + str(doc.get("step")), str(doc.get("status")), str(doc.get("detail", ""))
        )
    rescued = _read_state(rescue_dir)
    dead.errors = [
        "the job (pid %s) died before it ended; the watchdog restored the snapshot" % pid
    ]
    dead.errors += list(rescued.get("errors") or [])
    dead.log_lines = list(rescued.get("log_lines") or [])
    dead.restarted = bool(rescued.get("restarted"))
    state = "rolled-back" if final == "rolled-back" else "failed-rollback"
    dead.step("end", "ok" if state == "rolled-back" else "fail", state + " (by the watchdog)")
    dead.state(state, rescued_by="%s-rescue" % bundle.get("id"))
    return final


def main(argv: list[str]) -> int:
    """Run as ``python3 job.py DIR`` (the job) or with ``--watchdog DIR`` (its dead-man).

    ``--list`` prints the snapshots with their states (JSON); ``--prune KEEP [INSTANCE]``
    applies the retention.
    """
    if len(argv) == 3 and argv[1] == "--watchdog":
        watchdog(argv[2])
        return 0
    if len(argv) == 2 and argv[1] == "--list":
        sys.stdout.write(json.dumps(read_records()) + "\n")
        return 0
    if len(argv) in (3, 4) and argv[1] == "--prune":
        done = prune(int(argv[2]), argv[3] if len(argv) == 4 else None)
        done["locks_removed"] = remove_free_locks()
        sys.stdout.write(json.dumps(done) + "\n")
        return 0
    if len(argv) != 2:
        sys.stderr.write("usage: job.py [--watchdog] DIR | --list | --prune KEEP [INSTANCE]\n")
        return 2
    final = Job(argv[1]).main()
    return 0 if final in ("applied", "rolled-back", "refused") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
