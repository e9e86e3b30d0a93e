"""The server's own write rate over a short sample, and whether it looks busy."""

from __future__ import annotations

import threading
import time

from app.bench.figures import rate
from app.domain.bench import WriteRate
from app.domain.words import count
from app.mysql.session import Session


def status_values(session: Session, names: tuple[str, ...]) -> dict[str, str | None]:
    """SHOW GLOBAL STATUS for ``names`` (names are constants of ours, never user input)."""
    listed = ", ".join(f"'{n}'" for n in names)
    rows = session.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({listed})")  # noqa: S608
    return {str(r[0]): r[1] for r in rows if r and r[0]}


RATE_NAMES = (
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_replace",
    "Com_insert_select",
    "Com_commit",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Innodb_lsn_current",
    "Innodb_os_log_written",
    "Threads_running",
)

#: Above any of these, the server counts as busy (see :func:`judge_busy`).
BUSY_ROWS_PER_S = 100.0
BUSY_REDO_BYTES_PER_S = 1024.0 * 1024.0
BUSY_THREADS_RUNNING = 2


def _num(values: dict[str, str | None], name: str) -> int:
    text = values.get(name)
    return int(text) if text and text.isdigit() else 0


def judge_busy(rows_per_s: float, redo_bytes_per_s: float | None, others_running: int) -> str:
    """Why the server looks busy (an empty string when it does not)."""
    why = []
    if rows_per_s > BUSY_ROWS_PER_S:
        why.append(f"{rows_per_s:,.0f} rows written per second")
    if redo_bytes_per_s is not None and redo_bytes_per_s > BUSY_REDO_BYTES_PER_S:
        why.append(f"{redo_bytes_per_s / 1048576:,.1f} MiB of redo log per second")
    if others_running > BUSY_THREADS_RUNNING:
        why.append(f"{count(others_running, 'other query')} running at once")
    return "; ".join(why)


def write_rate(
    session: Session, seconds: float = 3.0, cancel: threading.Event | None = None
) -> WriteRate:
    """The server's own write activity over ``seconds``, and whether it looks busy."""
    first = status_values(session, RATE_NAMES)
    started = time.monotonic()
    (cancel or threading.Event()).wait(seconds)
    second = status_values(session, RATE_NAMES)
    took = time.monotonic() - started

    def delta(*names: str) -> int:
        return sum(max(0, _num(second, n) - _num(first, n)) for n in names)

    commits = delta("Com_insert", "Com_update", "Com_delete", "Com_replace", "Com_insert_select")
    commits += delta("Com_commit")
    # MariaDB 10.11 leaves Innodb_rows_* at 0; the handler counts are there everywhere (they
    # also count SHOW STATUS's own few temporary rows, far below the busy threshold).
    rows = max(
        delta("Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted"),
        delta("Handler_write", "Handler_update", "Handler_delete"),
    )
    redo_name = next(
        (n for n in ("Innodb_lsn_current", "Innodb_os_log_written") if second.get(n)), None
    )
    redo = rate(delta(redo_name), took) if redo_name else None
    others = max(0, _num(second, "Threads_running") - 1)  # our own SHOW STATUS runs too
    rows_per_s = rate(rows, took)
    why = judge_busy(rows_per_s, redo, others)
    return WriteRate(
        seconds=round(took, 2),
        commits_per_s=rate(commits, took),
        rows_per_s=rows_per_s,
        redo_bytes_per_s=redo,
        threads_running=others,
        busy=bool(why),
        why=why or "no noticeable writes by others",
    )
