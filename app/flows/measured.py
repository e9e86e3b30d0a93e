"""A measured apply: the change's effect measured, with rounds added until it is decided.

Interleaved where every change is a server variable set live (old and new values in turn,
round by round, ending on the new ones; the job's snapshot stays the way back), else
"before" (its rounds fixed up front), the apply, then "after" with rounds added. Both faces
(the Apply page, ``innotune apply --measure``) run it through :func:`measured_apply`, so the
order and the reasons for not measuring are written once, here.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.access.doctor import DoctorResult, Secrets
from app.bench.cpu import machine_busy
from app.bench.reach import (
    cannot_show,
    data_set_bytes,
    data_set_most,
    data_set_text,
    pool_growth,
)
from app.bench.steps import Side
from app.domain.bench import BenchReport
from app.domain.errors import InnoTuneError
from app.domain.measurement import Measurement
from app.domain.target import Target
from app.flows.measure import MeasureOptions, bench_for
from app.inspect.host_mounts import parse_df
from app.jobs import runner
from app.jobs.live import RESIZES, set_values, values_in_force

if TYPE_CHECKING:
    from app.bench.runner import Benchmark
    from app.describe.preview import Preview

#: The rounds "before" takes when a restart (or any change not set live) sits between the
#: sides: "before" cannot be measured again once the change is in force, so it is measured
#: long enough up front that "after" rounds alone can decide (6 before and 7 after, every
#: one beaten, decide six runs; 3 before would need 18 after).
FIXED_BEFORE_ROUNDS = 6


@dataclass(frozen=True)
class MeasuredApply:
    """What a measured apply did.

    Attributes:
        before: the "before" report (None: the benchmark failed before the apply, or the
            interleaved measurement after it).
        status: the apply's job at its end (None: not applied, ``not_applied`` says why).
        after: the "after" report (None: not run, ``no_after`` says why).
        measurement: how it was measured (also on both reports); None when not measured.
    """

    before: BenchReport | None
    status: runner.JobStatus | None
    after: BenchReport | None
    not_applied: str = ""
    no_after: str = ""
    measurement: Measurement | None = None


@dataclass(frozen=True)
class Method:
    """How a measured apply is measured (:func:`method_for`).

    Attributes:
        values: the server variables switched round by round (key, old, new); empty when the
            change is measured before, then after.
        why: why it is not interleaved ("" when it is).
        restart: the apply restarts the server.
        changes: every server variable the plan changes (key, old, new), live or not.
    """

    values: tuple[tuple[str, str, str], ...]
    why: str
    restart: bool
    changes: tuple[tuple[str, str, str], ...] = ()

    @property
    def interleaved(self) -> bool:
        """Old and new values set in turn, round by round."""
        return bool(self.values)


def method_for(preview: Preview, confirm_within: float | None = None) -> Method:
    """Interleaved when every change of the plan is a server variable set live, else before/after.

    Old and new values can be set in turn only through SET GLOBAL, with no restart needed
    and no wait to be kept. A resize (:data:`app.jobs.live.RESIZES`) is switched too, once a round.
    A restart only asked for (to prove the server starts with the new files) comes first,
    with the apply: every value still switches live after it, so both faces measure the same.
    """
    restart = preview.restart_needed
    values: list[tuple[str, str, str]] = []
    changes = tuple(
        (v.key, v.current, v.new)
        for v in preview.values
        if v.kind == "dynamic" and v.current is not None
    )
    why = ""
    for action in preview.actions:
        for value in action.values:
            if value.kind != "dynamic":
                why = why or f"{value.key} is a setting of the host, not of the server"
            elif not value.live or value.current is None:
                why = why or f"{value.key} does not apply live"
            else:
                values.append((value.key, value.current, value.new))
        if action.commands and not action.restart_needed:
            why = why or "the change runs commands on the host"
    if restart:
        why = "the server restarts"
    elif confirm_within is not None:
        why = why or "the change waits to be kept or rolled back"
    elif not values:
        why = why or "no server variable changes live"
    return Method(() if why else tuple(values), why, preview.will_restart, changes)


def data_set_ahead(preview: Preview | None) -> int:
    """The largest data set measuring this preview's change would write first on each side.

    0 when it writes none (the pool does not grow). Said before the measurement, so the room
    under the datadir, which may make it smaller, is not read yet.
    """
    return data_set_most(method_for(preview).changes) if preview is not None else 0


def undecided(before: BenchReport, after: BenchReport) -> list[tuple[str, int]]:
    """The runs more rounds could decide: undecided, or too few rounds yet.

    A run that completed no transaction ("too short") stays unmeasured however long; a
    decided one keeps its verdict (it gets no more rounds).
    """
    return [
        (v.workload, v.threads)
        for v in after.verdicts(before)
        if not v.decided or (v.verdict == "unmeasured" and not v.too_short)
    ]


def _samples(*values: float | None) -> tuple[float, ...]:
    """The machine's busy shares read; empty unless every one was (drift_held needs both)."""
    return () if any(v is None for v in values) else tuple(v for v in values if v is not None)


def _most(report: BenchReport) -> int:
    return max((len(r.rounds) for r in report.results), default=0)


def _fewest(report: BenchReport) -> int:
    return min((len(r.rounds) for r in report.results), default=0)


class Measuring:
    """The benchmarks of a measured apply, for one connection, with their budget."""

    def __init__(
        self,
        conn: DoctorResult,
        target: Target,
        secrets: Secrets,
        options: MeasureOptions,
        *,
        cancel: threading.Event,
        say: Callable[[str, str], None],
        progress: Callable[[float], None],
    ) -> None:
        """``say(label, text)`` gets each side's lines ("" for both sides at once)."""
        self.conn, self.target, self.secrets = conn, target, secrets
        self.options = options
        self.cancel = cancel
        self.say = say
        self.progress = progress
        self.used = 0.0  # the seconds both sides took, once "after" is measured
        self.data_seconds = 0.0  # the most a side took to write its data set (not in used)

    def _bench(self, label: str, options: MeasureOptions) -> Benchmark:
        return bench_for(
            self.conn,
            self.target,
            self.secrets,
            label,
            options,
            cancel=self.cancel,
            say=lambda text: self.say(label, text),
            progress=self.progress,
        )

    def before(self, in_force: str) -> tuple[BenchReport, float]:
        """The "before" side when a change sits between the sides: its rounds fixed up front.

        Returns:
            The report and the seconds it took.
        """
        opts = self.options
        fit = int(opts.budget_seconds / 3 // opts.round_seconds)
        rounds = max(opts.rounds, min(FIXED_BEFORE_ROUNDS, fit))
        longer = dataclasses.replace(opts, seconds=opts.round_seconds * rounds, rounds=rounds)
        bench = self._bench("before", longer)
        began = time.monotonic()  # the pauses that sample the machine count as used too
        start = machine_busy(bench.cpu_probe)
        report = bench.run()
        busy = _samples(start, machine_busy(bench.cpu_probe))
        report = dataclasses.replace(report, snapshot_in_force=in_force, machine_busy=busy)
        self.data_seconds = max(self.data_seconds, bench.data_seconds)
        return report, time.monotonic() - began - bench.data_seconds

    def after(self, before: BenchReport, in_force: str, spent: float) -> tuple[BenchReport, str]:
        """The "after" side: rounds added until every verdict is decided or the budget is out."""
        bench = self._bench("after", self.options)
        began = time.monotonic()
        start = machine_busy(bench.cpu_probe)
        (report,) = bench.run_sides(
            (Side("after"),),
            more=lambda found: undecided(before, found[0]),
            budget=max(0.0, self.options.budget_seconds - spent),
        )
        busy = _samples(start, machine_busy(bench.cpu_probe))
        self.used = spent + time.monotonic() - began - bench.data_seconds
        self.data_seconds = max(self.data_seconds, bench.data_seconds)
        report = dataclasses.replace(report, snapshot_in_force=in_force, machine_busy=busy)
        return report, bench.stopped

    def data_set(self, changes: Sequence[tuple[str, str, str]]) -> int:
        """The data set measuring these changes (key, old, new) writes first (0: none).

        Only a larger pool needs one: only then is the datadir's free space read.
        """
        if pool_growth(changes) is None:
            return 0
        free, binlog = self.datadir_room()
        return data_set_bytes(changes, free, binlog)

    def datadir_room(self) -> tuple[int | None, bool]:
        """Where a data set would go: the datadir's free bytes, and whether there is a binlog.

        Free bytes under the server's datadir (None: unknown); whether the server keeps a
        binary log (which keeps a copy of the data set's rows).
        """
        from app.bench.route import session_factory

        transport = self.conn.transport
        if transport is None:
            return None, False
        session = session_factory(self.conn, self.target, self.secrets)()
        try:
            rows = session.query("SELECT @@datadir, @@log_bin")
        finally:
            session.close()
        datadir = str(rows[0][0] or "") if rows else ""
        binlog = bool(rows) and str(rows[0][1]) in ("1", "ON")
        if not datadir:
            return None, binlog
        found = transport.run(["df", "-P", "-k", "--", datadir], timeout=20)
        return (parse_df(found.out.splitlines())[1] if found.ok else None), binlog

    def interleaved(
        self, values: Sequence[tuple[str, str, str]], in_force: str, snapshot: str
    ) -> tuple[BenchReport, BenchReport, Measurement]:
        """Old and new values in turn, round by round (A B A B …), ending on the new ones.

        ``in_force``: the snapshot in force before the apply (the "before" side's values);
        ``snapshot``: the apply's (the "after" side's).

        Raises:
            InnoTuneError: a benchmark or a switch failed (the new values may not be in
                force: the caller sets them again).
        """
        old = [(k, o) for k, o, _ in values]
        new = [(k, n) for k, _, n in values]
        # A resize is switched once a round (its wait is set_values'); a larger pool gets one
        # data set for both sides, which each reads in after its switch (warm).
        slow = any(k in RESIZES for k, _, _ in values)
        data = self.data_set(values)
        options = dataclasses.replace(self.options, data_bytes=data) if data else self.options
        bench = self._bench("", options)
        bench.say = lambda text: self.say("", text)
        before, after = bench.run_sides(
            (
                Side("before", lambda s: set_values(s, old), slow=slow, warm=bool(data)),
                Side("after", lambda s: set_values(s, new), slow=slow, warm=bool(data)),
            ),
            more=lambda found: undecided(found[0], found[1]),
            budget=self.options.budget_seconds,
        )
        self.data_seconds = bench.data_seconds
        found = Measurement(
            method="interleaved",
            budget_seconds=self.options.budget_seconds,
            seconds_used=bench.seconds_used,
            before_rounds=_most(before),
            after_rounds=_most(after),
            fewest_rounds=_fewest(after),
            stopped=bench.stopped,
            cannot_show=cannot_show(values, before),
            data_set=data_set_text(before, values, bench.data_seconds, once=True),
        )
        return (
            dataclasses.replace(before, snapshot_in_force=in_force, measurement=found),
            dataclasses.replace(after, snapshot_in_force=snapshot, measurement=found),
            found,
        )

    def restore_new(self, values: Sequence[tuple[str, str, str]], snapshot: str) -> str:
        """Set the new values again after an interleaved measurement; "" when they are in force.

        Otherwise what is wrong, in words, with the way back (the snapshot's rollback).
        """
        from app.bench.route import session_factory

        new = [(k, n) for k, _, n in values]
        try:
            session = session_factory(self.conn, self.target, self.secrets)()
            try:
                set_values(session, new)
                wrong = values_in_force(session, new)
            finally:
                session.close()
        except InnoTuneError as exc:
            wrong = [exc.problem]
        if not wrong:
            return ""
        back = f"roll back snapshot {snapshot} to return to the old values" if snapshot else ""
        return (
            "The new values could not be set again after the measurement ("
            + "; ".join(wrong)
            + "). The option files hold them, so the next restart brings them; "
            + (back or "roll back to return to the old values")
            + "."
        )


def why_no_after(status: runner.JobStatus) -> str:
    """Why "after" is not measured once the apply ended so ("" when it is)."""
    if status.state == "applied":
        return ""
    if status.state == "rolled-back":
        return (
            f"The “after” benchmark was not run: the change was rolled back (job "
            f"{status.job_id}), so the server runs as it did for “before”."
        )
    if status.state == "awaiting-confirm":
        return (
            "The “after” benchmark was not run: the change waits to be kept or rolled back. "
            "Keep it, then measure “after” on the Verify page."
        )
    return (
        f"The “after” benchmark was not run: the apply ended {status.state}, so what is in "
        "force is not known."
    )


def measured_apply(
    measuring: Measuring,
    apply: Callable[[], runner.JobStatus],
    method: Method,
    *,
    cancel: threading.Event,
    in_force: str = "",
    on_before: Callable[[BenchReport], None] | None = None,
    on_applied: Callable[[runner.JobStatus], None] | None = None,
) -> MeasuredApply:
    """Measure a change's effect, adding rounds until decided or the budget runs out.

    Interleaved (``method.interleaved``: every change a server variable set live): the apply
    first (its snapshot stays the way back), then old and new values in turn, round by round,
    ending on the new ones, which are set again and checked whatever happened. Otherwise
    "before" (its rounds fixed up front), the apply, then "after" with rounds added.

    Args:
        measuring: runs the benchmarks.
        apply: takes the snapshot and runs the job, to its end (:func:`apply_preview`).
        method: how to measure (:func:`method_for`).
        cancel: set to stop: during "before" nothing is applied; after the apply the change
            stays and the report says it was cancelled.
        in_force: the snapshot whose changes are in force before this apply ("" none).
        on_before: called with the "before" report as soon as it is there.
        on_applied: called with the job's status once the apply has ended.
    """
    budget = measuring.options.budget_seconds
    if method.interleaved:
        return _interleaved(
            measuring, apply, method, in_force, on_before=on_before, on_applied=on_applied
        )
    data = measuring.data_set(method.changes)
    if data:
        measuring.options = dataclasses.replace(measuring.options, data_bytes=data)
    before, spent = measuring.before(in_force)
    if on_before is not None:
        on_before(before)
    if before.cancelled or cancel.is_set():
        return MeasuredApply(
            before, None, None, not_applied="Cancelled during “before”: nothing was changed."
        )
    status = apply()
    if on_applied is not None:
        on_applied(status)
    why = why_no_after(status)
    if why:
        return MeasuredApply(before, status, None, no_after=why)
    try:
        after, stopped = measuring.after(before, status.snapshot_id or "", spent)
    except InnoTuneError as exc:
        # The change is applied all the same: its status must reach the face, with why
        # there is no "after".
        failed = f"The “after” benchmark failed: {exc.problem} {exc.window_fix}".strip()
        return MeasuredApply(before, status, None, no_after=failed)
    found = Measurement(
        method="before-after",
        budget_seconds=budget,
        seconds_used=measuring.used,
        before_rounds=_most(before),
        after_rounds=_most(after),
        fewest_rounds=_fewest(after),
        stopped=stopped,
        restart=method.restart or status.restarted,
        why=method.why,
        cannot_show=cannot_show(method.changes, before),
        data_set=data_set_text(before, method.changes, measuring.data_seconds, after),
    )
    return MeasuredApply(
        dataclasses.replace(before, measurement=found),
        status,
        dataclasses.replace(after, measurement=found),
        measurement=found,
    )


def _interleaved(
    measuring: Measuring,
    apply: Callable[[], runner.JobStatus],
    method: Method,
    in_force: str,
    *,
    on_before: Callable[[BenchReport], None] | None,
    on_applied: Callable[[runner.JobStatus], None] | None,
) -> MeasuredApply:
    status = apply()
    if on_applied is not None:
        on_applied(status)
    if status.state != "applied":
        why = why_no_after(status).replace("The “after” benchmark was not run", "Not measured")
        why = why.replace(", so the server runs as it did for “before”", "")
        return MeasuredApply(None, status, None, no_after=why)
    snapshot = status.snapshot_id or ""
    try:
        before, after, found = measuring.interleaved(method.values, in_force, snapshot)
    except InnoTuneError as exc:
        back = measuring.restore_new(method.values, snapshot)
        failed = f"The interleaved measurement failed: {exc.problem} {exc.window_fix}".strip()
        done = " The new values are in force again." if not back else f" {back}"
        return MeasuredApply(None, status, None, no_after=failed + done)
    back = measuring.restore_new(method.values, snapshot)
    if on_before is not None:
        on_before(before)
    if back:
        return MeasuredApply(before, status, None, no_after=back, measurement=found)
    return MeasuredApply(before, status, after, measurement=found)
