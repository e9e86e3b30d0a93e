"""The figures of a benchmark: percentiles, rates and counter deltas. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.domain.bench import Counters, CpuUse, Latency, WorkloadResult, median
from app.domain.bench import spread as spread  # re-exported: the benchmarks' scripts use it

#: Server status counters a run follows, by the Counters field they feed.
COUNTER_SOURCES: dict[str, tuple[str, ...]] = {
    # The LSN counts every redo byte; Innodb_os_log_written is MySQL's (and old MariaDB's) way.
    "redo_bytes": ("Innodb_lsn_current", "Innodb_os_log_written"),
    "pages_written": ("Innodb_pages_written",),
    "data_fsyncs": ("Innodb_data_fsyncs",),
    "log_fsyncs": ("Innodb_os_log_fsyncs",),
}

#: Every status variable a counter sample reads.
STATUS_NAMES: tuple[str, ...] = tuple(n for names in COUNTER_SOURCES.values() for n in names)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ascending values, by the nearest-rank method.

    Nearest rank always returns a value that was measured, so p99 of 50 samples is the
    largest, never an interpolation beyond what happened. Empty input gives 0.
    """
    if not sorted_values:
        return 0.0
    if not 0 <= p <= 100:
        raise ValueError("a percentile lies between 0 and 100")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return float(sorted_values[rank - 1])


def latency_of(seconds: Sequence[float]) -> Latency:
    """Latency figures (milliseconds) of transaction times given in seconds."""
    if not seconds:
        return Latency()
    ordered = sorted(seconds)
    ms = 1000.0
    return Latency(
        p50_ms=percentile(ordered, 50) * ms,
        p95_ms=percentile(ordered, 95) * ms,
        p99_ms=percentile(ordered, 99) * ms,
        max_ms=ordered[-1] * ms,
        mean_ms=sum(ordered) / len(ordered) * ms,
    )


def latency_from_histogram(buckets: Sequence[tuple[float, int]]) -> Latency:
    """Latency figures from a histogram of (milliseconds, count), as sysbench prints it.

    A bucket's value stands for every event counted in it, so the percentiles are as fine
    as sysbench's buckets (about 1.4 % apart).
    """
    rows = sorted((ms, n) for ms, n in buckets if n > 0)
    total = sum(n for _, n in rows)
    if not total:
        return Latency()

    def at(p: float) -> float:
        rank = max(1, math.ceil(p / 100 * total))
        seen = 0
        for ms, n in rows:
            seen += n
            if seen >= rank:
                return ms
        return rows[-1][0]

    return Latency(
        p50_ms=at(50),
        p95_ms=at(95),
        p99_ms=at(99),
        max_ms=rows[-1][0],
        mean_ms=sum(ms * n for ms, n in rows) / total,
    )


def rate(count: float, seconds: float) -> float:
    """Events per second; 0 when no time passed."""
    return count / seconds if seconds > 0 else 0.0


def counter_delta(samples: Sequence[int]) -> tuple[int, bool]:
    """How far a counter moved over successive samples, and whether it was reset.

    A server restart resets its status counters to zero, so a sample lower than the one
    before starts a new count: that step adds the new value (what was counted since the
    restart), not a negative difference. What happened between the last sample before the
    restart and the restart itself is lost, so sample often.
    """
    total = 0
    reset = False
    for before, after in zip(samples, samples[1:], strict=False):
        if after >= before:
            total += after - before
        else:
            total += after
            reset = True
    return total, reset


@dataclass
class CounterTrack:
    """Samples of the server's counters over one run, turned into :class:`Counters`."""

    samples: list[dict[str, int]] = field(default_factory=list)

    def add(self, status: Mapping[str, str | None]) -> None:
        """Record one sample of SHOW GLOBAL STATUS values (name → text)."""
        sample: dict[str, int] = {}
        for name in STATUS_NAMES:
            text = status.get(name)
            if text is not None and text.strip().lstrip("-").isdigit():
                sample[name] = int(text)
        self.samples.append(sample)

    def counters(self) -> Counters:
        """The deltas over every sample; a counter the server lacks stays None."""
        values: dict[str, int | None] = {}
        restarted = False
        for field_name, names in COUNTER_SOURCES.items():
            values[field_name] = None
            for name in names:
                series = [s[name] for s in self.samples if name in s]
                if len(series) >= 2 and len(series) == len(self.samples):
                    values[field_name], reset = counter_delta(series)
                    restarted = restarted or reset
                    break
        return Counters(
            redo_bytes=values["redo_bytes"],
            pages_written=values["pages_written"],
            data_fsyncs=values["data_fsyncs"],
            log_fsyncs=values["log_fsyncs"],
            restarted=restarted,
        )


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive values (0 if any is not positive or none given)."""
    if not values or any(v <= 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


#: A client busy on CPU for this share of the run (per client) is the run's limit: the
#: server answered faster than the client could ask.
CLIENT_BUSY = 0.7

#: A host whose CPUs are this busy has none to spare; if the clients take a large share of it
#: (CLIENT_SHARE of the server's), they slow the server down.
HOST_BUSY = 0.9
CLIENT_SHARE = 0.5


def judge_cpu(
    *,
    client_cpu_s: float | None,
    server_cpu_s: float | None,
    host_busy: float | None,
    cpus: int | None,
    seconds: float,
    threads: int,
    where: str,
    server_wait_s: float | None = None,
) -> CpuUse:
    """The CPU figures of one run and whether its clients were the limit.

    The clients are the limit when each was busy on CPU most of the run (they could not ask
    faster), when the host had no CPU to spare and the clients took a large share of it from
    the server, or when they ran over the SSH link (every commit waited for a round trip).
    """
    client = rate(client_cpu_s, seconds) if client_cpu_s is not None else None
    server = rate(server_cpu_s, seconds) if server_cpu_s is not None else None
    wait = rate(server_wait_s, seconds) if server_wait_s is not None else None
    why = []
    if where == "link":
        why.append("the clients ran on this computer: each commit waited for the SSH link")
    if client is not None and threads and client / threads >= CLIENT_BUSY:
        why.append(
            f"the load generator kept {client / threads:.0%} of a core busy per client "
            "(it could not ask faster)"
        )
    if (
        client is not None
        and server is not None
        and host_busy is not None
        and host_busy >= HOST_BUSY
        and client >= CLIENT_SHARE * server
    ):
        why.append(
            f"the host's CPUs were {host_busy:.0%} busy and the load generator used "
            f"{client:.2f} cores against the server's {server:.2f}"
        )
    return CpuUse(
        client_cores=None if client is None else round(client, 3),
        server_cores=None if server is None else round(server, 3),
        host_busy=None if host_busy is None else round(host_busy, 3),
        cpus=cpus,
        where=where,
        client_bound=bool(why),
        why="; ".join(why),
        server_wait=None if wait is None else round(wait, 4),
    )


def parse_proc_cpu(stat_line: str, ticks: int = 100) -> float | None:
    """Seconds of CPU in one ``/proc/PID/stat`` line (user + system), or None."""
    try:
        fields = stat_line.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks
    except (IndexError, ValueError):
        return None


def parse_host_cpu(stat_text: str) -> tuple[int, int] | None:
    """(busy, total) jiffies from ``/proc/stat``'s first line (iowait counts as idle)."""
    for line in stat_text.splitlines():
        if line.startswith("cpu "):
            try:
                parts = [int(x) for x in line.split()[1:9]]
            except ValueError:
                return None
            idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
            return sum(parts) - idle, sum(parts)
    return None


def _sum(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _weighted(values: Sequence[tuple[float | None, float]]) -> float | None:
    """The time-weighted mean of (value, seconds); None if any value is missing."""
    total = sum(s for _, s in values)
    if any(v is None for v, _ in values) or total <= 0:
        return None
    return round(sum((v or 0.0) * s for v, s in values) / total, 3)


def merge_rounds(rounds: Sequence[WorkloadResult]) -> WorkloadResult:
    """One run's result from its short rounds (same workload and client count).

    Commits, rows, seconds and counter deltas add up, so commits/s is that of the whole run;
    ``rounds`` keeps each round's commits/s for the noise. Latency percentiles are the median
    of the rounds' (their samples are not kept), the maximum the highest, the mean weighted
    by commits. CPU figures are time-weighted means; client-bound if any round was.
    """
    if not rounds:
        raise ValueError("no rounds to merge")
    if len(rounds) == 1:
        only = rounds[0]
        return replace(only, rounds=(only.commits_per_s,))
    first = rounds[0]
    seconds = sum(r.seconds for r in rounds)
    commits = sum(r.commits for r in rounds)
    rows = sum(r.rows for r in rounds)
    lats = [r.latency for r in rounds]
    timed = all(x.percentiles for x in lats)
    latency = Latency(
        p50_ms=median([x.p50_ms for x in lats]) if timed else 0.0,
        p95_ms=median([x.p95_ms for x in lats]) if timed else 0.0,
        p99_ms=median([x.p99_ms for x in lats]) if timed else 0.0,
        max_ms=max(x.max_ms for x in lats) if timed else 0.0,
        mean_ms=(
            sum(x.mean_ms * r.commits for x, r in zip(lats, rounds, strict=True)) / commits
            if commits
            else 0.0
        ),
        percentiles=timed,
    )
    counters = Counters(
        redo_bytes=_sum([r.counters.redo_bytes for r in rounds]),
        pages_written=_sum([r.counters.pages_written for r in rounds]),
        data_fsyncs=_sum([r.counters.data_fsyncs for r in rounds]),
        log_fsyncs=_sum([r.counters.log_fsyncs for r in rounds]),
        restarted=any(r.counters.restarted for r in rounds),
    )
    cpus = [r.cpu for r in rounds if r.cpu is not None]
    cpu = None
    if len(cpus) == len(rounds):
        timed_cpu = list(zip(cpus, [r.seconds for r in rounds], strict=True))
        whys = list(dict.fromkeys(c.why for c in cpus if c.why))
        cpu = CpuUse(
            client_cores=_weighted([(c.client_cores, s) for c, s in timed_cpu]),
            server_cores=_weighted([(c.server_cores, s) for c, s in timed_cpu]),
            host_busy=_weighted([(c.host_busy, s) for c, s in timed_cpu]),
            cpus=cpus[-1].cpus,
            where=cpus[-1].where,
            client_bound=any(c.client_bound for c in cpus),
            why="; ".join(whys),
            server_wait=_weighted([(c.server_wait, s) for c, s in timed_cpu]),
        )
    unusual = [r.stopped for r in rounds if r.stopped != "time"]
    return WorkloadResult(
        workload=first.workload,
        threads=first.threads,
        seconds=round(seconds, 3),
        commits=commits,
        rows=rows,
        commits_per_s=rate(commits, seconds),
        rows_per_s=rate(rows, seconds),
        latency=latency,
        counters=counters,
        stopped=unusual[-1] if unusual else "time",
        errors=sum(r.errors for r in rounds),
        cpu=cpu,
        rounds=tuple(r.commits_per_s for r in rounds),
    )
