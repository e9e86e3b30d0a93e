"""`innotune apply`, `innotune snapshots` and `innotune rollback`.

``apply`` shows the preview, asks (or takes ``--yes``), then hands the work to one
detached job on the target (:mod:`app.appliers.runner`), which snapshots first and rolls
back by itself when anything fails. ``snapshots`` lists the snapshots and jobs kept on
the target; ``rollback`` restores one of them.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.cli import add_target_arguments
from app.commands import Handler
from app.commands.common import add_persisted_argument
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.domain.errors import InnoTuneError

APPLY_DESCRIPTION = """\
Apply a plan to TARGET: the plan saved by `innotune preview --plan-out PLAN.json` (its file
checksums must still match), or the one the slider options give. The preview is printed and
nothing happens without your consent (a prompt, or --yes).

Before the first change a snapshot of every file and value InnoTune will touch is stored on
the target (/var/lib/innotune/snapshots, root-only) and on this computer. The change itself
runs on the target as one detached job: refuse if a file changed since the plan, write files
atomically, validate with the server binary before any restart, set live values, restart
only when needed, judge health by polling, check the settings in force, watch for a crash.
On any failure the job restores the snapshot and restarts on the old configuration; it
finishes even if the connection drops (`innotune snapshots TARGET` shows how it ended).

With --restart the server is restarted afterwards even when every change takes effect
live: it proves the server still starts with the new option files (so the values survive
the next restart), and a later rollback of that snapshot restarts too.

Ctrl-C while the job runs cancels it safely: before anything was written nothing is
changed; after that the job rolls back to the snapshot (a restart under way is finished
first, so the server is never left down).
"""


SNAPSHOTS_DESCRIPTION = """\
List the snapshots kept on TARGET per server instance (its data directory and option
file), newest first, each with its state: applied, kept (confirmed), rolled back,
superseded (a rollback to an older snapshot of that instance undid it too), refused
(nothing was changed) or awaiting confirmation. Then how each apply or rollback job
there ended, including one interrupted by a dropped link. --instance shows one instance.

With --prune, at most --keep snapshots per instance are kept (default 20, or
INNOTUNE_KEEP_SNAPSHOTS), on the target and on this computer: rolled-back, superseded
and refused ones go first, oldest first; the newest one in force always stays. Every
apply and rollback prunes its own instance the same way. Free lock files are removed.
"""

ROLLBACK_DESCRIPTION = """\
Restore a snapshot on TARGET: every file back byte for byte, created files removed,
sysfs/sysctl/variables back, and a restart when an option file changed back. Checksums
are verified first.

Without SNAPSHOT: the newest snapshot of the chosen instance (--instance, or the only
server running) whose changes are still in force; when none is, nothing is changed.
Naming a snapshot of another instance, or one already rolled back or superseded, asks
first (without a terminal: only with --yes), and says why. Restoring an older snapshot
while newer changes of the same instance are in force undoes those too (the preview
lists them; they become superseded).
"""

KEEP_HELP = "snapshots kept per instance (default 20, or INNOTUNE_KEEP_SNAPSHOTS)"


def _keep(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError("--keep takes a number from 1 to 1000")
    return int(text)


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the apply, snapshots and rollback subcommands."""
    parser = subparsers.add_parser(
        "apply",
        help="apply a plan on the target with a snapshot, validation and automatic rollback",
        description=APPLY_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(parser)
    parser.add_argument(
        "--plan", metavar="PLAN.json", help="the plan to apply (from preview --plan-out)"
    )
    add_slider_arguments(parser)
    add_persisted_argument(parser)
    parser.add_argument(
        "--sample",
        type=float,
        default=None,
        metavar="SECONDS",
        help="sample status counters this long for the redo slider (default 10; 0 with --plan)",
    )
    parser.add_argument("--yes", action="store_true", help="apply without asking")
    parser.add_argument(
        "--restart",
        action="store_true",
        help="restart the server afterwards even when every change takes effect live, to "
        "prove it starts with the new settings (a rollback of it restarts too)",
    )
    parser.add_argument(
        "--restart-command",
        metavar="CMD",
        help="how to restart the server when no service manager is found (run on the target)",
    )
    parser.add_argument(
        "--confirm-within",
        type=float,
        metavar="SECONDS",
        help="roll back on the target unless the change is confirmed within SECONDS",
    )
    parser.add_argument(
        "--health-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a restart (crash recovery included) may take (default 300)",
    )
    parser.add_argument(
        "--watch",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="watch the server this long after a restart for a crash (default 15)",
    )
    parser.add_argument("--keep", type=_keep, metavar="N", help=KEEP_HELP)
    handlers["apply"] = run_apply

    listing = subparsers.add_parser(
        "snapshots",
        help="list the snapshots per server instance with their state, and the jobs",
        description=SNAPSHOTS_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(listing)
    listing.add_argument(
        "--prune",
        action="store_true",
        help="keep at most --keep snapshots per instance, on the target and on this computer",
    )
    listing.add_argument("--keep", type=_keep, metavar="N", help=KEEP_HELP)
    handlers["snapshots"] = run_snapshots

    back = subparsers.add_parser(
        "rollback",
        help="restore a snapshot of the chosen instance (its newest in force by default)",
        description=ROLLBACK_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(back)
    back.add_argument("snapshot", nargs="?", metavar="SNAPSHOT", help="snapshot id")
    back.add_argument("--yes", action="store_true", help="roll back without asking")
    back.add_argument(
        "--restart-command", metavar="CMD", help="how to restart the server (run on the target)"
    )
    back.add_argument("--keep", type=_keep, metavar="N", help=KEEP_HELP)
    handlers["rollback"] = run_rollback


def local_snapshot_dir(label: str) -> Path:
    """``<data dir>/snapshots/<host>`` on this computer."""
    from app.places import app_data_dir

    safe = re.sub(r"[^A-Za-z0-9_.@:-]+", "_", label).strip("._") or "host"
    return app_data_dir() / "snapshots" / safe


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _consent(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        _say("innotune: not a terminal and no --yes given: nothing was changed.")
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _print_status(status: Any) -> None:
    print(f"Job {status.job_id}: {status.state}" + (" (cancelled)" if status.cancelled else ""))
    if status.snapshot_id:
        print(f"  snapshot  {status.snapshot_id}")
    if status.downtime_seconds is not None:
        print(f"  restart   {status.downtime_seconds:.1f} s until healthy")
    for error in status.errors:
        print(f"  error     {error}")
    for warning in status.warnings:
        print(f"  warning   {warning}")
    if status.log_lines:
        print("  error log:")
        for line in status.log_lines:
            print(f"    {line}")


def _open(args: argparse.Namespace) -> Any:
    from app.cli import secrets_from_args, target_from_args
    from app.commands.common import cli_opener

    target = target_from_args(args)
    secrets = secrets_from_args(args, target)
    return target, cli_opener(
        target,
        sudo_password=secrets.sudo_password,
        login_password=secrets.login_password,
        key_passphrase=secrets.key_passphrase,
        accept_fingerprint=target.options.accept_host_key,
    )


def _facts_and_plan(args: argparse.Namespace, conn: Any) -> tuple[Any, Any]:
    from app.domain.plan import Plan
    from app.inspect.inspection import inspect
    from app.knobs import default_catalogue
    from app.planner import make_plan

    sample = args.sample if args.sample is not None else (0.0 if args.plan else 10.0)
    if not 0 <= sample <= 600:
        raise InnoTuneError("--sample must be between 0 and 600 seconds.")
    facts = inspect(
        conn.transport,
        conn.instances,
        conn.instance,
        conn.session,
        sample_seconds=sample,
        use_sudo=conn.sudo_mode in ("root", "nopasswd", "password-ok"),
        say=lambda text: _say(f"… {text}"),
    )
    if args.plan:
        try:
            plan = Plan.from_json(Path(args.plan).read_text())
        except OSError as exc:
            raise InnoTuneError(f"Cannot read {args.plan}: {exc.strerror}.") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise InnoTuneError(
                f"{args.plan} is not an InnoTune plan: {exc}",
                "Save one with `innotune preview TARGET --plan-out PLAN.json`.",
            ) from None
    else:
        plan = make_plan(facts, positions_from_args(args, facts), default_catalogue())
    return facts, plan


def stale_files(plan: Any, actions: Any) -> list[str]:
    """Files whose checksum differs from the one the saved plan recorded."""
    now = {w.path: w.sha256_before for a in actions for w in a.files}
    return [
        f"{c.path} (planned {'absent' if c.sha256 is None else c.sha256[:12]}, now "
        f"{'absent' if now.get(c.path) is None else str(now[c.path])[:12]})"
        for c in plan.file_checksums
        if c.path in now and now[c.path] != c.sha256
    ]


def run_apply(args: argparse.Namespace) -> int:
    """Preview, consent, then the detached job; follow it to its end."""
    from app.appliers import runner
    from app.appliers.actions import Host
    from app.appliers.preview import build_preview, with_requested_restart
    from app.commands.common import connect

    if args.confirm_within is not None and not 5 <= args.confirm_within <= 3600:
        raise InnoTuneError("--confirm-within must be between 5 and 3600 seconds.")
    conn = connect(args)
    try:
        facts, plan = _facts_and_plan(args, conn)
        assert facts.server is not None
        host = Host(
            facts,
            conn.transport,
            conn.session,
            sudo=conn.sudo_mode in ("root", "nopasswd", "password-ok"),
            persisted=args.persisted,
        )
        preview = build_preview(plan, host)
        restart_argv = runner.restart_argv_from(args.restart_command)
        if args.restart:
            preview = with_requested_restart(preview, facts, plan, restart_argv)
        print(preview.text(), end="")
        if preview.errors:
            _say("innotune apply: an applier refused (see above); nothing was changed.")
            return 1
        stale = stale_files(plan, preview.actions)
        if stale:
            _say(
                "innotune apply: changed since the plan was made: "
                + "; ".join(stale)
                + ". Nothing was changed; preview again."
            )
            return 1
        if args.plan and not plan.file_checksums and any(a.files for a in preview.actions):
            _say(
                "note: this plan carries no file checksums (save it with preview --plan-out); "
                "the files are checked against what was just read."
            )
        if not any(not a.empty or a.values for a in preview.actions):
            print("Nothing to apply.")
            return 0
        transport = conn.transport
        assert transport is not None
        label = transport.label
        if not _consent(f"Apply these changes to {label}?", args.yes):
            print("Nothing was changed.")
            return 1
        if conn.session is not None:
            conn.session.close()
            conn.session = None
        cancel = threading.Event()
        try:
            with _ctrl_c_cancels(cancel):
                status = runner.apply(
                    transport,
                    preview.actions,
                    facts.server,
                    target_label=label,
                    local_dir=local_snapshot_dir(label),
                    on_step=lambda step: _say(step.line()),
                    plan_json=plan.to_json(),
                    expected=runner.expected_values(preview.actions, plan.changes),
                    restart_argv=restart_argv,
                    confirm_within=args.confirm_within,
                    health_timeout=args.health_timeout,
                    watch_seconds=args.watch,
                    restart_anyway=args.restart,
                    cancel=cancel,
                    keep=args.keep,
                )
        except runner.ApplyCancelled as stopped:
            _say(f"innotune apply: {stopped.problem} {stopped.fix}".rstrip())
            return 130
        except runner.JobInterrupted as lost:
            _say(f"innotune apply: {lost.problem}\n{lost.fix}")
            return 3
        if status.state == "awaiting-confirm":
            status = _confirm(args, transport, status)
    finally:
        conn.close()
    _print_status(status)
    if status.cancelled:
        return 130
    return 0 if status.state == "applied" else 1


@contextlib.contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """While the job runs, Ctrl-C asks it to stop safely instead of abandoning it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_interrupt(_signum: int, _frame: object) -> None:
        if not cancel.is_set():
            _say("… cancelling: the job stops at its next step and rolls back what it changed")
        cancel.set()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _confirm(args: argparse.Namespace, transport: Any, status: Any) -> Any:
    """Prove the server is reachable again with a fresh login, then confirm (or not)."""
    from app.appliers import runner
    from app.commands.common import connect

    try:
        again = connect(args)
        again.close()
        reachable = True
    except InnoTuneError as exc:
        _say(f"Cannot reach the server again ({exc.problem}); not confirming.")
        reachable = False
    if reachable and _consent(
        f"Applied; the server answers. Keep the change (it rolls back in "
        f"{args.confirm_within:.0f} s otherwise)?",
        args.yes,
    ):
        runner.confirm(transport, status.job_id)
    return runner.follow(
        transport, status.job_id, lambda step: _say(step.line()), stop_at_confirm=False
    )


def _running_identities(transport: Any) -> list[tuple[Any, dict[str, Any]]]:
    """The server instances running on the target, each with its identity."""
    from app.appliers import history
    from app.inspect.instances import find_instances

    try:
        found = find_instances(transport, sudo=not transport.is_root)
    except InnoTuneError:
        return []
    return [(i, history.identity(transport, i)) for i in found if i.pid]


def run_snapshots(args: argparse.Namespace) -> int:
    """List the target's snapshots per instance with their state, and its jobs; --prune."""
    from app.appliers import history, runner
    from app.appliers import snapshot as snap
    from app.commands.common import resolve_instance_spec

    target, transport = _open(args)
    local_dir = local_snapshot_dir(transport.label)
    keep = args.keep or history.keep_default()
    try:
        spec = resolve_instance_spec(args)
        key = None
        if spec is not None:
            records = history.list_records(transport)
            key = history.instance_for(records, _running_identities(transport), spec)
        if args.prune:
            done = history.prune_on_target(transport, keep, key)
            records = history.list_records(transport)
            local_gone = history.prune_locally(local_dir, records, keep, key)
            print(
                f"Pruned to {keep} snapshot(s) per instance: removed "
                f"{len(done.get('removed') or [])} snapshot(s) on {transport.label}"
                + (f" ({', '.join(done['removed'])})" if done.get("removed") else "")
                + f" and {len(local_gone)} local copy(ies) kept by InnoTune"
                + (
                    f"; {len(done.get('locks_removed') or [])} free lock file(s) removed"
                    if done.get("locks_removed")
                    else ""
                )
                + "."
            )
            for busy in done.get("busy") or []:
                print(f"  left alone (a job is changing it now): {busy}")
        records = history.list_records(transport)
        jobs = [runner.status(transport, job) for job in runner.list_jobs(transport)]
        bundles = {job.job_id: _job_instance(transport, job.job_id) for job in jobs}
    except history.RollbackRefused as exc:
        _say(f"innotune snapshots: {exc.problem} {exc.fix}")
        return 1
    finally:
        transport.close()
    local = {s.id for s in snap.list_locally(local_dir)}
    groups = [
        (doc, group)
        for doc, group in history.by_instance(records)
        if key is None or (group and group[0].instance_key == key)
    ]
    if not groups:
        print(f"No snapshots on {transport.label}" + (" for that instance." if key else "."))
    for doc, group in groups:
        in_force = sum(1 for r in group if r.in_force)
        print(
            f"Instance {history.describe_instance(doc)}: {len(group)} snapshot(s), "
            f"{in_force} in force (newest first)"
        )
        for item in group:
            where = "target + this computer" if item.id in local else "target"
            print(f"  {item.line()}  [{where}]")
    # Jobs per instance too: the one a job recorded, else its snapshot's.
    of_snapshot = {r.id: r.instance_key for r in records}
    docs = {r.instance_key: dict(r.snapshot.instance) for r in records if r.instance_key}
    per: dict[str, list[Any]] = {}
    for job in jobs:
        owner = bundles.get(job.job_id) or of_snapshot.get(str(job.snapshot_id)) or ""
        if key is None or owner == key:
            per.setdefault(owner, []).append(job)
    for owner, listed in per.items():
        print(
            f"\nJobs of {history.describe_instance(docs[owner])}:" if owner in docs else "\nJobs:"
        )
        for job in listed:
            print(f"  {job.job_id}  {job.mode or '?'}  {job.state}  snapshot {job.snapshot_id}")
            for error in job.errors[:3]:
                print(f"      error: {error}")
    del target
    return 0


def _job_instance(transport: Any, job_id: str) -> str | None:
    """The instance a job recorded in its bundle (jobs made before that: None)."""
    import json

    from app.appliers import runner

    result = transport.run(
        ["cat", f"{runner.job_dir(job_id)}/bundle.json"], sudo=not transport.is_root
    )
    try:
        doc = json.loads(result.out) if result.ok else {}
    except ValueError:
        return None
    return doc.get("instance") if isinstance(doc, dict) else None


def run_rollback(args: argparse.Namespace) -> int:
    """Restore a snapshot of the chosen instance (its newest in force by default), after consent."""
    from app.appliers import history, runner
    from app.appliers import snapshot as snap
    from app.commands.common import resolve_instance_spec

    _, transport = _open(args)
    try:
        records = history.list_records(transport)
        try:
            key = history.instance_for(
                records, _running_identities(transport), resolve_instance_spec(args)
            )
            choice = history.choose_rollback(records, key, args.snapshot)
        except history.RollbackRefused as refused:
            if args.snapshot is None or "No snapshot " not in refused.problem:
                print(f"{refused.problem} {refused.fix}".strip())
                return 1
            choice = None
        if choice is None:
            # Not on the target: runner.rollback puts a complete local copy back, or stops.
            _say(f"Snapshot {args.snapshot} is not on the target. Trying this computer's copy.")
            chosen = snap.load_locally(local_snapshot_dir(transport.label), args.snapshot)
            print(f"Restore {chosen.summary()}")
            undo: list[str] | None = None
        else:
            print(choice.text())
            for caveat in choice.caveats:
                _say(f"note: {caveat}")
            undo = [r.id for r in choice.undo]
        snapshot_id = choice.record.id if choice is not None else args.snapshot
        question = f"Roll {transport.label} back to snapshot {snapshot_id}?"
        if choice is not None and choice.caveats:
            question = " ".join(choice.caveats) + " " + question
        if not _consent(question, args.yes):
            if choice is not None and choice.caveats and not args.yes:
                _say("innotune rollback: refused without --yes: " + " ".join(choice.caveats))
            print("Nothing was changed.")
            return 1
        try:
            status = runner.rollback(
                transport,
                snapshot_id,
                local_dir=local_snapshot_dir(transport.label),
                on_step=lambda step: _say(step.line()),
                restart_argv=runner.restart_argv_from(args.restart_command),
                undo=undo,
                keep=args.keep,
            )
        except runner.JobInterrupted as lost:
            _say(f"innotune rollback: {lost.problem}\n{lost.fix}")
            return 3
    finally:
        transport.close()
    _print_status(status)
    return 0 if status.state == "rolled-back" else 1
