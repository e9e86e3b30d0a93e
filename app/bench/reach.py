"""What the benchmark's workloads cannot show of a change, said beside its verdicts.

The benchmark writes a few MiB into fresh tables, so a larger buffer pool or redo log has
nothing to change in its figures when the old ones were already large enough for it. Then
"undecided: measure longer" would send the user after a gain no length of this benchmark can
show; these sentences say so, from what the "before" side measured, and name the figure of the
server's own workload that does show it.
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


def table_peak_bytes(before: BenchReport) -> int:
    """About the most the benchmark's tables held at once.

    Each run's table is emptied after every round; the small transactions' seed table and its
    copy hold their starting rows throughout. A round's rows are the run's rows in the share
    of its round's commits (the rounds of a run are equally long).
    """
    biggest = 0.0
    for result in before.results:
        total = sum(result.rounds)
        share = max(result.rounds) / total if total > 0 else 1.0
        biggest = max(biggest, result.rows * share)
    return int((biggest + 2 * PREFILL_ROWS) * ROW_BYTES)


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
