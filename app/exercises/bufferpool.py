"""Exercise 3: the same random-update workload with a buffer pool too small, and one that fits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.mysql import burst
from app.practice.server import PrivateServer

DROP_IN = "90-innotune-exercise.cnf"
TABLE = "pool_rows"


@dataclass(frozen=True)
class PoolRun:
    """One pool size's outcome."""

    pool: str
    pool_bytes: int
    updates: int
    seconds: float
    disk_reads: int  # Innodb_buffer_pool_reads: pages the pool did not hold
    read_requests: int

    @property
    def rate(self) -> float:
        """Updates per second."""
        return self.updates / self.seconds if self.seconds else 0.0

    @property
    def reads_per_update(self) -> float:
        """Pages read from disk per update."""
        return self.disk_reads / self.updates if self.updates else 0.0

    @property
    def hit_ratio(self) -> float:
        """Share of page requests the pool answered from memory."""
        if not self.read_requests:
            return 1.0
        return max(0.0, 1.0 - self.disk_reads / self.read_requests)


def _status(server: PrivateServer, names: Sequence[str]) -> dict[str, int]:
    session = burst.connect(str(server.socket_path))
    try:
        rows = session.query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(["%s"] * len(names)) + ")",
            list(names),
        )
    finally:
        session.close()
    return {str(r[0]): int(r[1] or 0) for r in rows}


def _restart_with(lab: Lab, pool: str | None) -> None:
    drop_in = lab.server.include_dir / DROP_IN
    if pool is None:
        drop_in.unlink(missing_ok=True)
    else:
        drop_in.write_text(
            "# Written by InnoTune's buffer pool exercise; removed when it ends.\n"
            f"[mysqld]\ninnodb_buffer_pool_size = {pool}\n"
        )
    lab.say(f"Restarting with innodb_buffer_pool_size = {pool or 'as configured'} …")
    lab.server.restart()


def measure(lab: Lab, pool: str, rows: int, seconds: float) -> PoolRun:
    """Restart with ``pool``, warm the pool with one scan, then random updates for ``seconds``."""
    _restart_with(lab, pool)
    sock = str(lab.server.socket_path)
    session = burst.connect(sock)
    try:
        # Reads are the point here: commits do not wait for a flush.
        session.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        pool_bytes = int(session.query("SELECT @@GLOBAL.innodb_buffer_pool_size")[0][0] or 0)
        # One full scan warms the pool with as much of the table as it can hold.
        session.query(f"SELECT SUM(LENGTH(payload)) FROM {burst.qualified(TABLE)}")  # noqa: S608
    finally:
        session.close()
    names = ("Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests")
    before = _status(lab.server, names)

    def tick(done: int) -> None:
        lab.say(f"pool {pool}: {done} updates so far …")

    updates = burst.random_updates(sock, TABLE, rows, seconds, on_tick=tick)
    after = _status(lab.server, names)
    return PoolRun(
        pool=pool,
        pool_bytes=pool_bytes,
        updates=updates,
        seconds=seconds,
        disk_reads=after[names[0]] - before[names[0]],
        read_requests=after[names[1]] - before[names[1]],
    )


def run(
    lab: Lab,
    *,
    rows: int = 60000,
    seconds: float = 8.0,
    small: str = "8M",
    fits: str = "256M",
) -> ExerciseResult:
    """Load about ``rows`` KiB of rows, then the same workload with each pool size."""
    lab.server.start()
    session = burst.connect(str(lab.server.socket_path))
    try:
        lab.say(f"Loading {rows} rows of 1 KB (about {rows // 1000} MB of data) …")
        burst.load_rows(session, TABLE, rows)
    finally:
        session.close()
    runs = []
    try:
        for pool in (small, fits):
            lab.check()
            runs.append(measure(lab, pool, rows, seconds))
            r = runs[-1]
            lab.say(
                f"pool {pool}: {r.rate:.0f} updates/s, {r.reads_per_update:.2f} disk reads each."
            )
    finally:
        _restart_with(lab, None)
        session = burst.connect(str(lab.server.socket_path))
        try:
            session.query(f"DROP TABLE IF EXISTS {burst.qualified(TABLE)}")
        finally:
            session.close()
    small_run, fits_run = runs
    figures = {
        "small": small,
        "fits": fits,
        "rows": rows,
        "data_mb": rows // 1000,
        "rate_small": small_run.rate,
        "rate_fits": fits_run.rate,
        "reads_small": small_run.reads_per_update,
        "reads_fits": fits_run.reads_per_update,
        "hit_small": small_run.hit_ratio * 100,
        "hit_fits": fits_run.hit_ratio * 100,
        "speedup": fits_run.rate / small_run.rate if small_run.rate else 0.0,
        "runs": [r.__dict__ for r in runs],
    }
    return ExerciseResult(
        exercise="bufferpool",
        headers=["buffer pool", "updates/s", "disk reads per update", "pool hit ratio"],
        rows=[
            [r.pool, f"{r.rate:.0f}", f"{r.reads_per_update:.2f}", f"{r.hit_ratio * 100:.1f} %"]
            for r in runs
        ],
        chart=Chart(
            title="The same random updates, two buffer pool sizes",
            categories=[f"pool {r.pool}" for r in runs],
            series={"updates/s": [r.rate for r in runs]},
            y_label="updates per second",
        ),
        explanation=text_for("bufferpool").explain(figures),
        figures=figures,
    )
