"""Server variables set live between a benchmark's rounds, as the job sets them.

A measured apply whose changes are all server variables set live alternates the old and the
new values round by round (:mod:`app.flows.measured`): through the benchmark's own session,
with the job's own spelling (:func:`app.targetjob.values.set_global`), order
(:func:`~app.targetjob.values.ordered_settings`) and "same value" test, so that what is set
between rounds is exactly what the job set, and the snapshot's rollback undoes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Queries(Protocol):
    """A database session (:class:`app.mysql.session.Session`): runs one statement."""

    def query(self, sql: str) -> Any:
        """Run ``sql``; its rows."""
        ...


#: Server variables whose change is a resize: up to seconds of the server's work, which
#: MySQL does in the background after SET GLOBAL returns.
RESIZES = frozenset({"innodb_buffer_pool_size", "innodb_redo_log_capacity", "innodb_log_file_size"})


def set_values(session: Queries, values: Sequence[tuple[str, str]]) -> None:
    """Set server variables live, in an order the server takes, the way the job sets them.

    Returns once every resize it started is done (:func:`wait_resized`), so that the values
    are in force, not only accepted.

    Raises:
        InnoTuneError: a statement failed, or a resize did not end.
    """
    from app.targetjob.values import ordered_settings, same_value, set_global

    keys = [k for k, _ in values]
    now = _now(session, keys)
    resized = False
    for key, value in ordered_settings(list(values), lambda kv: kv[0], lambda kv: kv[1], now):
        if not same_value(now.get(key), value, key=key):
            session.query(set_global(key, value))
            resized = resized or key in RESIZES
    if resized:
        wait_resized(session)


def _now(session: Queries, keys: Sequence[str]) -> dict[str, str | None]:
    """The global values of ``keys`` (catalogue names, checked as names) as they are now."""
    listed = ", ".join(f"'{k}'" for k in keys if k.replace("_", "").isalnum())
    rows = session.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({listed})")  # noqa: S608
    return {str(r[0]): r[1] for r in rows if r and r[0]}


def values_in_force(session: Queries, values: Sequence[tuple[str, str]]) -> list[str]:
    """The values of ``values`` not in force now, in words ("" each: all are)."""
    from app.targetjob.values import same_value

    now = _now(session, [k for k, _ in values])
    return [
        f"{key} is {now.get(key)}, not {value}"
        for key, value in values
        if not same_value(now.get(key), value, key=key)
    ]


#: MySQL's resize states, by status variable: the values that mean "still resizing". MySQL
#: returns from SET GLOBAL at once and resizes in the background (0 "no resize in progress",
#: 1-6 its steps, 7 failed); MariaDB's SET GLOBAL returns when its resize is done, and has
#: neither variable.
RESIZING = {
    "Innodb_buffer_pool_resize_status_code": frozenset({"1", "2", "3", "4", "5", "6"}),
    "Innodb_redo_log_resize_status": frozenset({"Resize in progress"}),
}


def wait_resized(session: Queries, timeout: float = 300.0, poll: float = 0.2) -> None:
    """Return once no resize of the buffer pool or redo log is in progress.

    Raises:
        InnoTuneError: still resizing after ``timeout`` seconds.
    """
    import time

    from app.domain.errors import InnoTuneError

    listed = ", ".join(f"'{name}'" for name in RESIZING)
    ends = time.monotonic() + timeout
    while True:
        rows = session.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({listed})")  # noqa: S608
        busy = [str(r[0]) for r in rows if r and str(r[1]) in RESIZING.get(str(r[0]), ())]
        if not busy:
            return
        if time.monotonic() > ends:
            raise InnoTuneError(
                f"The server was still resizing after {timeout:.0f} s ({', '.join(busy)}).",
                "Wait until it is done, then measure again.",
            )
        time.sleep(poll)
