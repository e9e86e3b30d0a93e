"""What the benchmark's workloads can show of a change, said beside its verdicts.

The benchmark writes a few MiB into fresh tables, so a larger buffer pool or redo log has
nothing to change in its figures when the old ones were already large enough for it. For a
larger pool, a measured apply therefore gives the benchmark a data set a few times the old
pool (:func:`data_set_bytes`), which the one-row writes go at random across: with the old
pool most of them wait for a page read from disk, with the new one none do. Where no such
data set fits, "undecided: measure longer" would send the user after a gain no length of
this benchmark can show; :func:`cannot_show` says so, from what the "before" side measured,
and names the figure of the server's own workload that does show it.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.bench.workloads import PREFILL_ROWS, ROW_BYTES
from app.domain.bench import BenchReport
from app.domain.words import size_text

POOL = "innodb_buffer_pool_size"
REDO = ("innodb_log_file_size", "innodb_redo_log_capacity")

#: innodb_adaptive_flushing_lwm's default (MySQL and MariaDB): below this share of the log's
#: capacity, the redo log does not press the server to flush pages.
FLUSHING_LWM = 0.10

#: The tables must fit in the old pool's free pages this many times over before a sentence
#: says so: a row takes about ROW_BYTES, not exactly. (Pages of other data would have to be
#: evicted for them where the pool had no free ones: a larger pool would spare that.)
POOL_MARGIN = 2


#: The data set is this many times the old pool: about two thirds of its pages do not fit
#: there, so most one-row writes wait for a read with the old pool.
DATA_TIMES_POOL = 3

#: Below this many times the old pool, most of a data set would fit in it: none is made.
DATA_LEAST_TIMES_POOL = 1.5

#: The data set takes at most this share of the new pool (the rest is for everything else)...
DATA_SHARE_OF_NEW_POOL = 0.5

#: ... and of the free space under the datadir (its pages, their redo and doublewrite
#: copies, and the temporary copy each INSERT … SELECT makes of the rows it reads); half that
#: where the server keeps a binary log, which holds a copy of both sides' rows until it
#: expires its files (30 days by default), long after the data set is dropped.
DATA_SHARE_OF_FREE = 0.25

#: ... and no more than this: each side writes it afresh, which takes minutes on a loaded
#: host beyond it.
DATA_MAX_BYTES = 1 << 30


def pool_growth(changes: Iterable[tuple[str, str, str]]) -> tuple[int, int] | None:
    """The buffer pool's old and new sizes in bytes when these changes (key, old, new) grow it."""
    for key, old_text, new_text in changes:
        old, new = _size(old_text), _size(new_text)
        if key == POOL and old is not None and new is not None and new > old:
            return old, new
    return None


def data_set_bytes(
    changes: Iterable[tuple[str, str, str]], free_bytes: int | None, binlog: bool = False
) -> int:
    """The data set a measurement of these changes (key, old, new) needs, or 0 for none.

    Only a larger buffer pool needs one, and only where a set a few times the old pool fits
    in the new pool and on the disk (``free_bytes``: free under the datadir; None, not
    known: none is made; ``binlog``: the server keeps a binary log there too).
    """
    if free_bytes is None:
        return 0
    share = DATA_SHARE_OF_FREE / 2 if binlog else DATA_SHARE_OF_FREE
    return _data_set(changes, int(share * free_bytes))


def data_set_most(changes: Iterable[tuple[str, str, str]]) -> int:
    """The largest data set a measurement of these changes may write (0: none).

    For saying so before the measurement, when the room under the datadir is not read yet:
    :func:`data_set_bytes` may make it smaller, or none, for lack of it.
    """
    return _data_set(changes, None)


def _data_set(changes: Iterable[tuple[str, str, str]], room: int | None) -> int:
    """The data set for a larger pool, held to ``room`` bytes of disk (None: not held)."""
    grown = pool_growth(changes)
    if grown is None:
        return 0
    old, new = grown
    caps = [int(DATA_TIMES_POOL * old), int(DATA_SHARE_OF_NEW_POOL * new), DATA_MAX_BYTES]
    size = min(caps if room is None else [*caps, room])
    return size if size >= DATA_LEAST_TIMES_POOL * old else 0


def data_set_text(
    report: BenchReport,
    changes: Iterable[tuple[str, str, str]],
    seconds: float,
    after: BenchReport | None = None,
    *,
    once: bool = False,
) -> str:
    """The data set the one-row writes went across, in a sentence or two ("" when none).

    ``report`` is the "before" side's; ``after``, when it ran, adds its binary log's growth.
    ``once``: one data set served both sides (interleaved); ``report`` has its growth.
    """
    if not report.data_bytes:
        return ""
    grown = pool_growth(changes)
    old = grown[0] if grown is not None else None
    ratio = f"{report.data_bytes / old:.1f}".removesuffix(".0") if old else ""
    times = f", {ratio} times the old buffer pool" if old else ""
    size = size_text(round(report.data_bytes / 2**20) * 2**20)  # its rows hold about that
    each = "once for both sides" if once else "a side"
    took = f"; writing it took {seconds:.0f} s {each}, outside the time budget" if seconds else ""
    sides = [report] if after is None or once else [report, after]
    grew = [r.data_binlog_bytes for r in sides if r.data_binlog_bytes is not None]
    kept = ""
    if len(grew) == len(sides):  # every side's growth read
        whose = (
            "the data set's" if once else "both sides'" if len(grew) == 2 else "the “before” side's"
        )
        kept = (
            f" The binary log grew by {size_text(sum(grew))} with {whose} rows and keeps them "
            "until the server expires its files; the data set itself was dropped."
        )
    return (
        f"To show the larger buffer pool, the one-row writes (every autocommit write, and the "
        f"small transactions' update) went at random across a data set of "
        f"{size}{times}{took}.{kept}"
    )


def table_peak_bytes(before: BenchReport) -> int:
    """About the most the benchmark's tables held at once.

    Each run's table is emptied after every round; the small transactions' seed table and its
    copy hold their starting rows throughout, as the data set does where there is one. A
    round's rows are the run's rows in the share of its round's commits (the rounds of a run
    are equally long).
    """
    biggest = 0.0
    for result in before.results:
        total = sum(result.rounds)
        share = max(result.rounds) / total if total > 0 else 1.0
        biggest = max(biggest, result.rows * share)
    return int((biggest + 2 * PREFILL_ROWS) * ROW_BYTES) + before.data_bytes


def _size(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def cannot_show(changes: Iterable[tuple[str, str, str]], before: BenchReport) -> tuple[str, ...]:
    """Sentences on the changes (key, old, new) this benchmark's figures cannot show."""
    out: list[str] = []
    for key, old_text, new_text in changes:
        old, new = _size(old_text), _size(new_text)
        if old is None or new is None or new <= old:
            continue
        if key == POOL:
            peak = table_peak_bytes(before)
            free = before.pool_free_bytes
            if free is not None and peak * POOL_MARGIN <= min(free, old):
                out.append(
                    f"The benchmark's tables held about {size_text(peak)} at most, and the old "
                    f"buffer pool ({size_text(old)}) had {size_text(free)} free for them, so "
                    "the larger pool cannot change its figures, however long it runs. Its gain "
                    "shows where the data outgrows the old pool: in pages read from disk per "
                    "commit, watching the server's own workload."
                )
        elif key in REDO:
            written = [r.counters.redo_bytes for r in before.results]
            if not written or any(w is None for w in written):
                continue
            total = sum(w for w in written if w is not None)
            if total < FLUSHING_LWM * old:
                out.append(
                    f"The benchmark wrote {size_text(total)} of redo in all on its “before” "
                    f"side, under a tenth of the old redo log ({size_text(old)}), so the old "
                    "log never pressed the server to flush: the larger log cannot change its "
                    "figures. Its gain shows under heavier writing: in pages written per "
                    "commit, watching the server's own workload."
                )
    return tuple(out)
