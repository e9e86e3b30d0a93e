"""Exercise 1: what a server crash (kill -9) costs at innodb_flush_log_at_trx_commit 1, 2 and 0."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from app.exercises.model import ExerciseResult, Lab, loss_result, text_for
from app.mysql import burst

#: Seconds added to innodb_flush_log_at_timeout for the bound at 0: the background flush
#: runs on a timer that can start late on a busy machine.
MARGIN = 1.0


@dataclass(frozen=True)
class CrashRun:
    """One level's outcome."""

    level: int
    acked: int
    lost: int
    window: int  # commits acknowledged in the last (timeout + margin) s before the kill
    window_seconds: float
    unacked_survivor: bool  # the statement in flight at the kill made it anyway

    @property
    def within_bound(self) -> bool:
        """None lost at 1 and 2; at 0 no more than the flush window held."""
        return self.lost == 0 if self.level in (1, 2) else self.lost <= self.window


def crash_once(lab: Lab, level: int, seconds: float) -> CrashRun:
    """Burst at ``level`` for ``seconds``, kill -9 mid-burst, restart, count the survivors."""
    server = lab.server
    server.start()
    sock = str(server.socket_path)
    table = f"crash_{level}"
    session = burst.connect(sock)
    try:
        burst.create_table(session, table)
        session.query(f"SET GLOBAL innodb_flush_log_at_trx_commit = {int(level)}")
        timeout = float(session.query("SELECT @@GLOBAL.innodb_flush_log_at_timeout")[0][0] or 1)
    finally:
        session.close()
    writer = burst.WriteBurst(sock, table)
    lab.say(f"trx_commit={level}: writing for {seconds:.0f} s, then kill -9 …")
    writer.start()
    time.sleep(seconds)
    killed_at = time.monotonic()
    server.kill()
    log = writer.join()
    lab.say(f"trx_commit={level}: {len(log.acked)} commits acknowledged; restarting (recovery) …")
    server.start()  # the option files give trx_commit back its configured value
    session = burst.connect(sock)
    try:
        present = burst.surviving_ids(session, table)
        session.query(f"DROP TABLE IF EXISTS {burst.qualified(table)}")
    finally:
        session.close()
    acked = log.ids
    window_seconds = timeout + MARGIN
    return CrashRun(
        level=level,
        acked=len(acked),
        lost=len(acked - present),
        window=log.acked_since(killed_at - window_seconds),
        window_seconds=window_seconds,
        unacked_survivor=bool(present - acked),
    )


def run(lab: Lab, *, seconds: float = 4.0, levels: Sequence[int] = (1, 2, 0)) -> ExerciseResult:
    """Run the crash exercise at each level; the server keeps its option-file settings."""
    runs = []
    for level in levels:
        lab.check()
        runs.append(crash_once(lab, level, seconds))
        last = runs[-1]
        lab.say(f"trx_commit={level}: {last.lost} of {last.acked} acknowledged commits lost.")
    text = text_for("crash")
    worst0 = next((r for r in runs if r.level == 0), None)
    figures = {
        "lost_1": sum(r.lost for r in runs if r.level == 1),
        "lost_2": sum(r.lost for r in runs if r.level == 2),
        "lost_0": worst0.lost if worst0 else 0,
        "window_0": worst0.window if worst0 else 0,
        "window_seconds": runs[0].window_seconds if runs else MARGIN,
        "runs": [r.__dict__ | {"within_bound": r.within_bound} for r in runs],
    }
    return loss_result(
        "crash",
        runs,
        lost_header="lost after kill -9",
        chart_title="Acknowledged commits lost by a server crash",
        figures=figures,
        explanation=text.explain(figures),
    )
