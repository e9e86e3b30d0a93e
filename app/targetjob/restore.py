"""Setting values live, running follow-up commands, and putting a snapshot back.

Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import base64
import errno
import os
from typing import Any

from .errors import JobFailed
from .files import atomic_write, fsync_dir, mode_owner, read_or_none, reads, sha256
from .formats import CommandItem, ValueItem, count, value_id
from .health import Health
from .values import active_value, ordered_settings, set_global, sysctl_path


class Restore(Health):
    """Writing values, running commands, restoring the snapshot newest first."""

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
                    try:
                        sql = set_global(key, new)
                    except ValueError as exc:
                        raise OSError(errno.EINVAL, str(exc)) from None
                    ok, out = self.client(sql)
                    if not ok:
                        raise OSError(errno.EIO, out or "the client could not log in")
                    if self.live_set is not None and not restoring:
                        self.live_set.add(key)
                elif kind in ("sysfs", "sysctl"):
                    path = str(value.get("path") or "") if kind == "sysfs" else sysctl_path(key)
                    if restoring and reads(path) == new.split():
                        # Already the saved value: a second rollback writes nothing.
                        self.step(phase, "ok", f"{what} (already)")
                        continue
                    try:
                        with open(path, "w") as fh:
                            fh.write(new + "\n")
                    except FileNotFoundError:
                        self.refused(value, f"{path} does not exist: not supported on this host")
                        self.step(phase, "warn", self.warnings[-1])
                        continue
                    except OSError as exc:
                        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and not restoring:
                            note = (
                                f"{path} is read-only ({exc.strerror}): not supported on this host"
                            )
                            self.refused(value, note)
                            self.step(phase, "warn", note)
                            continue
                        raise
                    with open(path) as fh:
                        now = active_value(fh.read())
                    if now.split() != new.split():
                        raise OSError(errno.EIO, f"reads {now} after writing {new}")
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

    def refused(self, value: dict[str, Any], why: str) -> None:
        """Record a value the host refused: not applied, and said so."""
        fields = {k: v for k, v in value.items() if k in ValueItem.__dataclass_fields__}
        self.not_applied.setdefault(value_id(ValueItem(**fields)), why)
        self.warnings.append(why)

    def run_commands(self, commands: list[CommandItem], phase: str) -> None:
        """Run the follow-up commands (udevadm ...); a failure is a warning, not fatal."""
        for command in commands:
            self.step(phase, "start", " ".join(command.argv))
            status, out = self.run(command.argv, timeout=60)
            if status != 0:
                note = "`{}` failed ({}): {}".format(
                    " ".join(command.argv),
                    status,
                    out.strip()[-200:],
                )
                self.warnings.append(note)
                self.step(phase, "warn", note)
            else:
                self.step(phase, "ok", command.why)

    def put_back(self, entry: dict[str, Any], phase: str) -> bool:
        """Put one file of the snapshot back; False when it already was as saved.

        Raises:
            OSError, KeyError, ValueError: it could not be put back.
        """
        path = entry["path"]
        now = read_or_none(path)
        if entry["existed"]:
            data = base64.b64decode(entry["content_b64"])
            if now == data and mode_owner(path) == (entry["mode"], entry["owner"]):
                self.step(phase, "ok", f"{path} already as in the snapshot")
                return False
            atomic_write(path, data, int(entry["mode"], 8), entry["owner"])
            if sha256(read_or_none(path) or b"") != entry["sha256"]:
                raise OSError(errno.EIO, "does not read back as the snapshot")
            self.step(phase, "ok", "{} put back (sha256 {})".format(path, entry["sha256"][:12]))
            return True
        if now is None:
            self.step(phase, "ok", f"{path} already absent")
            return False
        os.unlink(path)
        fsync_dir(os.path.dirname(path))
        self.step(phase, "ok", f"{path} removed (it did not exist before)")
        return True

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
                if not self.put_back(entry, "restore"):
                    continue
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
                    CommandItem(
                        ["udevadm", "control", "--reload-rules"], "udev reads the restored rules"
                    )
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
        if dynamic and not (restarted_before or self.restarted) and not self.how.get("client"):
            # No login on the target (root wants a password the job is never given): the
            # apply could not set these live either, as a rule; the restored files give them
            # back at the next restart, and the warning says so.
            note = (
                "SET GLOBAL skipped: the job cannot log in to the server; the restored option "
                "files give back " + ", ".join(v["key"] for v in dynamic) + " at the next restart"
            )
            self.warnings.append(note)
            self.step("restore", "warn", note)
        elif dynamic and not (restarted_before or self.restarted):
            applied: dict[str, Any] = {
                v.key: v.value for v in self.bundle.values if v.kind == "dynamic"
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
            "%s failed" % count(len(failures), "item") if failures else "snapshot restored",
        )
        return not failures
