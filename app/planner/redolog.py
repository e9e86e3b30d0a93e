"""The redo log's figures: its size, the redo rate it is sized from, the crash-recovery time.

Pure functions of the facts.
"""

from __future__ import annotations

from app.domain.hostfacts import HostFacts
from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import ServerFacts
from app.planner.values import GIB, duration_text, size_text

#: When no redo rate was measured: a labelled assumption of 1 GiB of redo per hour.
ASSUMED_REDO_BYTES_PER_S = GIB / 3600


def uses_capacity(version: ServerVersion) -> bool:
    """MySQL 8.0.30+ sizes the redo log with innodb_redo_log_capacity."""
    return version.family is Flavour.MYSQL and version.number >= (8, 0, 30)


def redo_total(server: ServerFacts) -> int | None:
    """The redo log's whole size now (all files)."""
    return server.redo_bytes()


def redo_rate(server: ServerFacts) -> float | None:
    """Measured redo bytes per second, or None without a (non-idle) sample."""
    rate = server.rates.redo_bytes_per_s if server.rates else None
    return rate if rate else None


def planning_rate(server: ServerFacts) -> tuple[float, str]:
    """The redo rate to size the log with, and the words that say where it comes from.

    A short sample of an idle or nearly idle server says little about its peak: below the
    stated assumption (1 GiB per hour) the assumption is used instead, so the size never
    falls as the measured rate rises (monotonic) and an idle sample never shrinks the log.
    """
    rate = redo_rate(server)
    secs = server.rates.seconds if server.rates else 0
    if rate is not None and rate >= ASSUMED_REDO_BYTES_PER_S:
        return rate, (
            f"the server wrote {size_text(rate)} of redo per second during the {secs:.0f} s sample"
        )
    seen = (
        f"the {secs:.0f} s sample saw only {size_text(rate)} of redo per second, too little "
        "to show the peak"
        if rate is not None
        else "no redo write rate was measured (no sample, or an idle server)"
    )
    return ASSUMED_REDO_BYTES_PER_S, (
        f"{seen}, so this is a labelled default: an assumed 1 GiB of redo per hour (inspect "
        "with a longer status sample under the real load to size it from a measurement)"
    )


def representative(server: ServerFacts) -> bool:
    """True when the sample's redo rate is what the log is sized from (see planning_rate)."""
    rate = redo_rate(server)
    return rate is not None and rate >= ASSUMED_REDO_BYTES_PER_S


def recovery_range(total: float, spinning: bool) -> tuple[float, float]:
    """A rough crash-recovery time for a redo log of ``total`` bytes, in seconds.

    Recovery replays the log written since the last checkpoint: usually a small part of
    the log, at worst about three quarters of it. Replay speed is taken as 50-200 MB/s on
    solid state, 10-50 MB/s on spinning disks (rough figures; the checkpoint age decides).
    """
    slow, fast = (10e6, 50e6) if spinning else (50e6, 200e6)
    return (0.1 * total / fast, 0.75 * total / slow)


def recovery_span(total: float, spinning: bool) -> str:
    """The rough recovery range alone: "roughly 1 s to 8 s"."""
    low, high = (duration_text(t) for t in recovery_range(total, spinning))
    return f"about {low}" if low == high else f"roughly {low} to {high}"


def recovery_words(total: float, spinning: bool) -> str:
    """The rough recovery range in words."""
    return (
        f"crash recovery {recovery_span(total, spinning)} "
        "(it depends on how far the last checkpoint lags, not on the size alone)"
    )


def redo_minutes_of(facts: HostFacts) -> float | None:
    """How many minutes of the measured redo writes the current log holds."""
    server = facts.server
    if server is None:
        return None
    total, rate = redo_total(server), redo_rate(server)
    if total is None or rate is None:
        return None
    return total / rate / 60
