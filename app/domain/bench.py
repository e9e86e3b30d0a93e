"""Write-benchmark results as plain values: per workload and thread count, and the whole run.

They round-trip through JSON (:func:`app.domain.facts.to_json` / ``from_json``), so a
"before" run can be saved with a snapshot and compared with an "after" run later, or with
a run after a rollback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.domain.compare import MIN_ROUNDS, NO_CHANGE_PERCENT, compare_rounds, pct
from app.domain.drift import drift_held, drift_stands
from app.domain.facts import from_json, to_json
from app.domain.measurement import Measurement
from app.domain.words import size_text

FORMAT = "innotune-bench/1"

#: The workloads, in the order they run and are shown.
WORKLOADS = ("autocommit", "small_tx", "bulk")

#: What each workload stands for, in the words the report and the Verify page use.
#: Where a benchmark's clients can run (`innotune bench --engine`), in the order "auto" tries
#: them: sysbench, InnoTune's load generator and mysqlslap on the target, InnoTune's own client
#: here.
ENGINES = ("sysbench", "loadgen", "slap", "innotune")

#: Short rounds per run by default (the command and the Verify page): three give a spread.
ROUNDS = 3

WORKLOAD_TITLES = {
    "autocommit": "single-row inserts, one commit each (a slow import)",
    "small_tx": "small transactions: 3 inserts and 1 update each",
    "bulk": "bulk load: multi-row inserts, 5,000 rows per transaction",
}


@dataclass(frozen=True)
class Latency:
    """Commit latency in milliseconds.

    Measured per transaction, from its first statement to the commit's answer (for
    single-row autocommit inserts, the insert itself).

    Attributes:
        percentiles: False when the clients timed no single transaction (mysqlslap): only
            the mean is known, and p50/p95/p99/max are 0 and not to be shown.
    """

    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    mean_ms: float = 0.0
    percentiles: bool = True

    def text(self) -> str:
        """``p50 / p95 / p99`` in ms, or the mean where the clients timed no transaction."""
        if not self.percentiles:
            return f"mean {self.mean_ms:.2f} (no percentiles)"
        return f"{self.p50_ms:.2f} / {self.p95_ms:.2f} / {self.p99_ms:.2f}"


@dataclass(frozen=True)
class Counters:
    """How far the server's own counters moved over a run (None: the server has no such one).

    Attributes:
        redo_bytes: redo log written (Innodb_lsn_current, else Innodb_os_log_written).
        pages_written: Innodb_pages_written.
        data_fsyncs: Innodb_data_fsyncs.
        log_fsyncs: Innodb_os_log_fsyncs (MySQL, MariaDB before 10.8).
        restarted: a counter went backwards during the run: the server restarted, and the
            deltas count what was seen on both sides of the restart.
    """

    redo_bytes: int | None = None
    pages_written: int | None = None
    data_fsyncs: int | None = None
    log_fsyncs: int | None = None
    restarted: bool = False


@dataclass(frozen=True)
class CpuUse:
    """Where a run's CPU went, and whether the clients rather than the server set the pace.

    Attributes:
        client_cores: CPU the clients (the load generator) used, in cores: 1.0 is one core
            busy for the whole run. None when it could not be measured.
        server_cores: CPU the server process used, in cores (every thread of it).
        server_wait: the time the server's threads spent ready to run but waiting for a CPU
            (the kernel's run-queue wait, ``/proc/PID/task/*/schedstat``), in the same unit:
            1.0 is one thread waiting the whole run. None when it could not be read.
        host_busy: the share (0-1) of all the host's CPUs busy during the run, everyone's work
            counted (iowait counts as idle).
        cpus: how many CPUs the clients' host has.
        where: where the clients ran: ``target`` (next to the server), ``this computer``
            (the server is here too) or ``link`` (here, over the SSH link to the server).
        client_bound: the clients were the limit: a change of the server's speed would not
            show fully in this run's figures. ``why`` says what was seen.
    """

    client_cores: float | None = None
    server_cores: float | None = None
    host_busy: float | None = None
    cpus: int | None = None
    where: str = ""
    client_bound: bool = False
    why: str = ""
    server_wait: float | None = None


@dataclass(frozen=True)
class WorkloadResult:
    """One workload at one thread count.

    Attributes:
        stopped: why it stopped: ``time``, ``rows`` (the row cap), ``bytes`` (the byte cap),
            ``cancelled`` or ``error``.
        errors: transactions that failed (deadlocks, lock-wait timeouts); not counted as commits.
        rounds: commits/s of each short round the run was made of, in the order they ran
            (empty: one round, a report saved before rounds existed); their spread is the
            run-to-run noise a comparison weighs a change against.
    """

    workload: str
    threads: int
    seconds: float
    commits: int
    rows: int
    commits_per_s: float
    rows_per_s: float
    latency: Latency
    counters: Counters
    stopped: str = "time"
    errors: int = 0
    cpu: CpuUse | None = None
    rounds: tuple[float, ...] = ()


def measured(result: WorkloadResult) -> bool:
    """Whether a run completed a transaction: a run that completed none measured nothing.

    Its 0 commits/s is no figure (a bulk transaction can outlast a short round), so it is
    shown as :data:`TOO_SHORT` and judged "unmeasured", never as 0 or a loss of 100 %.
    """
    return result.commits > 0


#: What a run that completed no transaction shows instead of its commits/s.
TOO_SHORT = "too short to measure"


def commits_text(result: WorkloadResult | None, digits: int = 1) -> str:
    """A run's commits/s as every face shows it ("" for no run, :data:`TOO_SHORT` for none)."""
    if result is None:
        return ""
    if not measured(result):
        return TOO_SHORT
    return f"{result.commits_per_s:,.{digits}f}"


def change_percent(before: WorkloadResult | None, after: WorkloadResult | None) -> float | None:
    """The change of commits/s from ``before`` to ``after`` in percent.

    None unless both ran and both completed a transaction (:func:`measured`).
    """
    if before is None or after is None or not measured(before) or not measured(after):
        return None
    if before.commits_per_s <= 0:
        return None
    return (after.commits_per_s / before.commits_per_s - 1) * 100


def any_client_bound(*runs: WorkloadResult | None) -> bool:
    """Whether the clients set the pace in any of ``runs`` (a change between them is theirs too)."""
    return any(r is not None and r.cpu is not None and r.cpu.client_bound for r in runs)


def median(values: Sequence[float]) -> float:
    """The median; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


def spread(values: Sequence[float]) -> float:
    """The relative spread of repeated measurements: (max - min) / median; 0 for fewer than 2."""
    mid = median(values)
    if len(values) < 2 or mid <= 0:
        return 0.0
    return (max(values) - min(values)) / mid


#: The verdicts of :func:`verdict` (a throughput: "better" reads "faster"). "undecided": the
#: rounds spread too widely to tell at this many rounds; "unmeasured": a side completed no
#: transaction, so there is nothing to compare.
VERDICTS = ("faster", "slower", "no_change", "undecided", "unmeasured")


@dataclass(frozen=True)
class Verdict:
    """What a before/after comparison of one run says (:func:`verdict`).

    Attributes:
        verdict: one of :data:`VERDICTS`.
        change_percent: the estimated change of commits/s (:class:`Comparison`); None when
            unmeasured.
        low_percent: the lower end of the change's interval (None: unbounded or unmeasured).
        high_percent: the upper end.
        before_rounds: the rounds the "before" run had.
        after_rounds: the rounds the "after" run had.
        before_spread_percent: the before side's own spread of rounds, (max - min) / median
            (None: one round); shown beside the verdict, not used by it.
        after_spread_percent: the after side's own spread.
        client_bound: the clients set the pace in either run (the change is partly theirs).
        too_short: which sides completed no transaction ("before", "after" or both), so were
            too short to measure; empty when both did.
        comparisons: how many runs were judged at once (the interval is widened for them).
        held: why a decided answer was held back as undecided (:func:`drift_held`); "" none.
    """

    workload: str
    threads: int
    verdict: str
    change_percent: float | None
    low_percent: float | None
    high_percent: float | None
    before_rounds: int
    after_rounds: int
    before_spread_percent: float | None
    after_spread_percent: float | None
    client_bound: bool
    too_short: tuple[str, ...] = ()
    comparisons: int = 1
    held: str = ""

    @property
    def decided(self) -> bool:
        """Whether more rounds could change the answer (undecided) or not."""
        return self.verdict != "undecided"

    def interval_text(self) -> str:
        """The change's interval in words ("+31 % to +66 %", "not bounded yet")."""
        if self.low_percent is None or self.high_percent is None:
            return "not bounded yet"
        return f"{pct(self.low_percent)} to {pct(self.high_percent)}"

    def text(self) -> str:
        """The verdict in words, e.g. "faster: +48 % (+31 % to +66 %)"."""
        bound = " (client-bound)" if self.client_bound else ""
        if self.too_short:
            sides = " and ".join(f"“{side}”" for side in self.too_short)
            return (
                f"unmeasured: the {sides} run completed no transaction; no change claimed" + bound
            )
        if self.verdict == "unmeasured":
            return "unmeasured: fewer than 3 rounds a side; no change claimed" + bound
        assert self.change_percent is not None
        span = self.interval_text()
        if self.held:
            return f"undecided: {self.held}" + bound
        if self.verdict == "no_change":
            return f"no change: within ±{NO_CHANGE_PERCENT:.0f}% ({span}){bound}"
        if self.verdict == "undecided" and self.low_percent is None:
            fewest = min(self.before_rounds, self.after_rounds)
            return f"undecided: {fewest} rounds a side are too few to tell; measure longer" + bound
        if self.verdict == "undecided":
            return (
                f"undecided: the rounds spread too widely to tell ({span}); measure longer" + bound
            )
        return f"{self.verdict}: {pct(self.change_percent)} ({span}){bound}"

    def short(self) -> str:
        """Few words, for under a chart's bars: "+48 %", "no change", "undecided"."""
        if self.too_short:
            return "too short"
        if self.verdict == "unmeasured":
            return "unmeasured"
        if self.verdict == "no_change":
            return "no change"
        if self.verdict == "undecided":
            return "undecided"
        assert self.change_percent is not None
        return pct(self.change_percent)

    def as_dict(self) -> dict[str, object]:
        """The JSON form `innotune bench --compare --json` prints."""
        return {
            "workload": self.workload,
            "threads": self.threads,
            "verdict": self.verdict,
            "change_percent": _rounded(self.change_percent),
            "low_percent": _rounded(self.low_percent),
            "high_percent": _rounded(self.high_percent),
            "before_rounds": self.before_rounds,
            "after_rounds": self.after_rounds,
            "comparisons": self.comparisons,
            "before_spread_percent": _rounded(self.before_spread_percent),
            "after_spread_percent": _rounded(self.after_spread_percent),
            "client_bound": self.client_bound,
            "too_short": list(self.too_short),
            "held": self.held,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _rounds_of(result: WorkloadResult) -> tuple[float, ...]:
    return result.rounds or (result.commits_per_s,)


def verdict(
    before: WorkloadResult | None,
    after: WorkloadResult | None,
    comparisons: int = 1,
    held: str = "",
    stands: str = "",
) -> Verdict | None:
    """Faster, slower, no change or undecided: a run's verdict, as every face shows it.

    The run's rounds of commits/s, compared by :func:`compare_rounds` (``comparisons``: how
    many runs are judged together). A side that completed no transaction (:func:`measured`)
    measured nothing, and a side with fewer than :data:`MIN_ROUNDS` rounds too little: the
    verdict is "unmeasured". ``held`` (:func:`drift_held`): why no decided answer can be
    trusted; a decided one becomes "undecided" with that reason, except ``stands``, the one
    answer the drift could not have caused (:func:`drift_stands`). None unless both ran.
    """
    if before is None or after is None:
        return None
    b, a = _rounds_of(before), _rounds_of(after)
    spreads = [spread(r) * 100 if len(r) >= 2 else None for r in (b, a)]
    common = {
        "workload": before.workload,
        "threads": before.threads,
        "before_rounds": len(b),
        "after_rounds": len(a),
        "before_spread_percent": spreads[0],
        "after_spread_percent": spreads[1],
        "client_bound": any_client_bound(before, after),
        "comparisons": comparisons,
    }
    short = tuple(label for label, r in (("before", before), ("after", after)) if not measured(r))
    if short or len(b) < MIN_ROUNDS or len(a) < MIN_ROUNDS or min(b) <= 0 or min(a) <= 0:
        change = None if short else change_percent(before, after)
        return Verdict(
            verdict="unmeasured",
            change_percent=change,
            low_percent=None,
            high_percent=None,
            too_short=short,
            **common,  # type: ignore[arg-type]
        )
    found = compare_rounds(b, a, comparisons=comparisons)
    word = {"better": "faster", "worse": "slower"}.get(found.word, found.word)
    hold = held if word != stands else ""
    return Verdict(
        verdict="undecided" if hold else word,
        change_percent=found.change_percent,
        low_percent=found.low_percent,
        high_percent=found.high_percent,
        held=hold,
        **common,  # type: ignore[arg-type]
    )


def change_text(
    before: WorkloadResult | None,
    after: WorkloadResult | None,
    comparisons: int = 1,
    held: str = "",
    stands: str = "",
) -> str:
    """The verdict on a change in words (:meth:`Verdict.text`); "" unless both ran."""
    found = verdict(before, after, comparisons, held, stands)
    return "" if found is None else found.text()


@dataclass(frozen=True)
class WriteRate:
    """The server's own write activity over a short sample, and whether it looks busy.

    Attributes:
        busy: True when others are writing enough that a benchmark would both disturb them
            and be disturbed by them; ``why`` says what was seen.
    """

    seconds: float
    commits_per_s: float
    rows_per_s: float
    redo_bytes_per_s: float | None
    threads_running: int
    busy: bool
    why: str


@dataclass(frozen=True)
class BenchReport:
    """A whole benchmark: every workload × thread count, and the settings it ran under.

    Attributes:
        snapshot_in_force: the InnoTune snapshot whose changes were in force when it ran
            (applied and not rolled back); "" when none of them was, or it is not known.
        measurement: how the before/after measurement this report is a side of was made
            (None: a benchmark of its own).
        pool_free_bytes: the buffer pool's free pages, in bytes, as the benchmark began
            (None: not read).
        machine_busy: the share (0-1) of the machine's CPUs busy with the benchmark paused,
            sampled at the start and the end of a before/after measurement's side (empty:
            not sampled).
        data_bytes: about the size of the data set the one-row writes went at random
            across (0: none, they went into small fresh tables).
        data_binlog_bytes: how much the server's binary log grew as the data set was
            written (None: no data set, no binary log, or its files could not be listed).
    """

    target: str
    started_at: str
    engine: str  # "innotune" (PyMySQL driver) or "sysbench 1.0.20"
    seconds_per_run: float
    results: tuple[WorkloadResult, ...]
    settings: dict[str, str] = field(default_factory=dict)
    rate_before: WriteRate | None = None
    cancelled: bool = False
    label: str = ""  # "before", "after", "rollback", or a configuration's name
    snapshot_in_force: str = ""
    measurement: Measurement | None = None
    pool_free_bytes: int | None = None
    machine_busy: tuple[float, ...] = ()
    data_bytes: int = 0
    data_binlog_bytes: int | None = None
    format: str = FORMAT

    def result(self, workload: str, threads: int) -> WorkloadResult | None:
        """The result of one workload at one thread count, if it ran."""
        return next(
            (r for r in self.results if r.workload == workload and r.threads == threads), None
        )

    @property
    def client_bound(self) -> tuple[WorkloadResult, ...]:
        """The runs whose clients, not the server, were the limit."""
        return tuple(r for r in self.results if any_client_bound(r))

    def settings_changed(self, before: BenchReport) -> dict[str, tuple[str, str]]:
        """The recorded settings that differ from ``before``'s: name → (before, after).

        Only settings both reports recorded count (an older report recorded fewer).
        """
        common = sorted(set(before.settings) & set(self.settings))
        return {
            name: (before.settings[name], self.settings[name])
            for name in common
            if before.settings[name] != self.settings[name]
        }

    def settings_note(self, before: BenchReport) -> str:
        """Whether this run and ``before`` ran under the same settings, in one sentence."""
        common = set(before.settings) & set(self.settings)
        if not common:
            return "The settings each run used were not recorded."
        changed = self.settings_changed(before)
        if not changed:
            return (
                f"Both runs used the same settings ({len(common)} server values compared): "
                "any difference between them is the host's, not a setting's."
            )
        listed = ", ".join(
            f"{n} {setting_words(n, b)} → {setting_words(n, a)}" for n, (b, a) in changed.items()
        )
        return f"Settings changed between the runs: {listed}."

    def verdicts(self, before: BenchReport) -> list[Verdict]:
        """The verdict on each run this report and ``before`` both have, in ``before``'s order."""
        pairs = [(b, self.result(b.workload, b.threads)) for b in before.results]
        both = sum(1 for _, a in pairs if a is not None)
        held, stands = drift_held(before, self), drift_stands(before, self)
        found = (verdict(b, a, comparisons=both, held=held, stands=stands) for b, a in pairs)
        return [v for v in found if v is not None]

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` gives back an equal value."""
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> BenchReport:
        """Read a report saved by :meth:`to_json`.

        Raises:
            ValueError: not a benchmark report, or a malformed one.
        """
        try:
            report = from_json(cls, text)
        except (TypeError, KeyError, AttributeError) as exc:  # fields missing or mistyped
            raise ValueError(f"not a benchmark report: {exc}") from exc
        if report.format != FORMAT:
            raise ValueError(f"not an InnoTune benchmark report (format {report.format!r})")
        return report


#: Server variables counted in bytes: a report shows them as sizes, as every other page does.
BYTE_SETTINGS = frozenset(
    {
        "innodb_buffer_pool_size",
        "innodb_redo_log_capacity",
        "innodb_log_file_size",
        "innodb_log_buffer_size",
        "key_buffer_size",
        "max_binlog_size",
        "binlog_cache_size",
        "tmp_table_size",
        "max_heap_table_size",
        "temptable_max_ram",
        "aria_pagecache_buffer_size",
    }
)


def setting_words(name: str, value: str | None) -> str:
    """A recorded setting as people read it: sizes in KiB/MiB/GiB, anything else as it is."""
    if value is None:
        return "unset"
    if name in BYTE_SETTINGS and value.isdigit():
        return size_text(int(value))
    return value
