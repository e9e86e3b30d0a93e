"""The preview: rendered from the describers' Actions, the same ones the job is built from.

Everything shown comes from the :class:`app.describe.actions.Action` values returned by
the describers of :mod:`app.describe.registry` (one ``describe(changes, host)`` per kind):
the option-file diffs, the sysfs/sysctl table, the persistence files in full, the live
writes, the commands, the SQL, the restart and the override warnings. The runner builds
the job's bundle from ``Preview.actions`` and the export writes the same Actions, so what
is shown is what the job does. Advice changes are never applied, so they are only counted
here.

The restart downtime is a rough estimate, documented in :func:`estimate_downtime`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from app.describe.actions import (
    Action,
    Command,
    FileWrite,
    Host,
    ValueChange,
    restart_carried,
)
from app.describe.registry import describe_all
from app.domain.hostfacts import HostFacts
from app.domain.plan import FileChecksum, Plan
from app.domain.words import count
from app.planner.report import spelled
from app.planner.values import duration_text, size_text
from app.targetjob.values import live_write, set_global


@dataclass(frozen=True)
class Downtime:
    """How long the server is likely to be down for the restart."""

    low_seconds: float
    high_seconds: float
    basis: str

    def text(self) -> str:
        """E.g. "about 5 s to 20 s (…)"."""
        return (
            f"about {duration_text(self.low_seconds)} to {duration_text(self.high_seconds)} "
            f"({self.basis})"
        )


def estimate_downtime(facts: HostFacts, plan: Plan) -> Downtime:
    """A rough restart downtime: flushing dirty pages at shutdown, then starting up.

    * Shutdown: with the default ``innodb_fast_shutdown=1`` InnoDB writes every dirty page
      first. Dirty bytes = dirty-page share × buffer pool; they are written at the probed
      sequential write rate (low) to a quarter of it (high; page flushing is not purely
      sequential). Without a probe, 100 MB/s (SSD) or 30 MB/s (spinning) stand in.
    * Startup: 2 s to 10 s for the server itself, plus 0.2 s to 1 s per GiB of the new
      buffer pool (allocation). Crash recovery does not apply: it is a clean shutdown.

    It is an order of magnitude for planning a maintenance window, not a promise.
    """
    server = facts.server
    pool = 0
    dirty = 0.0
    if server is not None:
        pool = int(server.variable("innodb_buffer_pool_size") or 0)
        dirty = server.dirty_pages_share or 0.0
    change = plan.change("innodb_buffer_pool_size")
    new_pool = int(change.proposed) if change and change.proposed.isdigit() else pool
    rate = None
    if facts.disk_probe is not None and facts.disk_probe.seq_write_mb_s:
        rate = facts.disk_probe.seq_write_mb_s * 1e6
    spinning = any(
        d.rotational for p in facts.os.write_paths for d in p.devices if d.rotational is not None
    )
    if rate is None:
        rate = (30 if spinning else 100) * 1e6
    dirty_bytes = dirty * pool
    gib = new_pool / 2**30
    low = 2 + dirty_bytes / rate + 0.2 * gib
    high = 10 + 4 * dirty_bytes / rate + 1.0 * gib
    basis = (
        f"{size_text(dirty_bytes)} of dirty pages to flush at "
        f"{rate / 1e6:.0f} MB/s, a {size_text(new_pool)} buffer pool to allocate"
    )
    return Downtime(low, high, basis)


@dataclass(frozen=True)
class Preview:
    """Everything the job would do, from the describers' Actions."""

    target: str
    actions: tuple[Action, ...]
    restart_needed: bool
    restart: Command | None
    downtime: Downtime | None
    live: tuple[str, ...]  # changes that take effect without a restart
    errors: tuple[str, ...]  # an applier refused: what and why (nothing would be written)
    notes: tuple[str, ...]
    advice_count: int
    # A restart asked for although no change needs one (``apply --restart``, the Apply
    # page's checkbox): it proves the server starts with the new option files.
    restart_requested: bool = False
    # The plan's own warnings (Trade-offs shows them too), beside what the describers found.
    plan_warnings: tuple[str, ...] = ()
    # The refusals worded for the window (no command-line flags); errors are the CLI's.
    window_errors: tuple[str, ...] = ()

    @property
    def will_restart(self) -> bool:
        """True when apply restarts the server (needed, or asked for)."""
        return self.restart_needed or self.restart_requested

    @property
    def option_files(self) -> tuple[FileWrite, ...]:
        """The option files written, each with its diff."""
        return tuple(f for a in self.actions for f in a.files if f.purpose == "option_file")

    @property
    def persistence_files(self) -> tuple[FileWrite, ...]:
        """The udev rules and sysctl.d files, shown in full."""
        return tuple(f for a in self.actions for f in a.files if f.purpose != "option_file")

    @property
    def values(self) -> tuple[ValueChange, ...]:
        """sysfs, sysctl and dynamic variable changes, current → new."""
        return tuple(v for a in self.actions for v in a.values)

    @property
    def live_writes(self) -> tuple[str, ...]:
        """The sysfs and sysctl values the job writes live, as it writes them."""
        return tuple(
            live_write(v.kind, v.key, v.new, v.path)[1]
            for v in self.values
            if v.kind in ("sysfs", "sysctl")
        )

    @property
    def commands(self) -> tuple[Command, ...]:
        """Every command, in the order the job runs them (the restart last)."""
        out = [c for a in self.actions for c in a.commands]
        return tuple(out + ([self.restart] if self.restart else []))

    @property
    def held_for_restart(self) -> tuple[str, ...]:
        """Dynamic variables apply does not set live because the restart applies them."""
        return tuple(restart_carried(self.actions)) if self.will_restart else ()

    @property
    def statements(self) -> tuple[str, ...]:
        """SQL statements apply runs, in its order (SET GLOBAL, then the persisted values).

        When apply restarts the server, the SET GLOBAL of a variable the option files
        carry is left out, as the job leaves it out (:attr:`held_for_restart`).
        """
        held = set(self.held_for_restart)
        live = [
            set_global(v.key, v.new)
            for v in self.values
            if v.kind == "dynamic" and v.key not in held
        ]
        return tuple(live + [s for a in self.actions for s in a.persist_statements])

    @property
    def live_now(self) -> tuple[str, ...]:
        """The changes that take effect live, before any restart."""
        held = set(self.held_for_restart)
        return tuple(i for i in self.live if i.split("@")[0] not in held)

    @property
    def server_files(self) -> tuple[str, ...]:
        """Files the server rewrites because of those statements (mysqld-auto.cnf)."""
        return tuple(sorted({f for a in self.actions for f in a.server_files}))

    @property
    def warnings(self) -> tuple[str, ...]:
        """What would override or undo a change, each with its fix."""
        return tuple(w for a in self.actions for w in a.warnings)

    @property
    def all_warnings(self) -> tuple[str, ...]:
        """The plan's warnings, then the describers' (each once)."""
        return tuple(dict.fromkeys((*self.plan_warnings, *self.warnings)))

    @property
    def unsupported(self) -> tuple[str, ...]:
        """Changes this host cannot take, or that could not be previewed."""
        return tuple(u for a in self.actions for u in a.unsupported)

    def file_checksums(self) -> tuple[FileChecksum, ...]:
        """sha256 of each file apply will change ("absent" files as None)."""
        seen: dict[str, FileChecksum] = {}
        for action in self.actions:
            for write in action.files:
                if write.read:  # a file never read has no checksum to hold apply to
                    seen[write.path] = FileChecksum(write.path, write.sha256_before)
        return tuple(seen.values())

    def text(self) -> str:
        """The whole preview as plain text (what "Save preview…" and --out write)."""
        out = [f"InnoTune preview for {self.target}", ""]
        for note in self.notes:
            out.append(f"Note: {note}")
        if self.errors:
            out.append("Refused (nothing of these would be written):")
            out += [f"  ! {e}" for e in self.errors]
            out.append("")
        out.append("== Option files ==")
        not_read = [u for a in self.actions if a.applier == "optionfile" for u in a.unsupported]
        if not self.option_files:
            out += not_read or ["(no option file changes)"]
        for write in self.option_files:
            what = "new file" if write.creates else "edited"
            out.append(f"{write.path} ({what}, mode {write.mode}, owner {write.owner or '-'})")
            if write.note:
                out.append(f"  why here: {write.note}")
            out.append(write.diff().rstrip("\n"))
            out.append("")
        out.append("== Settings, current → new ==")
        if not self.values:
            out.append("(none)")
        for v in self.values:
            where = f"{v.key}@{v.device}" if v.device else v.key
            live = "live" if v.live else "after restart"
            out.append(
                f"  {v.kind:8} {where}: {spelled(v.current, v.key)} → {spelled(v.new, v.key)}  "
                f"[{live}; kept: {v.persistent}]"
            )
        out.append("")
        out.append("== Persistence files (full content) ==")
        if not self.persistence_files:
            out.append("(none)")
        for write in self.persistence_files:
            state = "new file" if write.creates else "replaces the current file"
            out.append(f"--- {write.path} ({state}, mode {write.mode})")
            if write.note:
                out.append(f"    ({write.note})")
            out.append(write.after.decode("utf-8", "replace").rstrip("\n"))
            out.append("")
        out.append("== SQL ==")
        out += [f"  {s};" for s in self.statements] or ["(none)"]
        if self.held_for_restart:
            out.append(
                "  (not set live, the restart applies them from the option files: "
                + ", ".join(self.held_for_restart)
                + ")"
            )
        for path in self.server_files:
            out.append(
                f"  (the server rewrites {path}: it is in the snapshot, put back on rollback)"
            )
        out.append("")
        out.append("== Commands, in order ==")
        steps = [f"  {w}    # set live" for w in self.live_writes]
        steps += [f"  {c.line()}    # {c.why}" for c in self.commands]
        out += steps or ["(none)"]
        out.append("")
        out.append("== Restart ==")
        if self.restart_needed:
            out.append("The server must restart for some changes to take effect.")
            if self.downtime:
                out.append(f"Estimated downtime: {self.downtime.text()}.")
        elif self.restart_requested:
            out.append(
                "Every change takes effect live, but a restart was asked for: the server "
                "restarts afterwards to prove it starts with the new settings."
            )
            if self.downtime:
                out.append(f"Estimated downtime: {self.downtime.text()}.")
        else:
            out.append("No restart needed.")
        if self.live_now:
            out.append("Live (no restart): " + ", ".join(self.live_now))
        out.append("")
        out.append("== Warnings ==")
        # Never "none" when something is left out: the list below says what.
        empty = "(none besides what this host cannot take, below)" if self.unsupported else "(none)"
        out += [f"  ! {w}" for w in self.all_warnings] or [empty]
        if self.unsupported:
            out.append("")
            out.append("== Not supported or not previewed ==")
            out += [f"  - {u}" for u in self.unsupported]
        if self.advice_count:
            out.append("")
            out.append(
                f"{count(self.advice_count, 'advice item')} in the plan "
                f"{'is' if self.advice_count == 1 else 'are'} never applied by InnoTune "
                "(see `innotune plan`)."
            )
        return "\n".join(out) + "\n"


def describe_actions(
    plan: Plan, host: Host, errors: list[str], window_errors: list[str] | None = None
) -> list[Action]:
    """Every describer's Actions for the plan, in the order the job runs them.

    A describer that refuses (:class:`ApplyError`) adds its reason to ``errors``.
    """
    return describe_all(plan.changes, host, errors, window_errors)


def build_preview(plan: Plan, host: Host) -> Preview:
    """Gather what every applier describes for the plan."""
    errors: list[str] = []
    window_errors: list[str] = []
    notes: list[str] = []
    if not host.live:
        notes.append(
            "Built from saved facts without a connection: option files could not be read, "
            "current values come from the facts, and persistence files are shown as new."
        )
    container = host.facts.server.instance.container if host.facts.server is not None else None
    if container is not None:
        notes.append(
            f"The server runs in the {container.engine} container {container.name}: the kernel "
            "and disk settings are this host's (the container shares its kernel and disks), so "
            "they change for every container and program on it."
        )
    actions = describe_actions(plan, host, errors, window_errors)
    restart_needed = any(a.restart_needed for a in actions)
    restart = next((a.restart for a in actions if a.restart is not None), None)
    server = host.facts.server
    argv = server.instance.restart_argv() if server is not None else None
    if restart is None and restart_needed and argv:
        # Offline the option files are not read, so no applier named the restart; the job
        # restarts the same way (the instance's service manager).
        restart = Command(tuple(argv), "restart the server so the new values apply")
    downtime = estimate_downtime(host.facts, plan) if restart_needed else None
    live = tuple(
        sorted({c.id for c in plan.changes if c.live and c.target != "advice"} - _refused(actions))
    )
    return Preview(
        target=plan.facts.target,
        actions=tuple(actions),
        restart_needed=restart_needed,
        restart=restart,
        downtime=downtime,
        live=live,
        errors=tuple(errors),
        window_errors=tuple(window_errors),
        notes=tuple(notes),
        advice_count=sum(1 for c in plan.changes if c.target == "advice"),
        plan_warnings=plan.warnings,
    )


def _refused(actions: list[Action]) -> set[str]:
    # A udev rule that cannot be written refuses only the keeping, not the live value.
    return {
        i
        for a in actions
        if a.unsupported and not a.files and not a.commands and not a.values and a.applier != "udev"
        for i in a.change_ids
    }


def with_requested_restart(
    preview: Preview, facts: HostFacts, plan: Plan, restart_argv: Sequence[str] | None = None
) -> Preview:
    """The preview of an apply that restarts even though no change needs it.

    The restart command is the one given, else the service manager's (None when the
    server was started by hand: apply then refuses and asks for one), and the downtime is
    estimated as for a needed restart.
    """
    if preview.restart_needed or preview.restart_requested:
        return preview
    argv = list(restart_argv) if restart_argv else None
    if argv is None and facts.server is not None:
        argv = facts.server.instance.restart_argv()
    restart = (
        Command(tuple(argv), "restart the server to prove it starts with the new settings")
        if argv
        else None
    )
    return dataclasses.replace(
        preview,
        restart_requested=True,
        restart=restart,
        downtime=estimate_downtime(facts, plan),
    )


def with_checksums(plan: Plan, preview: Preview) -> Plan:
    """The plan with ``file_checksums`` filled, so apply can refuse a file changed since."""
    return dataclasses.replace(plan, file_checksums=preview.file_checksums())
