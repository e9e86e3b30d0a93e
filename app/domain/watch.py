"""Watching a server's own workload: its counters over rounds, as costs per commit (pure).

A watch adds no load. It reads the server's status counters, the performance_schema's timer
sums where it is on, the /proc/diskstats line of the disk under the datadir and the server's
threads' schedstat (CPU time and the wait for a CPU), once per round. Each round's figures
are normalised per commit (or per disk write), so that a change in the application's traffic
does not read as a change of the server; the traffic itself (commits/s, rows per commit) is
kept beside every figure. Two watches are compared figure by figure with the one judgement of
:func:`app.domain.compare.compare_rounds`, and only when their traffic is alike
(:func:`traffic_alike`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.compare import MIN_ROUNDS, Comparison, compare_rounds, pct
from app.domain.facts import from_json, to_json

FORMAT = "innotune-watch/1"

#: Traffic is alike when the commits per second of the two watches are within this factor
#: of each other ...
TRAFFIC_RATE_FACTOR = 1.5
#: ... and their rows per commit within this many per cent.
TRAFFIC_ROWS_PERCENT = 20.0

#: The most rounds a watch takes (each at least a second long), and the fewest.
MAX_ROUNDS = 20
MIN_WATCH_SECONDS = 3.0

#: The status counters a watch reads each round (names of ours, never user input).
STATUS_NAMES = (
    "Binlog_commits",
    "Binlog_cache_use",
    "Binlog_stmt_cache_use",
    "Com_commit",
    "Handler_commit",
    "Innodb_data_fsyncs",
    "Innodb_os_log_fsyncs",
    "Innodb_os_log_written",
    "Innodb_lsn_current",
    "Innodb_redo_log_current_lsn",
    "Innodb_pages_written",
    "Innodb_buffer_pool_reads",
    "Innodb_log_waits",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_max_trx_id",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
)

#: How each server line's commits are counted: the status counters summed. Chosen by
#: :func:`commit_counter`, checked against a known number of commits on every server line
#: in tests/integration/test_watch_live.py (MariaDB 10.5 and 11.8, MySQL 9.7).
COMMIT_COUNTERS: dict[str, tuple[tuple[str, ...], int]] = {
    # MariaDB with the binary log: one per transaction written to it.
    "Binlog_commits": (("Binlog_commits",), 1),
    # MySQL with the binary log: each transaction uses the transactional cache, each
    # non-transactional statement the statement cache.
    "Binlog_cache_use + Binlog_stmt_cache_use": (("Binlog_cache_use", "Binlog_stmt_cache_use"), 1),
    # MariaDB without a binary log: a read-write transaction takes two numbers of InnoDB's
    # transaction counter (its id and its commit's serialisation number); reads take none.
    "Innodb_max_trx_id ÷ 2": (("Innodb_max_trx_id",), 2),
    # The last resort: the storage engines' commits, reads included.
    "Handler_commit": (("Handler_commit",), 1),
}


def commit_counter(flavour: str, log_bin: bool, status: Mapping[str, int]) -> str:
    """Which of :data:`COMMIT_COUNTERS` counts this server's write commits.

    Args:
        flavour: ``mysql`` or ``mariadb``.
        log_bin: the binary log is on.
        status: a sample of the counters (to see which of them the server has).
    """
    if log_bin and flavour == "mariadb" and "Binlog_commits" in status:
        return "Binlog_commits"
    if log_bin and "Binlog_cache_use" in status:
        return "Binlog_cache_use + Binlog_stmt_cache_use"
    if flavour == "mariadb" and "Innodb_max_trx_id" in status:
        return "Innodb_max_trx_id ÷ 2"
    return "Handler_commit"


@dataclass(frozen=True)
class Sample:
    """One reading of the counters.

    Attributes:
        elapsed: seconds since the watch's first reading.
        status: the status counters read (:data:`STATUS_NAMES` the server has).
        disk: the datadir disk's /proc/diskstats fields by name (empty: no disk known).
        timers: performance_schema's counts and timer sums in picoseconds, by name
            (``commit_count``, ``commit_ps``, ``statement_count``, ``statement_ps``;
            empty: performance_schema is off).
        cpu: the server's threads' nanoseconds on a CPU (``run_ns``) and ready but waiting
            for one (``wait_ns``), from their schedstat (empty: not readable).
    """

    elapsed: float
    status: dict[str, int]
    disk: dict[str, int] = field(default_factory=dict)
    timers: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Watch:
    """One watch of a server's own workload: its readings and what they were read from.

    Attributes:
        target: where it was read (the target's label).
        started_at: when (ISO 8601, UTC).
        server: the server's name and version.
        flavour: ``mysql`` or ``mariadb``.
        seconds: the window the user asked for.
        round_seconds: the length of each round.
        commit_counter: the key of :data:`COMMIT_COUNTERS` counting commits.
        disk_device: the disk under the datadir ("" none known; ``disk_note`` says why).
        disk_note: how the disk was found, or why there is none.
        disk_own: the disk is the datadir's own (False: the machine's only disk, taken for a
            datadir on an overlay, where everything else writes too; its figures are not
            judged).
        timers_note: where the latencies come from, or why there are none.
        settings: the server's settings the watch ran under (to say what changed).
        samples: the readings, one more than the rounds.
    """

    target: str
    started_at: str
    server: str
    flavour: str
    seconds: float
    round_seconds: float
    commit_counter: str
    disk_device: str
    disk_note: str
    timers_note: str
    settings: dict[str, str]
    samples: tuple[Sample, ...]
    disk_own: bool = True
    format: str = FORMAT

    @property
    def rounds(self) -> int:
        """How many rounds the readings make."""
        return max(0, len(self.samples) - 1)

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` gives back an equal value."""
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> Watch:
        """Read a watch saved by :meth:`to_json`.

        Raises:
            ValueError: not a watch.
        """
        try:
            watch = from_json(cls, text)
        except TypeError as exc:  # a field missing: another kind of file
            raise ValueError(f"not an InnoTune watch ({exc})") from exc
        if watch.format != FORMAT:
            raise ValueError(f"not an InnoTune watch (format {watch.format!r})")
        return watch


def round_plan(seconds: float) -> tuple[int, float]:
    """How many rounds a watch of ``seconds`` takes, and each one's length.

    A round a second long at least, at most :data:`MAX_ROUNDS` of them: more rounds let a
    comparison decide sooner (each side needs several, :func:`compare_watches`).
    """
    seconds = max(MIN_WATCH_SECONDS, seconds)
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(seconds)))
    return rounds, seconds / rounds


@dataclass(frozen=True)
class Figure:
    """A figure a watch reports each round.

    Attributes:
        key: its name in the JSON.
        title: its name in words.
        unit: what it is counted in.
        higher_is_better: its good direction (most are costs: lower is better).
        digits: decimals shown.
        judged: whether comparisons give it a verdict (the traffic figures are shown only).
    """

    key: str
    title: str
    unit: str
    higher_is_better: bool = False
    digits: int = 2
    judged: bool = True


TRAFFIC = (
    Figure("commits_per_s", "commits per second", "commits/s", True, 1, judged=False),
    Figure("rows_per_commit", "rows changed per commit", "rows", True, 2, judged=False),
)

COSTS = (
    Figure("fsyncs_per_commit", "InnoDB fsyncs per commit", "fsyncs", digits=3),
    Figure("redo_bytes_per_commit", "redo log bytes per commit", "bytes", digits=0),
    Figure("pages_written_per_commit", "pages written per commit", "pages", digits=3),
    # What a larger buffer pool saves: pages it lacked, read from disk (queries' reads too).
    Figure("pages_read_per_commit", "pages read from disk per commit", "pages", digits=3),
    Figure("log_waits_per_commit", "waits for the redo log buffer per commit", "waits", digits=4),
    Figure("disk_flushes_per_commit", "disk cache flushes per commit", "flushes", digits=3),
    Figure("disk_writes_per_commit", "disk writes per commit", "writes", digits=3),
    Figure("disk_write_ms", "disk write latency", "ms per write", digits=3),
    Figure("disk_busy_ms_per_commit", "disk busy time per commit", "ms", digits=3),
    Figure("disk_utilisation_pct", "disk utilisation", "% of the time busy", digits=1),
    Figure("cpu_ms_per_commit", "the server's CPU time per commit", "ms", digits=3),
    Figure("cpu_wait_ms_per_commit", "the server's wait for a CPU per commit", "ms", digits=3),
    Figure("commit_latency_ms", "commit latency", "ms", digits=3),
    Figure("statement_latency_ms", "write statement latency", "ms", digits=3),
)

FIGURES = TRAFFIC + COSTS

#: The figures read from the disk's counters.
DISK_KEYS = frozenset(
    (
        "disk_flushes_per_commit",
        "disk_writes_per_commit",
        "disk_write_ms",
        "disk_busy_ms_per_commit",
        "disk_utilisation_pct",
    )
)

#: Why the disk's figures of a disk shared with the whole machine are not judged.
SHARED_DISK = (
    "the disk is shared with everything on the machine (the datadir has no disk of its own): "
    "others' writes would read as the server's"
)
#: The server's CPU figures are shown, never judged: its background work and the other work
#: on the machine's CPUs move them as much as its settings do.
CPU_KEYS = frozenset(("cpu_ms_per_commit", "cpu_wait_ms_per_commit"))
OTHERS_CPU = (
    "the server's CPU time and its wait for a CPU follow its background work and the other "
    "work on the machine's CPUs as much as its settings: shown, not judged"
)
BY_KEY = {f.key: f for f in FIGURES}


def _delta(a: Mapping[str, int], b: Mapping[str, int], *names: str) -> int | None:
    """How much the counters grew (None: one is missing; a restart's drop counts as 0)."""
    if not names or any(n not in a or n not in b for n in names):
        return None
    return sum(max(0, b[n] - a[n]) for n in names)


def commits_between(a: Sample, b: Sample, counter: str) -> float | None:
    """The commits between two readings, by :data:`COMMIT_COUNTERS` ``counter``."""
    names, divisor = COMMIT_COUNTERS.get(counter, ((), 1))
    grew = _delta(a.status, b.status, *names)
    return None if grew is None else grew / divisor


def _rows(a: Sample, b: Sample) -> int | None:
    # MySQL's Handler_write also counts its own system tables' rows (about 170 a second on an
    # idle 9.7), so InnoDB's row counters come first; MariaDB 11 has none, and its
    # Handler_write counts the rows written (temporary tables apart, in Handler_tmp_write).
    if "Innodb_rows_inserted" in b.status:
        names = ("Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted")
    else:
        names = ("Handler_write", "Handler_update", "Handler_delete")
    return _delta(a.status, b.status, *names)


def _redo(a: Sample, b: Sample) -> int | None:
    # The LSN counts redo generated (MariaDB; MySQL 8.0.30+); Innodb_os_log_written, writes.
    for name in ("Innodb_lsn_current", "Innodb_redo_log_current_lsn", "Innodb_os_log_written"):
        if name in b.status:
            return _delta(a.status, b.status, name)
    return None


def round_figures(a: Sample, b: Sample, counter: str) -> dict[str, float | None]:
    """Every figure of :data:`FIGURES` for the round between two readings (None: not known).

    Per-commit figures are None in a round without a commit.
    """
    seconds = b.elapsed - a.elapsed
    commits = commits_between(a, b, counter)
    rows = _rows(a, b)

    def per_commit(count: float | None) -> float | None:
        if count is None or not commits:
            return None
        return count / commits

    out: dict[str, float | None] = {
        "commits_per_s": commits / seconds if commits is not None and seconds > 0 else None,
        "rows_per_commit": per_commit(rows),
        "fsyncs_per_commit": per_commit(_delta(a.status, b.status, "Innodb_data_fsyncs")),
        "redo_bytes_per_commit": per_commit(_redo(a, b)),
        "pages_written_per_commit": per_commit(_delta(a.status, b.status, "Innodb_pages_written")),
        "pages_read_per_commit": per_commit(_delta(a.status, b.status, "Innodb_buffer_pool_reads")),
        "log_waits_per_commit": per_commit(_delta(a.status, b.status, "Innodb_log_waits")),
    }
    writes = _delta(a.disk, b.disk, "writes")
    write_ms = _delta(a.disk, b.disk, "write_ms")
    busy = _delta(a.disk, b.disk, "io_ms")
    out["disk_flushes_per_commit"] = per_commit(_delta(a.disk, b.disk, "flushes"))
    out["disk_writes_per_commit"] = per_commit(writes)
    out["disk_write_ms"] = write_ms / writes if writes and write_ms is not None else None
    out["disk_busy_ms_per_commit"] = per_commit(busy)
    # Utilisation follows the traffic too: judged only beside alike traffic, as every figure.
    out["disk_utilisation_pct"] = busy / seconds / 10 if busy is not None and seconds > 0 else None
    run_ns = _delta(a.cpu, b.cpu, "run_ns")
    wait_ns = _delta(a.cpu, b.cpu, "wait_ns")
    out["cpu_ms_per_commit"] = per_commit(None if run_ns is None else run_ns / 1e6)
    out["cpu_wait_ms_per_commit"] = per_commit(None if wait_ns is None else wait_ns / 1e6)
    out["commit_latency_ms"] = _mean_ms(a.timers, b.timers, "commit")
    out["statement_latency_ms"] = _mean_ms(a.timers, b.timers, "statement")
    return out


def _mean_ms(a: Mapping[str, int], b: Mapping[str, int], what: str) -> float | None:
    count = _delta(a, b, f"{what}_count")
    picos = _delta(a, b, f"{what}_ps")
    if not count or picos is None:
        return None
    return picos / count / 1e9


def rounds_of(watch: Watch) -> list[dict[str, float | None]]:
    """Each round's figures, in order."""
    pairs = zip(watch.samples, watch.samples[1:], strict=False)
    return [round_figures(a, b, watch.commit_counter) for a, b in pairs]


def series(watch: Watch, key: str) -> list[float]:
    """The rounds' values of one figure, leaving out rounds where it is not known."""
    return [v for r in rounds_of(watch) if (v := r[key]) is not None]


def median(values: Sequence[float]) -> float | None:
    """The median (None for no values)."""
    return statistics.median(values) if values else None


@dataclass(frozen=True)
class Traffic:
    """What the application did during a watch: the medians of its rounds.

    Attributes:
        commits_per_s: commits per second.
        rows_per_commit: rows inserted, updated or deleted per commit.
        rounds: rounds with commits.
    """

    commits_per_s: float
    rows_per_commit: float | None
    rounds: int

    def text(self) -> str:
        """``212.0 commits/s, 1.00 rows per commit``."""
        rows = "" if self.rows_per_commit is None else f", {self.rows_per_commit:,.2f} rows/commit"
        return f"{self.commits_per_s:,.1f} commits/s{rows}"


def traffic(watch: Watch) -> Traffic:
    """The watch's traffic (medians over its rounds)."""
    rates = series(watch, "commits_per_s")
    return Traffic(
        commits_per_s=median(rates) or 0.0,
        rows_per_commit=median(series(watch, "rows_per_commit")),
        rounds=sum(1 for r in rates if r > 0),
    )


def traffic_alike(before: Traffic, after: Traffic) -> str:
    """Why the two watches' traffic is too unlike to compare ("": alike enough)."""
    low, high = sorted((before.commits_per_s, after.commits_per_s))
    if low <= 0:
        return "one side saw no commits"
    if high / low > TRAFFIC_RATE_FACTOR:
        return (
            f"the traffic changed too much to compare: {before.commits_per_s:,.1f} → "
            f"{after.commits_per_s:,.1f} commits/s (alike is within "
            f"{TRAFFIC_RATE_FACTOR:g}×)"
        )
    rb, ra = before.rows_per_commit, after.rows_per_commit
    if rb and ra is not None and abs(ra / rb - 1) * 100 > TRAFFIC_ROWS_PERCENT:
        return (
            f"the kind of traffic changed too much to compare: {rb:,.2f} → {ra:,.2f} rows "
            f"per commit (alike is within ±{TRAFFIC_ROWS_PERCENT:g} %)"
        )
    return ""


@dataclass(frozen=True)
class FigureVerdict:
    """One figure of two watches, judged.

    Attributes:
        key: the figure's key (:data:`FIGURES`).
        verdict: better, worse, no_change, undecided; ``not_compared`` when the traffic
            differed too much or a side has too few rounds with it; ``not_measured`` when
            neither side has it.
        before: the median of the "before" rounds (None: none).
        after: the median of the "after" rounds.
        change_percent: the estimated change (None: not compared).
        low_percent: its interval's lower end (None: not bounded or not compared).
        high_percent: its upper end.
        before_rounds: rounds of "before" with the figure.
        after_rounds: rounds of "after" with it.
        note: a word on the verdict ("" none).
    """

    key: str
    verdict: str
    before: float | None
    after: float | None
    change_percent: float | None
    low_percent: float | None
    high_percent: float | None
    before_rounds: int
    after_rounds: int
    note: str = ""


@dataclass(frozen=True)
class WatchComparison:
    """Two watches compared: the traffic of each side and each figure's verdict.

    Attributes:
        before: the traffic before.
        after: the traffic after.
        why_not: "" when the traffic was alike; else why no figure got a verdict.
        figures: the cost figures, judged.
        settings_changed: the settings that differ, ``name: (before, after)``.
    """

    before: Traffic
    after: Traffic
    why_not: str
    figures: tuple[FigureVerdict, ...]
    settings_changed: dict[str, tuple[str, str]]


#: A cost that is 0 in a round (no log wait at all) is judged as this tiny amount, because
#: the rank comparison takes ratios; zero on both sides throughout is "no change" outright.
ZERO_FLOOR = 1e-9


def compare_watches(before: Watch, after: Watch) -> WatchComparison:
    """Every cost figure of two watches judged by :func:`compare_rounds`, traffic beside it.

    The figures judged at once share the comparison's error (``comparisons``), so that one
    of many is not called better or worse by chance.
    """
    tb, ta = traffic(before), traffic(after)
    why_not = traffic_alike(tb, ta)
    shared = not (before.disk_own and after.disk_own)
    pairs = {f.key: (series(before, f.key), series(after, f.key)) for f in COSTS}

    def unjudged(key: str) -> str:
        if key in CPU_KEYS:
            return OTHERS_CPU
        return SHARED_DISK if shared and key in DISK_KEYS else why_not

    judged = [
        k
        for k, (b, a) in pairs.items()
        if len(b) >= MIN_ROUNDS and len(a) >= MIN_ROUNDS and not unjudged(k)
    ]
    verdicts = [_judge(f, *pairs[f.key], unjudged(f.key), len(judged)) for f in COSTS]
    changed = {
        name: (before.settings.get(name, ""), after.settings.get(name, ""))
        for name in sorted(set(before.settings) | set(after.settings))
        if before.settings.get(name) != after.settings.get(name)
    }
    return WatchComparison(tb, ta, why_not, tuple(verdicts), changed)


def _judge(
    fig: Figure, b: list[float], a: list[float], why_not: str, comparisons: int
) -> FigureVerdict:
    def verdict(word: str, found: Comparison | None = None, note: str = "") -> FigureVerdict:
        return FigureVerdict(
            key=fig.key,
            verdict=word,
            before=median(b),
            after=median(a),
            change_percent=None if found is None else found.change_percent,
            low_percent=None if found is None else found.low_percent,
            high_percent=None if found is None else found.high_percent,
            before_rounds=len(b),
            after_rounds=len(a),
            note=note,
        )

    if not b and not a:
        return verdict("not_measured")
    if why_not:
        return verdict("not_compared", note=why_not)
    if len(b) < MIN_ROUNDS or len(a) < MIN_ROUNDS:
        return verdict("not_compared", note=f"fewer than {MIN_ROUNDS} rounds with it on a side")
    if not any(b) and not any(a):
        return verdict("no_change", note="none on either side")
    found = compare_rounds(
        [max(v, ZERO_FLOOR) for v in b],
        [max(v, ZERO_FLOOR) for v in a],
        higher_is_better=fig.higher_is_better,
        comparisons=max(1, comparisons),
    )
    return verdict(found.word, found)


def value_text(key: str, value: float | None) -> str:
    """A figure's value with its unit: ``1.000 fsyncs``, ``5,120 bytes``, or ``—``."""
    if value is None:
        return "—"
    fig = BY_KEY[key]
    return f"{value:,.{fig.digits}f} {fig.unit}"


VERDICT_WORDS = {
    "better": "better",
    "worse": "worse",
    "no_change": "no change",
    "undecided": "undecided: the rounds spread too widely to tell; watch longer",
    "not_compared": "not compared",
    "not_measured": "not measured",
}


def verdict_text(found: FigureVerdict) -> str:
    """The verdict in words, with its change and interval when it has them."""
    words = VERDICT_WORDS.get(found.verdict, found.verdict)
    if found.change_percent is not None:
        if found.low_percent is None or found.high_percent is None:
            span = "interval not bounded yet"
        else:
            span = f"{pct(found.low_percent)} to {pct(found.high_percent)}"
        words += f" ({pct(found.change_percent)}, {span})"
    if found.note and found.verdict != "not_compared":
        words += f"; {found.note}"
    return words


def has_figure(watch: Watch, key: str) -> bool:
    """Whether any round of the watch has the figure."""
    return bool(series(watch, key))
