"""Write rates and buffer-pool state from SHOW GLOBAL STATUS samples (pure)."""

from __future__ import annotations

from app.domain.serverfacts import Rates

WRITE_COUNTERS = (
    "Com_insert",
    "Com_insert_select",
    "Com_update",
    "Com_update_multi",
    "Com_delete",
    "Com_delete_multi",
    "Com_replace",
    "Com_replace_select",
    "Com_load",
)


def _rate(
    before: dict[str, str], after: dict[str, str], names: tuple[str, ...], secs: float
) -> float | None:
    total = 0
    seen = False
    for name in names:
        if name in before and name in after:
            try:
                total += int(after[name]) - int(before[name])
            except ValueError:
                continue
            seen = True
    if not seen or secs <= 0:
        return None
    return max(total, 0) / secs


def compute_rates(before: dict[str, str], after: dict[str, str], seconds: float) -> Rates:
    """Per-second rates from two samples of SHOW GLOBAL STATUS ``seconds`` apart (pure).

    A counter that went backwards (the server restarted between samples) counts as zero.
    """
    reads = _rate(before, after, ("Innodb_buffer_pool_reads",), 1.0)
    requests = _rate(before, after, ("Innodb_buffer_pool_read_requests",), 1.0)
    hit = None
    if reads is not None and requests:
        hit = max(0.0, 1.0 - reads / requests)
    return Rates(
        seconds=seconds,
        transactions_per_s=_rate(before, after, ("Handler_commit",), seconds) or 0.0,
        writes_per_s=_rate(before, after, WRITE_COUNTERS, seconds) or 0.0,
        # The LSN counts redo bytes generated (MariaDB, Percona); MySQL has only the writes.
        redo_bytes_per_s=_rate(before, after, ("Innodb_lsn_current",), seconds)
        if "Innodb_lsn_current" in after
        else _rate(before, after, ("Innodb_os_log_written",), seconds),
        pages_written_per_s=_rate(before, after, ("Innodb_pages_written",), seconds),
        data_fsyncs_per_s=_rate(before, after, ("Innodb_data_fsyncs",), seconds),
        log_fsyncs_per_s=_rate(before, after, ("Innodb_os_log_fsyncs",), seconds),
        buffer_pool_hit_rate=hit,
        log_waits=_delta(before, after, "Innodb_log_waits"),
    )


def _delta(before: dict[str, str], after: dict[str, str], name: str) -> int | None:
    """How much a counter grew between the samples (None: not reported; a restart: 0)."""
    try:
        return max(0, int(after[name]) - int(before[name]))
    except (KeyError, ValueError):
        return None


def dirty_share(status: dict[str, str]) -> float | None:
    """The share of buffer-pool pages that are dirty."""
    try:
        dirty = int(status["Innodb_buffer_pool_pages_dirty"])
        total = int(status["Innodb_buffer_pool_pages_total"])
    except (KeyError, ValueError):
        return None
    return dirty / total if total else None
