"""The figures of a benchmark: percentiles, rates and counter deltas. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.bench import Counters, Latency

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


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive values (0 if any is not positive or none given)."""
    if not values or any(v <= 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))
