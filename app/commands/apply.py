"""`innotune apply`, `innotune snapshots` and `innotune rollback`.

``apply`` shows the preview, asks (or takes ``--yes``), then hands the work to one
detached job on the target (:mod:`app.jobs.runner`), which snapshots first and rolls
back by itself when anything fails. ``snapshots`` lists the snapshots and jobs kept on
the target; ``rollback`` restores one of them.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.commands import Handler
from app.commands.common import (
    add_persisted_argument,
    add_target_arguments,
    connect,
    consent,
    login,
    open_link,
    progress,
    resolve_instance_spec,
    say,
)
from app.commands.sliders import add_slider_arguments, positions_from_args
from app.domain.drift import drift_text
from app.domain.errors import InnoTuneError
from app.domain.words import count

if TYPE_CHECKING:
    from app.flows.apply import ApplyOptions
    from app.flows.measured import MeasuredApply
    from app.flows.snapshots import Pruned

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
    parser.add_argument(
        "--measure",
        action="store_true",
        help="measure the change: a short write benchmark in a scratch schema, rounds added "
        "until every run's verdict is decided or the time budget runs out. Interleaved when "
        "every change applies live (old and new values set in turn, round by round, ending on "
        "the new ones); else before, the apply, then after. Prints each run's verdict: "
        "faster, slower, no change or undecided",
    )
    parser.add_argument(
        "--measure-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the most the measurement may take, both sides and every added round "
        "(default 250: ten times each side's first 3 rounds of 25 s)",
    )
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


def _print_status(status: Any) -> None:
    words = status.applied_words
    print(f"Job {status.job_id}: {words}" + (" (cancelled)" if status.cancelled else ""))
    if status.snapshot_id:
        print(f"  snapshot  {status.snapshot_id}")
    if status.downtime_seconds is not None:
        print(f"  restart   {status.downtime_seconds:.1f} s until healthy")
    for error in status.errors:
        print(f"  error     {error}")
    for change_id, why in sorted(status.not_applied.items()):
        print(f"  not applied  {change_id}: {why}")
    said = set(status.not_applied.values())
    for warning in status.warnings:
        if warning not in said:
            print(f"  warning   {warning}")
    if status.log_lines:
        print("  error log:")
        for line in status.log_lines:
            print(f"    {line}")


def _facts_and_plan(args: argparse.Namespace, conn: Any) -> tuple[Any, Any]:
    from app.flows.files import read_plan
    from app.flows.inspecting import check_sample, inspect_connected
    from app.flows.planning import plan_for

    sample = args.sample if args.sample is not None else (0.0 if args.plan else 10.0)
    check_sample(sample)
    facts = inspect_connected(conn, sample_seconds=sample, say=progress)
    if args.plan:
        plan = read_plan(args.plan, "Save one with `innotune preview TARGET --plan-out PLAN.json`.")
    else:
        plan = plan_for(facts, positions_from_args(args, facts))
    return facts, plan


def _options(args: argparse.Namespace) -> ApplyOptions:
    from app.flows.apply import ApplyOptions

    return ApplyOptions(
        restart_command=args.restart_command,
        restart_anyway=args.restart,
        confirm_within=args.confirm_within,
        health_timeout=args.health_timeout,
        watch_seconds=args.watch,
        keep=args.keep,
    )


def run_apply(args: argparse.Namespace) -> int:
    """Preview, consent, then the detached job; follow it to its end."""
    from app.flows import apply as jobs
    from app.flows.apply import apply_preview, stale_files, with_restart
    from app.flows.preview import preview_plan

    if args.confirm_within is not None and not 5 <= args.confirm_within <= 3600:
        raise InnoTuneError("--confirm-within must be between 5 and 3600 seconds.")
    options = _options(args)
    conn, target, secrets = login(args)
    measured = None
    try:
        facts, plan = _facts_and_plan(args, conn)
        assert facts.server is not None
        preview = preview_plan(plan, facts, conn, args.persisted)
        preview = with_restart(preview, facts, plan, options)
        if preview.errors:
            # Refused: what and why, never a list of actions that will not run.
            for error in preview.errors:
                say(f"  ! {error}")
            say("innotune apply: refused (see above); nothing was changed.")
            return 1
        print(preview.text(), end="")
        stale = stale_files(plan, preview.actions)
        if stale:
            say(
                "innotune apply: changed since the plan was made: "
                + "; ".join(stale)
                + ". Nothing was changed; preview again."
            )
            return 1
        if args.plan and not plan.file_checksums and any(a.files for a in preview.actions):
            say(
                "note: this plan carries no file checksums (save it with preview --plan-out); "
                "the files are checked against what was just read."
            )
        if not any(not a.empty or a.values for a in preview.actions):
            print("Nothing to apply.")
            return 0
        transport = conn.transport
        assert transport is not None
        label = transport.label
        if not consent(f"Apply these changes to {label}?", args.yes):
            print("Nothing was changed.")
            return 1
        if conn.session is not None:
            conn.session.close()
            conn.session = None
        cancel = threading.Event()

        def apply_now() -> jobs.JobStatus:
            return apply_preview(
                transport,
                preview,
                facts.server,
                plan,
                options,
                on_step=lambda step: say(step.line()),
                cancel=cancel,
            )

        try:
            with _ctrl_c_cancels(cancel):
                if args.measure:
                    from app.flows.measure import quietness

                    # Asked for on the command line: said, not asked, when the server is busy.
                    found = quietness(facts.server)
                    say(f"Measuring before and after; {found.why}.")
                    measured = _measured(conn, target, secrets, apply_now, cancel, preview, args)
                    if measured.status is None:
                        say(f"innotune apply: {measured.not_applied}")
                        return 130
                    status = measured.status
                else:
                    status = apply_now()
        except jobs.ApplyCancelled as stopped:
            say(f"innotune apply: {stopped.problem} {stopped.fix}".rstrip())
            return 130
        except jobs.JobInterrupted as lost:
            say(f"innotune apply: {lost.problem}\n{lost.fix}")
            return 3
        if status.state == "awaiting-confirm":
            status = _confirm(args, transport, status)
    finally:
        conn.close()
    _print_status(status)
    if measured is not None:
        _print_measured(measured)
    if status.cancelled:
        return 130
    return 0 if status.state == "applied" else 1


def _measured(
    conn: Any,
    target: Any,
    secrets: Any,
    apply_now: Any,
    cancel: threading.Event,
    preview: Any,
    args: argparse.Namespace,
) -> MeasuredApply:
    """The measured apply (:func:`app.flows.measured.measured_apply`), saying each step."""
    from app.flows.measure import MeasureOptions, options_for_budget
    from app.flows.measured import Measuring, measured_apply, method_for

    budget = args.measure_budget
    if budget is not None and not 30 <= budget <= 3600:
        raise InnoTuneError("--measure-budget must be between 30 and 3600 seconds.")
    options = MeasureOptions() if budget is None else options_for_budget(budget)
    method = method_for(preview, args.confirm_within)
    if method.interleaved:
        say(
            f"Measuring interleaved, after the apply: the old and the new values in turn, round "
            f"by round (budget {options.budget_seconds:.0f} s, in a scratch schema)"
        )
    else:
        say(
            f"Measuring “before”, then “after” ({method.why}; budget "
            f"{options.budget_seconds:.0f} s, in a scratch schema)"
        )
    announced: set[str] = set()

    def said(label: str, text: str) -> None:
        if label and label not in announced:
            announced.add(label)
            say(f"Measuring “{label}”")
        progress(text)

    measuring = Measuring(
        conn,
        target,
        secrets,
        options,
        cancel=cancel,
        say=said,
        progress=lambda _fraction: None,
    )
    return measured_apply(measuring, apply_now, method, cancel=cancel)


def _print_measured(measured: MeasuredApply) -> None:
    from app.flows.measure import comparison_text

    if measured.before is None or measured.after is None:
        if measured.measurement is not None:
            print(measured.measurement.text())
            held = drift_text(measured.before, measured.after)
            if held:
                print(held)
        print(measured.no_after)
        return
    print("\nMeasured before and after:")
    print(comparison_text(measured.before, measured.after))


@contextlib.contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """While the job runs, Ctrl-C asks it to stop safely instead of abandoning it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_interrupt(_signum: int, _frame: object) -> None:
        if not cancel.is_set():
            progress("cancelling: the job stops at its next step and rolls back what it changed")
        cancel.set()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _confirm(args: argparse.Namespace, transport: Any, status: Any) -> Any:
    """Prove the server is reachable again with a fresh login, then confirm (or not)."""
    from app.flows.apply import confirm_and_follow

    try:
        again = connect(args)
        again.close()
        reachable = True
    except InnoTuneError as exc:
        say(f"Cannot reach the server again ({exc.problem}); not confirming.")
        reachable = False
    keep = reachable and consent(
        f"Applied; the server answers. Keep the change (it rolls back in "
        f"{args.confirm_within:.0f} s otherwise)?",
        args.yes,
    )
    return confirm_and_follow(transport, status.job_id, keep, lambda step: say(step.line()))


def run_snapshots(args: argparse.Namespace) -> int:
    """List the target's snapshots per instance with their state, and its jobs; --prune."""
    from app.flows import snapshots
    from app.flows.snapshots import list_snapshots

    transport = open_link(args)
    try:
        listing = list_snapshots(
            transport, resolve_instance_spec(args), prune=args.prune, keep=args.keep
        )
    except snapshots.RollbackRefused as exc:
        say(f"innotune snapshots: {exc.problem} {exc.fix}")
        return 1
    finally:
        transport.close()
    if listing.pruned is not None:
        _print_pruned(listing.pruned, transport.label)
    key = listing.key
    groups = listing.groups()
    if not groups:
        print(f"No snapshots on {transport.label}" + (" for that instance." if key else "."))
    for doc, group in groups:
        in_force = sum(1 for r in group if r.in_force)
        print(
            f"Instance {snapshots.describe_instance(doc)}: {count(len(group), 'snapshot')}, "
            f"{in_force} in force (newest first)"
        )
        for item in group:
            where = "target + this computer" if item.id in listing.local_ids else "target"
            print(f"  {item.line()}  [{where}]")
    docs = listing.instance_docs()
    for owner, listed in listing.jobs_by_instance().items():
        print(
            f"\nJobs of {snapshots.describe_instance(docs[owner])}:" if owner in docs else "\nJobs:"
        )
        for job in listed:
            print(f"  {job.job_id}  {job.mode or '?'}  {job.state}  snapshot {job.snapshot_id}")
            for error in job.errors[:3]:
                print(f"      error: {error}")
    return 0


def _print_pruned(pruned: Pruned, label: str) -> None:
    done = pruned.on_target
    print(
        f"Pruned to {count(pruned.keep, 'snapshot')} per instance: removed "
        f"{count(len(done.get('removed') or []), 'snapshot')} on {label}"
        + (f" ({', '.join(done['removed'])})" if done.get("removed") else "")
        + f" and {count(len(pruned.local), 'local copy', 'local copies')} kept by InnoTune"
        + (
            f"; {count(len(done.get('locks_removed') or []), 'free lock file')} removed"
            if done.get("locks_removed")
            else ""
        )
        + "."
    )
    for busy in done.get("busy") or []:
        print(f"  left alone (a job is changing it now): {busy}")


def run_rollback(args: argparse.Namespace) -> int:
    """Restore a snapshot of the chosen instance (its newest in force by default), after consent."""
    from app.flows import apply as jobs
    from app.flows import snapshots
    from app.flows.apply import restore
    from app.flows.snapshots import instance_key, local_copy

    transport = open_link(args)
    try:
        records = snapshots.list_records(transport)
        try:
            key = instance_key(transport, records, resolve_instance_spec(args))
            choice = snapshots.choose_rollback(records, key, args.snapshot)
        except snapshots.RollbackRefused as refused:
            if args.snapshot is None or "No snapshot " not in refused.problem:
                print(f"{refused.problem} {refused.fix}".strip())
                return 1
            choice = None
        if choice is None:
            # Not on the target: the restore puts a complete local copy back, or stops.
            say(f"Snapshot {args.snapshot} is not on the target. Trying this computer's copy.")
            print(f"Restore {local_copy(transport, args.snapshot).summary()}")
            undo: list[str] | None = None
        else:
            print(snapshots.rollback_text(choice))
            for caveat in choice.caveats:
                say(f"note: {caveat}")
            undo = [r.id for r in choice.undo]
        snapshot_id = choice.record.id if choice is not None else args.snapshot
        question = f"Roll {transport.label} back to snapshot {snapshot_id}?"
        if choice is not None and choice.caveats:
            question = " ".join(choice.caveats) + " " + question
        if not consent(question, args.yes):
            if choice is not None and choice.caveats and not args.yes:
                say("innotune rollback: refused without --yes: " + " ".join(choice.caveats))
            print("Nothing was changed.")
            return 1
        try:
            status = restore(
                transport,
                snapshot_id,
                on_step=lambda step: say(step.line()),
                restart_command=args.restart_command,
                undo=undo,
                keep=args.keep,
            )
        except jobs.JobInterrupted as lost:
            say(f"innotune rollback: {lost.problem}\n{lost.fix}")
            return 3
    finally:
        transport.close()
    _print_status(status)
    return 0 if status.state == "rolled-back" else 1
