"""The job: check, write, validate, set live, restart, verify, confirm; or roll back.

Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import base64
import dataclasses
import os
import time
from typing import Any

from .errors import JobCancelled, JobFailed
from .files import atomic_write, read_or_none, remove_leftovers, sha256
from .formats import PersistItem, ValueItem, applied_words, count, value_id
from .health import ERROR_LINE
from .records import (
    instance_key,
    lock_key,
    merge_manifests,
    newer_in_force,
    prune,
    read_records,
    remove_free_locks,
    take_lock,
    verified_manifest,
    write_snapshot_state,
)
from .refusals import keeps_refused, refused_values
from .restore import Restore
from .values import ordered_settings, persist_sql, same_value, set_global


class Job(Restore):
    """One run of the job in DIR (``mode`` apply or restore)."""

    def check_unchanged(self) -> None:
        """Refuse when a file changed since the plan (checksums)."""
        self.step("check", "start", "files unchanged since the plan")
        changed = []
        for item in self.bundle.files:
            now = read_or_none(item.path)
            now_sum = None if now is None else sha256(now)
            if now_sum != item.before_sha256:
                changed.append(
                    "{} {} since the plan".format(
                        item.path,
                        "was removed"
                        if now is None
                        else ("appeared" if item.before_sha256 is None else "changed"),
                    )
                )
        if changed:
            raise JobFailed("; ".join(changed))
        self.step("check", "ok", "%s as planned" % count(len(self.bundle.files), "file"))

    def clean_leftovers(self) -> None:
        """Remove temp files an earlier job left when it was killed mid-write.

        They never end in ``.cnf`` (so no server ever read them), but they are clutter.
        """
        for item in self.bundle.files:
            for name in remove_leftovers(item.path):
                self.step("write", "info", "removed a leftover temp file " + name)

    def write_files(self) -> None:
        """Write every file atomically, read it back, record each."""
        self.clean_leftovers()
        for item in self.bundle.files:
            data = base64.b64decode(item.content_b64)
            self.step("write", "start", item.path)
            mode = int(item.mode, 8) if item.mode else None
            atomic_write(item.path, data, mode, item.owner)
            if read_or_none(item.path) != data:
                raise JobFailed(f"{item.path} does not read back as written")
            self.step(
                "write",
                "ok",
                "%s (%d bytes, sha256 %s)" % (item.path, len(data), sha256(data)[:12]),
            )
            self.check_cancel("after writing %s" % item.path)

    def validate(self) -> None:
        """Ask the server binary about the new files, and check the memory fits."""
        check = self.bundle.validate
        if check:
            self.step("validate", "start", " ".join(check.argv))
            status, out = self.run(check.argv, timeout=120, user=check.user or None)
            bad = [ln for ln in out.splitlines() if ERROR_LINE.search(ln)]
            if status != 0 or bad:
                self.log_lines = (bad or out.splitlines())[-25:]
                raise JobFailed(
                    "the server rejects the new options (exit %d): %s"
                    % (status, "; ".join(bad[:5]) or out.strip()[-300:])
                )
            self.step("validate", "ok", "the server binary accepts the options")
        pool = self.bundle.buffer_pool_bytes
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

    def check_settings(self) -> None:
        """Compare the settings in force with the expected ones (allowing rounding)."""
        expected = self.bundle.expected
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
            elif not same_value(out, str(wanted), key=key, rounded=True):
                wrong.append(f"{key} is {out}, not {wanted}")
        if wrong:
            raise JobFailed("settings in force differ from the plan: " + "; ".join(wrong))
        self.step("verify", "ok", ", ".join("{}={}".format(*kv) for kv in sorted(expected.items())))

    def wait_confirm(self) -> bool:
        """Wait for DIR/confirm until the deadline; True when it came."""
        seconds = float(self.bundle.confirm_within or 0)
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

    def set_persisted(self, items: list[PersistItem], logged_in: bool) -> None:
        """RESET PERSIST / SET PERSIST_ONLY: mysqld-auto.cnf must not undo the option files.

        Without them the change would be undone at the next start, so they are not skipped
        like SET GLOBAL when the job cannot log in: the apply fails and rolls back.
        """
        statements = [persist_sql(p.key, p.value, p.how) for p in items]
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

    def set_dynamic(self, dynamic: list[ValueItem]) -> None:
        """SET GLOBAL each typed value, in an order the server takes without clamping."""
        saved = {
            v["key"]: v.get("value")
            for v in self.manifest.get("values", [])
            if v.get("kind") == "dynamic"
        }
        saved.update(self.globals_now())
        done = self.live_set if self.live_set is not None else set()
        for item in ordered_settings(dynamic, _key, _value, saved):
            sql = set_global(item.key, str(item.value))
            self.step("dynamic", "start", sql)
            good, reply = self.client(sql)
            if not good:
                raise JobFailed(f"{sql} failed: {reply[-300:]}")
            done.add(item.key)
            self.step("dynamic", "ok", sql)
            self.check_cancel("after " + sql)

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
        # A failure shows what the server logged since the job began, never its older lines.
        self.mark_log()
        if not self.leave_out_refused():
            return "refused"
        restarting = bundle.restart_needed
        try:
            self.write_files()
            if bundle.validate or bundle.buffer_pool_bytes:
                self.validate()
            self.check_cancel("after validating")
            ok, out = self.client("SELECT 1") if self.how.get("client") else (False, "")
            self.client_ok = ok
            dynamic = [v for v in bundle.values if v.kind == "dynamic" and v.value is not None]
            if restarting:
                # The restart reads these values from the option files: setting them live
                # too would apply them twice (a buffer-pool or redo-log resize started
                # right before a shutdown), and the check after the restart would then
                # not prove that the files carry them.
                persisted = set(bundle.persisted_keys)
                held = [v.key for v in dynamic if v.key in persisted]
                dynamic = [v for v in dynamic if v.key not in persisted]
                if held:
                    self.step(
                        "dynamic",
                        "info",
                        "not set live, the restart applies them from the option files: "
                        + ", ".join(held),
                    )
            if dynamic and not ok:
                note = (
                    f"SET GLOBAL skipped: the job cannot log in to the server ({out[-200:]}); "
                    "the values apply at the next restart"
                )
                self.warnings.append(note)
                self.step("dynamic", "warn", note)
            elif dynamic:
                self.set_dynamic(dynamic)
            self.set_persisted(bundle.persisted, ok)
            self.set_values(
                [dataclasses.asdict(v) for v in bundle.values if v.kind != "dynamic"], "live", False
            )
            self.put_back_refused()
            self.run_commands(
                [c for c in bundle.commands if not keeps_refused(c, self.not_applied)], "commands"
            )
            if restarting:
                self.check_cancel("before the restart")
                if bundle.restart_requested:
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
        if bundle.confirm_within:
            if not self.wait_confirm():
                self.errors.append(
                    "cancelled by the user while waiting for a confirmation"
                    if self.cancelled
                    else f"not confirmed within {bundle.confirm_within} s"
                )
                return "rolled-back" if self.restore(False) else "failed-rollback"
        self.step("apply", "ok", applied_words(self.bundle.changes, self.not_applied))
        return "applied"

    # -- what the host refuses ----------------------------------------------------------------
    def leave_out_refused(self) -> bool:
        """Leave out the values the host refuses, and the files and commands keeping them.

        Returns:
            False when the host takes none of the plan's changes (nothing was written).
        """
        bundle = self.bundle
        self.not_applied.update(bundle.refused)  # the preview's "not supported on this host"
        refused = refused_values(bundle.values)
        for change_id, why in refused.items():
            self.not_applied.setdefault(change_id, why)
            self.warnings.append(why)
            self.step("check", "warn", why)
        bundle.values = [v for v in bundle.values if value_id(v) not in refused]
        kept = []
        unkept: set[str] = set()
        for item in bundle.files:
            folder = os.path.dirname(item.path)
            if item.covers and not os.path.isdir(folder):
                # A minimal image without /etc/udev/rules.d: nothing there would read the file.
                self.warnings.append(
                    "%s set live only, not kept across reboots: %s does not exist on this "
                    "host, so %s is not written" % (", ".join(item.covers), folder, item.path)
                )
                self.step("check", "warn", self.warnings[-1])
                unkept.update(item.covers)
                continue
            hit = keeps_refused(item, refused)
            if not hit:
                kept.append(item)
                continue
            self.step(
                "check",
                "info",
                "%s not written: it would keep %s, which this host refuses"
                % (item.path, ", ".join(hit)),
            )
            live_only = [c for c in item.covers if c not in refused]
            if live_only:
                self.warnings.append(
                    "%s set live only, until the next reboot: %s would also keep %s"
                    % (", ".join(live_only), item.path, ", ".join(hit))
                )
        bundle.files = kept
        bundle.commands = [
            c
            for c in bundle.commands
            if not keeps_refused(c, refused) and not unkept.intersection(c.covers)
        ]
        if bundle.changes and all(c in self.not_applied for c in bundle.changes):
            self.errors.append(
                "this host takes none of the changes, so nothing was changed: "
                + "; ".join(self.not_applied[c] for c in bundle.changes)
            )
            self.step("check", "fail", self.errors[-1])
            return False
        return True

    def put_back_refused(self) -> None:
        """Put back a persistence file already written for a value the host then refused."""
        saved = {e.get("path"): e for e in self.manifest.get("files", [])}
        for item in self.bundle.files:
            hit = keeps_refused(item, self.not_applied)
            if hit and item.path in saved:
                self.step(
                    "live",
                    "info",
                    "%s is not kept: it would keep %s, which this host refused"
                    % (item.path, ", ".join(hit)),
                )
                self.put_back(saved[item.path], "live")

    def main(self) -> str:
        """Run the job; always ends with a final state file."""
        try:
            return self.run_job()
        finally:
            self.journal.close()

    def run_job(self) -> str:
        """The job's run from its pid file to its final state."""
        with open(os.path.join(self.dir, "pid"), "w") as fh:
            fh.write("%d\n" % os.getpid())
        self.state("running")
        self.step(
            "start",
            "ok",
            "job %s (%s), pid %d" % (self.bundle.id, self.bundle.mode, os.getpid()),
        )
        try:
            self.load_snapshot()
        except (JobFailed, OSError, ValueError, KeyError) as exc:
            self.errors.append("snapshot unusable, nothing changed: %s" % exc)
            self.step("snapshot", "fail", self.errors[-1])
            final = "refused" if self.bundle.mode == "apply" else "failed-rollback"
            self.state(final)
            return final
        self.step(
            "snapshot",
            "ok",
            "snapshot %s verified (%s)"
            % (self.manifest.get("id"), count(len(self.manifest.get("files", [])), "file")),
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
        if self.bundle.mode == "apply":
            self.mark(self.manifest.get("id"), "applying")
        if self.bundle.mode == "restore":
            try:
                self.load_chain()
            except (JobFailed, OSError, ValueError, KeyError) as exc:
                self.errors.append("nothing was restored: %s" % exc)
                self.step("snapshot", "fail", self.errors[-1])
                return "refused"
        try:
            if self.bundle.mode == "restore":
                return "rolled-back" if self.restore(True) else "failed-rollback"
            return self.apply()
        except Exception as exc:  # noqa: BLE001 - the state file must always be written
            self.errors.append(f"internal error: {exc!r}")
            self.step("job", "fail", self.errors[-1])
            return "rolled-back" if self.restore(False) else "failed-rollback"

    # -- the snapshots' record ----------------------------------------------------------------
    def snapshots_root(self) -> str:
        """The directory holding every snapshot (the parent of this job's)."""
        return os.path.dirname(self.bundle.snapshot_dir.rstrip("/"))

    def mark(self, snapshot_id: Any, state: str, **extra: Any) -> None:
        """Record a snapshot's state; a snapshot gone meanwhile is only noted."""
        if not snapshot_id or "/" in str(snapshot_id):
            return
        try:
            write_snapshot_state(
                os.path.join(self.snapshots_root(), str(snapshot_id)),
                state,
                by=self.bundle.id,
                **extra,
            )
        except (OSError, KeyError) as exc:
            self.step(
                "record", "warn", "state of snapshot %s not recorded: %s" % (snapshot_id, exc)
            )

    def mark_snapshots(self, final: str) -> None:
        """After the job: its snapshot's state, and (a restore) the newer ones it undid."""
        own = self.manifest.get("id") or self.bundle.snapshot_id
        if self.bundle.mode == "restore":
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
        if self.bundle.only:
            return
        records = read_records(self.snapshots_root(), os.path.dirname(self.dir.rstrip("/")))
        chain = newer_in_force(records, str(self.manifest.get("id")))
        expected = self.bundle.undo
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
            manifests.append(verified_manifest(directory))
        self.undone = chain
        self.manifest = merge_manifests(self.manifest, manifests)
        self.step(
            "snapshot",
            "info",
            "also undoing the later %s of this server: "
            % ("change" if len(chain) == 1 else "changes")
            + ", ".join(chain),
        )

    def retain(self, key: str) -> None:
        """Keep at most ``keep`` snapshots of this instance (the bundle says how many)."""
        keep = self.bundle.keep
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
                "kept %s of this server; removed %s"
                % (count(int(keep), "snapshot"), ", ".join(done["removed"])),
            )


def _key(item: ValueItem) -> str:
    return item.key


def _value(item: ValueItem) -> str | None:
    return item.value
