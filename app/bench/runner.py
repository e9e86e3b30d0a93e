"""The bounded write benchmark: a scratch schema, three workloads at 1 and N clients, figures.

Safe on a server that matters: everything happens in a schema of its own
(``innotune_bench_<random>``), created at the start and dropped at the end — also after a
failure or a cancel; each run stops at its time budget, or earlier at a row or byte cap;
a cancel stops it within one transaction.

Clients are separate sessions from ``open_session`` (the caller decides the route: a local
socket, a relay, TCP through SSH). With a :class:`ClientRoute` (sysbench, InnoTune's load
generator or mysqlslap), the clients run on the target, with the same statements and figures.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from app.bench.cpu import CpuProbe, cpu_between
from app.bench.figures import STATUS_NAMES, CounterTrack, latency_of, merge_rounds, rate
from app.bench.rate import status_values
from app.bench.settings import SETTINGS as SETTINGS
from app.bench.settings import binlog_bytes, binlog_growth, pool_free_bytes, server_settings
from app.bench.steps import ScratchTables, Side, StepTimes, side_order
from app.bench.workloads import (
    ROW_BYTES,
    ROWS_PER_TX,
    Statements,
    data_fill_sql,
    data_rows,
    data_warm_sql,
)
from app.domain.bench import WORKLOADS, BenchReport, WorkloadResult
from app.domain.errors import InnoTuneError
from app.mysql.session import ClientBatchSession, Session

SessionFactory = Callable[[], Session]


class ClientRoute(Protocol):
    """Clients that run elsewhere (on the target): sysbench, the load generator, mysqlslap."""

    @property
    def engine(self) -> str:
        """What the report names as the clients."""
        ...

    @property
    def spreads_writes(self) -> bool:
        """The clients can write at random across a data set (BenchOptions.data_bytes)."""
        ...

    def run(
        self, bench: Benchmark, control: Session, workload: str, threads: int
    ) -> WorkloadResult:
        """One workload at one client count."""
        ...


#: The shortest round (and run) the benchmark makes, in seconds.
MIN_ROUND_SECONDS = 0.5

#: What a step is assumed to spend beyond its run (a table, the clients' start) until the
#: first one has been measured, in seconds.
STEP_OVERHEAD = 0.3

#: MySQL error numbers a write transaction can meet under concurrency and simply retry.
RETRYABLE = ("1213", "1205")


#: The most rounds a run takes, added rounds included.
MAX_ROUNDS = 20


#: Given each side's report so far: the runs (workload, threads) that want another round.
More = Callable[[list["BenchReport"]], "list[tuple[str, int]]"]


class BenchError(InnoTuneError):
    """The benchmark could not run or had to stop."""


@dataclass(frozen=True)
class BenchOptions:
    """How long and how big a benchmark may get.

    Attributes:
        seconds: the whole benchmark's time budget, shared equally by its runs
            (workloads × thread counts).
        threads: the client counts each workload runs at.
        max_rows: a run stops once it has written this many rows.
        max_bytes: a run stops once its rows take about this much space.
        rounds: each run is made of this many short rounds, taken in turn with the other
            runs' (round 1 of every run, then round 2, …), so that the spread of a run's
            rounds shows the host's run-to-run noise over the whole benchmark. The caps hold
            per round (each round has a fresh table).
    """

    seconds: float = 60.0
    threads: tuple[int, ...] = (1, 4)
    workloads: tuple[str, ...] = WORKLOADS
    max_rows: int = 2_000_000
    max_bytes: int = 512 * 1024 * 1024
    label: str = ""
    rounds: int = 1
    data_bytes: int = 0

    def __post_init__(self) -> None:
        if self.seconds <= 0:
            raise ValueError("the benchmark needs a time budget above 0 seconds")
        if not self.threads or any(t < 1 or t > 64 for t in self.threads):
            raise ValueError("thread counts lie between 1 and 64")
        unknown = set(self.workloads) - set(WORKLOADS)
        if unknown:
            raise ValueError(f"unknown workloads: {', '.join(sorted(unknown))}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError("a run takes between 1 and 20 rounds")
        if self.data_bytes < 0:
            raise ValueError("a data set's size is 0 (none) or more bytes")

    @property
    def runs(self) -> list[tuple[str, int]]:
        """(workload, threads) in the order they run."""
        threads = sorted(set(self.threads))
        return [(w, t) for w in self.workloads for t in threads]

    @property
    def seconds_per_run(self) -> float:
        """Each run's share of the time budget (all its rounds)."""
        return self.seconds / len(self.runs)

    @property
    def rounds_run(self) -> int:
        """The rounds each run is made of: as asked, but none shorter than MIN_ROUND_SECONDS.

        A budget too small for that many rounds gets fewer (one at the least): a round
        shorter than that measures the clients' start, not the server.
        """
        fit = int(self.seconds_per_run // MIN_ROUND_SECONDS)
        return max(1, min(self.rounds, fit))

    @property
    def steps(self) -> list[tuple[int, str, int]]:
        """(round, workload, threads) in the order they run: every run's round 1 first."""
        return [(n, w, t) for n in range(1, self.rounds_run + 1) for w, t in self.runs]

    @property
    def row_cap(self) -> int:
        """The lower of the row cap and the rows the byte cap allows."""
        return min(self.max_rows, self.max_bytes // ROW_BYTES)


def _quiet(_text: str) -> None:
    pass


def _ignore(_value: object) -> None:
    pass


# -- one run with InnoTune's own driver -------------------------------------------------------


@dataclass
class _Client:
    session: Session
    statements: Statements
    latencies: list[float] = field(default_factory=list)
    rows: int = 0
    errors: int = 0
    fatal: InnoTuneError | None = None

    def loop(self, stop: threading.Event) -> None:
        per_tx = ROWS_PER_TX[self.statements.workload]
        while not stop.is_set():
            statements = self.statements.transaction()
            started = time.perf_counter()
            try:
                for sql in statements:
                    self.session.query(sql)
            except InnoTuneError as exc:
                if any(code in exc.problem for code in RETRYABLE):
                    self.errors += 1
                    self._rollback()
                    continue
                self.fatal = exc
                stop.set()
                return
            self.latencies.append(time.perf_counter() - started)
            self.rows += per_tx

    def _rollback(self) -> None:
        try:
            self.session.query("ROLLBACK")
        except InnoTuneError:
            pass


class Benchmark:
    """One benchmark against one server; :meth:`run` does the whole of it."""

    def __init__(
        self,
        open_session: SessionFactory,
        options: BenchOptions | None = None,
        *,
        cancel: threading.Event | None = None,
        say: Callable[[str], None] = _quiet,
        progress: Callable[[float], None] = _ignore,
        on_result: Callable[[WorkloadResult], None] = _ignore,
        target: str = "",
        route: ClientRoute | None = None,
        cpu_probe: CpuProbe | None = None,
    ) -> None:
        self.open_session = open_session
        self.options = options or BenchOptions()
        self.cancel = cancel or threading.Event()
        self.say = say
        self.progress = progress
        self.on_result = on_result
        # Where the clients run: a ClientRoute (on the target), or None for InnoTune's own
        # driver in this process.
        self.route = route
        # Reads the server's and the host's CPU around runs whose clients do not report it.
        self.cpu_probe = cpu_probe
        self.target = target
        self.schema = f"innotune_bench_{secrets.token_hex(4)}"
        self.run_seconds = self.options.seconds_per_run
        # What :meth:`run_sides` did: the rounds each run took, why it stopped adding rounds
        # (decided, budget, rounds: the most, or the options' without ``more``; cancelled),
        # and the seconds it took in all.
        self.rounds_done = self.options.rounds_run
        self.stopped = ""
        self.seconds_used = 0.0
        self._steps_total = len(self.options.steps)
        # Where each step's time goes (set-up, clients' start, the timed part, readings), the
        # tables kept between rounds, and what a route keeps running between rounds (closed
        # at the end by ``closers``, newest first).
        self.times = StepTimes()
        self.tables = ScratchTables(self.schema)
        # The data set the one-row writes spread over (0 rows: none; mysqlslap's fixed list
        # of statements cannot pick a row at random), and the seconds writing it took.
        wanted = data_rows(self.options.data_bytes)
        self.data_rows = wanted if wanted and (route is None or route.spreads_writes) else 0
        self.data_seconds = 0.0
        self.data_binlog_bytes: int | None = None  # the binary log's growth as it was written
        self.kept: dict[str, Any] = {}
        self.closers: list[Callable[[], None]] = []

    # -- the whole benchmark ----------------------------------------------------------------
    def run(self) -> BenchReport:
        """Create the scratch schema, run every workload, drop the schema; return the report.

        Raises:
            BenchError: a run failed (the schema is dropped all the same).
        """
        return self.run_sides((Side(self.options.label),))[0]

    def run_sides(
        self,
        sides: tuple[Side, ...],
        *,
        more: More | None = None,
        budget: float | None = None,
    ) -> list[BenchReport]:
        """Run every workload for each side in turn, adding rounds while ``more`` asks.

        Each step (one round of one run) is taken by every side in turn, each side's
        ``enter`` called before it when it has one: with two sides that set old and new
        values, the rounds alternate A B A B …, so a drift of the host's load hits both
        alike, and the last step runs on the last side. Sides whose switch is slow take
        whole rounds in turn (A B, B A, …: :func:`app.bench.steps.side_order`).

        Args:
            sides: what is measured; one report per side, in this order.
            more: once the options' rounds are done, and after each added round: the runs
                that want another round (given each side's report so far); a run not named
                gets no more. None: no rounds are added.
            budget: the most seconds the whole benchmark may take, added rounds included
                (None: the options' seconds for each side). A round is added only when it
                fits in what is left.

        Raises:
            BenchError: a run failed (the schema is dropped all the same).
        """
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        started = time.monotonic()
        control = self.open_session()
        if isinstance(control, ClientBatchSession) and self.route is None:
            # Each statement would be its own client process: no transaction could span two
            # statements, and the figures would time process start-up, not commits.
            control.close()
            raise BenchError(
                "The only route to this server is its client program, one process per "
                "statement; a write benchmark needs a connection that stays open.",
                "Install socat or python3 on the target (or sysbench), or give a database "
                "user and password for TCP.",
            )
        base_seconds = self.options.seconds * len(sides)
        limit = started + max(budget or 0.0, base_seconds)
        settings: dict[str, dict[str, str]] = {}
        free: dict[str, int | None] = {}  # the pool's free bytes as each side began
        rounds: dict[tuple[str, str, int], list[WorkloadResult]] = {}
        engine = "innotune" if self.route is None else self.route.engine

        def reports() -> list[BenchReport]:
            return [
                BenchReport(
                    target=self.target,
                    started_at=started_at,
                    engine=engine,
                    seconds_per_run=self.options.seconds_per_run,
                    results=tuple(
                        merge_rounds(rounds[(side.label, w, t)])
                        for w, t in self.options.runs
                        if (side.label, w, t) in rounds
                    ),
                    settings=settings.get(side.label, {}),
                    pool_free_bytes=free.get(side.label),
                    data_bytes=self.data_rows * ROW_BYTES,
                    data_binlog_bytes=self.data_binlog_bytes,
                    cancelled=self.cancel.is_set(),
                    label=side.label,
                )
                for side in sides
            ]

        try:
            if sides[0].enter is None:
                settings[sides[0].label] = server_settings(control)
                free[sides[0].label] = pool_free_bytes(control)
            self.say(f"Creating the scratch schema {self.schema}")
            control.query(f"CREATE DATABASE `{self.schema}`")
            if self.data_rows:
                # Preparing, not measuring: the rounds' time and budget start after it.
                self._write_data_set(control)
                started += self.data_seconds
                limit += self.data_seconds
            steps = [
                step
                for n in range(1, self.options.rounds_run + 1)
                for step in side_order(n, self.options.runs, sides)
            ]
            self._steps_total = len(steps)
            # Setting up a table and starting the clients take time too (the overhead of a
            # step, measured as they go): each step runs for its equal share of what is left
            # after the overhead of the steps to come, so the base rounds stay within their
            # time and every round is as long as the others (a round cut short by the
            # overhead of earlier ones would differ from them for that reason alone).
            deadline = started + base_seconds
            overheads: list[float] = []
            current: Side | None = None
            self.rounds_done = self.options.rounds_run
            self.stopped = "rounds"
            i = 0
            while i < len(steps) and not self.cancel.is_set():
                n, workload, threads, side = steps[i]
                step_started = time.monotonic()
                overhead = sum(overheads) / len(overheads) if overheads else STEP_OVERHEAD
                if n <= self.options.rounds_run:
                    remaining = self.options.rounds_run * len(self.options.runs) * len(sides) - i
                    left = deadline - step_started - overhead * remaining
                    self.run_seconds = max(MIN_ROUND_SECONDS, left / remaining)
                self.times.begin()
                if side is not current and side.enter is not None:
                    with self.times.within("switch"):
                        side.enter(control)
                        if side.warm and self.data_rows:
                            for sql in data_warm_sql():
                                control.query(sql)
                        if side.label not in settings:
                            settings[side.label] = server_settings(control)
                            free[side.label] = pool_free_bytes(control)
                current = side
                of = f", round {n} of {self.rounds_done}" if self.rounds_done > 1 else ""
                who = f" “{side.label}”" if len(sides) > 1 else ""
                digits = 0 if self.run_seconds >= 10 else 1
                self.say(
                    f"Run {i + 1} of {len(steps)}{who}: {workload} with {threads} "
                    f"client{'s' if threads > 1 else ''}{of} ({self.run_seconds:.{digits}f} s)"
                )
                result = self._one(control, workload, threads, i, len(steps))
                self.times.end(result.seconds)
                overheads.append(max(0.0, time.monotonic() - step_started - result.seconds))
                rounds.setdefault((side.label, workload, threads), []).append(result)
                i += 1
                self.progress(i / len(steps))
                if i < len(steps) or more is None or self.cancel.is_set():
                    continue
                per_round = sum(1 for step in steps if step[0] == n)
                wanted = [run for run in self.options.runs if run in more(reports())]
                if not wanted:
                    self.stopped = "decided"
                    break
                # The last round's steps say best what a step costs now (the load drifts).
                recent = overheads[-per_round:]
                cost = len(wanted) * len(sides) * (self.run_seconds + sum(recent) / len(recent))
                if n >= MAX_ROUNDS:
                    self.stopped = "rounds"
                elif time.monotonic() + cost > limit:
                    self.stopped = "budget"
                else:
                    self.rounds_done = n + 1
                    steps += side_order(n + 1, wanted, sides)
                    self._steps_total = len(steps)
            if self.cancel.is_set():
                self.stopped = "cancelled"
        finally:
            self.seconds_used = time.monotonic() - started
            for close in reversed(self.closers):
                try:
                    close()
                except (InnoTuneError, OSError):
                    pass  # a program already gone; the schema is dropped all the same
            self._drop(control)
        found = reports()
        for report in found:
            for result in report.results:
                self.on_result(result)
        return found

    def _write_data_set(self, control: Session) -> None:
        """Make the data set in the scratch schema (stopped early when cancelled)."""
        began = time.monotonic()
        self.say(
            f"Writing a data set of {self.data_rows:,} rows (about "
            f"{round(self.data_rows * ROW_BYTES / 2**20):,} MiB) for the one-row writes to "
            "spread over"
        )
        control.query(f"USE `{self.schema}`")
        first = binlog_bytes(control)
        for sql in data_fill_sql(self.data_rows):
            if self.cancel.is_set():
                break
            control.query(sql)
        self.data_seconds = time.monotonic() - began
        self.data_binlog_bytes = binlog_growth(control, first)

    def _drop(self, control: Session) -> None:
        """Drop the scratch schema, through a fresh session if the old one broke."""
        sql = f"DROP DATABASE IF EXISTS `{self.schema}`"
        try:
            control.query(sql)
        except InnoTuneError:
            control.close()
            control = self.open_session()
            control.query(sql)
        finally:
            control.close()
        self.say(f"Dropped the scratch schema {self.schema}")

    def _one(
        self, control: Session, workload: str, threads: int, index: int, count: int
    ) -> WorkloadResult:
        # Every round starts on an empty table (prefilled where the workload wants rows): made
        # once, emptied after each round (see app.bench.steps).
        with self.times.within("table"):
            self.tables.ready(control, workload)
        try:
            if self.route is not None:
                return self.route.run(self, control, workload, threads)
            return self._driver_run(control, workload, threads, index, count)
        finally:
            with self.times.within("table"):
                self.tables.empty(control, workload)

    def watch(
        self,
        control: Session,
        done: Callable[[], bool],
        rows: Callable[[], int],
        stop: Callable[[str], None],
        seconds: float,
        track: CounterTrack,
        base: float = 0.0,
    ) -> str:
        """Sample counters while a run goes; stop it on time, the caps or a cancel.

        Returns:
            Why it stopped: time, rows, bytes or cancelled.
        """
        started = time.monotonic()
        last_sample = started
        why = "time"
        cap = self.options.row_cap
        while not done():
            now = time.monotonic()
            if self.cancel.is_set():
                why = "cancelled"
            elif rows() >= cap:
                why = "rows" if cap == self.options.max_rows else "bytes"
            elif now - started >= seconds:
                why = "time"
            else:
                if now - last_sample >= 1.0:
                    self.sample(control, track)
                    last_sample = now
                self.progress(base + min(1.0, (now - started) / seconds) / self._steps_total)
                self.cancel.wait(0.1)
                continue
            stop(why)
            return why
        return why

    def sample(self, control: Session, track: CounterTrack) -> None:
        """Add one sample of the counters to ``track`` (a failed sample is skipped)."""
        try:
            track.add(status_values(control, STATUS_NAMES))
        except InnoTuneError:
            pass  # a sample lost to a restart; the next one counts from the new start

    def _driver_run(
        self, control: Session, workload: str, threads: int, index: int, count: int
    ) -> WorkloadResult:
        clients: list[_Client] = []
        try:
            with self.times.within("start"):
                for n in range(threads):
                    session = self.open_session()
                    statements = Statements(workload, index * 1000 + n, self.data_rows)
                    clients.append(_Client(session, statements))
                    session.query(f"USE `{self.schema}`")
            track = CounterTrack()
            with self.times.within("reads"):
                self.sample(control, track)
            stop = threading.Event()
            workers = [
                threading.Thread(target=c.loop, args=(stop,), name=f"bench-{workload}-{i}")
                for i, c in enumerate(clients)
            ]
            cpu_before = self.cpu_probe.sample() if self.cpu_probe else None
            cpu0 = time.process_time()
            started = time.perf_counter()
            for w in workers:
                w.start()
            why = self.watch(
                control,
                done=lambda: stop.is_set(),
                rows=lambda: sum(c.rows for c in clients),
                stop=lambda _why: stop.set(),
                seconds=self.run_seconds,
                track=track,
                base=index / count,
            )
            stop.set()
            for w in workers:
                w.join()
            took = time.perf_counter() - started
            client_cpu = time.process_time() - cpu0
            self.sample(control, track)
            cpu = None
            if self.cpu_probe is not None and cpu_before is not None:
                cpu = cpu_between(
                    cpu_before,
                    self.cpu_probe.sample(),
                    client_cpu_s=client_cpu,
                    seconds=took,
                    # One Python process: its clients share one core (the GIL).
                    threads=1,
                    where=self.cpu_probe.where,
                )
        finally:
            for c in clients:
                c.session.close()
        fatal = next((c.fatal for c in clients if c.fatal), None)
        if fatal is not None:
            raise BenchError(
                f"The {workload} run stopped on an error: {fatal.problem}",
                fatal.fix or "Check that the server still runs; the scratch schema was dropped.",
            )
        latencies = [x for c in clients for x in c.latencies]
        rows = sum(c.rows for c in clients)
        return WorkloadResult(
            workload=workload,
            threads=threads,
            seconds=round(took, 3),
            commits=len(latencies),
            rows=rows,
            commits_per_s=rate(len(latencies), took),
            rows_per_s=rate(rows, took),
            latency=latency_of(latencies),
            counters=track.counters(),
            stopped=why,
            errors=sum(c.errors for c in clients),
            cpu=cpu,
        )


def run_benchmark(
    open_session: SessionFactory,
    options: BenchOptions | None = None,
    **kwargs: object,
) -> BenchReport:
    """Run a whole benchmark (see :class:`Benchmark` for the keyword arguments)."""
    return Benchmark(open_session, options, **kwargs).run()  # type: ignore[arg-type]
