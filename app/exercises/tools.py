"""What the measuring exercises share: status counters, saved settings, a workload, a verdict.

Settings an exercise changes are saved before the first change (to a file in the lab's
scratch space, so a run that was killed is undone by the next one) and put back newest
first at its end. A setting the server takes only at start-up goes into a drop-in option
file, with a restart; the drop-in is removed and the server restarted at the end.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.domain.compare import FAMILY_ALPHA, MIN_ROUNDS, compare_rounds
from app.domain.errors import DatabaseError
from app.exercises.model import Lab
from app.mysql import burst
from app.mysql.session import PyMySQLSession

DROP_IN = "91-innotune-exercise.cnf"
SAVED = "saved-settings.json"


def status(session: PyMySQLSession, names: Sequence[str]) -> dict[str, int]:
    """Global status counters by name (0 for one the server does not have)."""
    rows = session.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(["%s"] * len(names)) + ")",
        list(names),
    )
    found = {str(r[0]): int(float(r[1] or 0)) for r in rows}
    return {n: found.get(n, 0) for n in names}


def variable(session: PyMySQLSession, name: str) -> str:
    """A global variable's value as text ("" when the server has no such variable)."""
    rows = session.query("SHOW GLOBAL VARIABLES LIKE %s", [name])
    return str(rows[0][1] or "") if rows else ""


def server_words(session: PyMySQLSession) -> str:
    """The server's name and version in words: "MariaDB 10.11.19"."""
    version = str(session.query("SELECT VERSION()")[0][0] or "")
    flavour = "MariaDB" if "mariadb" in version.lower() else "MySQL"
    return f"{flavour} {version.split('-')[0]}"


@dataclass
class Settings:
    """The settings an exercise changed: saved first, put back newest first at its end."""

    lab: Lab
    saved: list[tuple[str, str]] = field(default_factory=list)
    restarted: bool = False

    @property
    def file(self) -> Path:
        """Where the old values wait until they are put back."""
        return self.lab.workdir / SAVED

    def set(self, name: str, value: str | int) -> bool:
        """Set ``name`` live, or through a drop-in and a restart; True if it was live.

        Raises:
            DatabaseError: the server refused the value itself.
        """
        session = burst.connect(str(self.lab.server.socket_path))
        try:
            old = variable(session, name)
            if name not in (n for n, _ in self.saved):
                self.saved.append((name, old))
                self.file.write_text(json.dumps(self.saved))
            try:
                session.query(f"SET GLOBAL {name} = %s", [value])
                return True
            except DatabaseError as exc:
                if "read only" not in str(exc).lower() and "1238" not in str(exc):
                    raise
        finally:
            session.close()
        drop_in = self.lab.server.include_dir / DROP_IN
        lines = drop_in.read_text().splitlines()[2:] if drop_in.exists() else []
        lines = [ln for ln in lines if not ln.startswith(f"{name} ")] + [f"{name} = {value}"]
        drop_in.write_text(
            "# Written by an InnoTune exercise; removed when it ends.\n[mysqld]\n"
            + "\n".join(lines)
            + "\n"
        )
        self.lab.say(f"{name} takes effect only at start-up here: restarting the server …")
        self.lab.server.restart()
        self.restarted = True
        return False

    def restore(self) -> None:
        """Put every saved value back, newest first; remove the drop-in (with a restart)."""
        restore_settings(self.lab, self.saved)
        self.saved.clear()


def restore_settings(lab: Lab, saved: Sequence[tuple[str, str]]) -> None:
    """Put ``saved`` values back (newest first) and remove the drop-in, restarting for it."""
    drop_in = lab.server.include_dir / DROP_IN
    if drop_in.exists():
        drop_in.unlink()
        lab.say("Restarting the server without the exercise's option file …")
        lab.server.restart()
    if lab.server.running_pid() is not None and saved:
        session = burst.connect(str(lab.server.socket_path))
        try:
            for name, value in reversed(saved):
                try:
                    session.query(f"SET GLOBAL {name} = %s", [_typed(value)])
                except DatabaseError:
                    pass  # read-only: the restart above already gave it back
        finally:
            session.close()
    (lab.workdir / SAVED).unlink(missing_ok=True)


def restore_leftovers(lab: Lab) -> None:
    """Undo what a killed earlier run left: saved values and the drop-in."""
    try:
        saved = [(str(n), str(v)) for n, v in json.loads((lab.workdir / SAVED).read_text())]
    except (OSError, ValueError):
        saved = []
    if saved or (lab.server.include_dir / DROP_IN).exists():
        lab.say("Putting back the settings an earlier, interrupted exercise changed …")
        restore_settings(lab, saved)


def _typed(value: str) -> str | int | float:
    """A saved value as SET GLOBAL wants it (numbers as numbers)."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


TABLE_ROWS_PER_TX = 8


def load_table(lab: Lab, table: str, rows: int) -> None:
    """A table of ``rows`` rows of about 1 KB, read once so that it sits in the buffer pool."""
    session = burst.connect(str(lab.server.socket_path))
    try:
        lab.say(f"Loading {rows} rows of 1 KB (about {rows // 1000} MB of data) …")
        burst.load_rows(session, table, rows)
        warm(session, table)
    finally:
        session.close()


def warm(session: PyMySQLSession, table: str) -> None:
    """Read the whole table once (after a restart the pool is empty), statistics fresh.

    Without ANALYZE the statistics saved while the table was still empty can make the
    optimizer scan the whole table for each update after a restart.
    """
    session.query(f"ANALYZE TABLE {burst.qualified(table)}")
    session.query(f"SELECT SUM(LENGTH(payload)) FROM {burst.qualified(table)}")  # noqa: S608 - a checked name of our own


def drop_table(lab: Lab, table: str) -> None:
    """Drop the exercise's table, if the server runs."""
    if lab.server.running_pid() is None:
        return
    session = burst.connect(str(lab.server.socket_path))
    try:
        session.query(f"DROP TABLE IF EXISTS {burst.qualified(table)}")
    finally:
        session.close()


def write_out(session: PyMySQLSession, table: str) -> None:
    """Write every changed page of ``table`` to disk now (what a checkpoint would do)."""
    session.query(f"FLUSH TABLES {burst.qualified(table)} FOR EXPORT")
    session.query("UNLOCK TABLES")


@dataclass(frozen=True)
class Round:
    """One round of the workload: its transactions, its seconds and the counters' growth."""

    transactions: int
    seconds: float
    counters: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        """The round as the exercise's JSON gives it."""
        return {"transactions": self.transactions, "seconds": self.seconds, **self.counters}

    @property
    def rate(self) -> float:
        """Commits per second."""
        return self.transactions / self.seconds if self.seconds else 0.0

    def per_1000(self, name: str) -> float:
        """A counter's growth per 1,000 transactions."""
        return 1000 * self.counters.get(name, 0) / self.transactions if self.transactions else 0.0


class Workload:
    """Transactions that each change ``TABLE_ROWS_PER_TX`` random rows' 1 KB payloads.

    Every change writes a different payload (so each one writes redo and dirties its page).
    A rate (transactions per second) makes it steady; without one it runs flat out.
    """

    def __init__(self, socket_path: str, table: str, rows: int, seed: int = 7) -> None:
        self.socket_path = socket_path
        self.table = table
        self.rows = rows
        self._rng = random.Random(seed)  # noqa: S311 - which rows, not a secret
        self.stop = threading.Event()

    def _sql(self) -> str:
        ids = ",".join(str(self._rng.randint(1, self.rows)) for _ in range(TABLE_ROWS_PER_TX))
        return (
            f"UPDATE {burst.qualified(self.table)} SET n = n + 1, "  # noqa: S608 - checked name
            f"payload = REPEAT(CHAR(65 + (n + 1) % 26), 1000) WHERE id IN ({ids})"
        )

    def run(
        self,
        transactions: int | None = None,
        seconds: float | None = None,
        rate: float | None = None,
    ) -> tuple[int, float]:
        """Run until ``transactions`` are done or ``seconds`` pass; return (done, seconds)."""
        session = burst.connect(self.socket_path)
        done = 0
        started = time.monotonic()
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                if transactions is not None and done >= transactions:
                    break
                if seconds is not None and now - started >= seconds:
                    break
                if rate:
                    ahead = started + done / rate - now
                    if ahead > 0:
                        time.sleep(min(ahead, 0.2))
                        continue
                session.query(self._sql())
                done += 1
        finally:
            session.close()
        return done, time.monotonic() - started


def measured_round(lab: Lab, workload: Workload, transactions: int, names: Sequence[str]) -> Round:
    """Run ``transactions`` of the workload and count what ``names`` grew by meanwhile."""
    session = burst.connect(str(lab.server.socket_path))
    try:
        before = status(session, names)
        done, seconds = workload.run(transactions=transactions)
        after = status(session, names)
    finally:
        session.close()
    return Round(done, seconds, {n: after[n] - before[n] for n in names})


class Sampler:
    """Reads status counters every ``interval`` seconds in a thread: (seconds, counters)."""

    def __init__(self, socket_path: str, names: Sequence[str], interval: float = 1.0) -> None:
        self.socket_path = socket_path
        self.names = list(names)
        self.interval = interval
        self.samples: list[tuple[float, dict[str, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status-sampler", daemon=True)
        self.started = 0.0

    def _run(self) -> None:
        session = burst.connect(self.socket_path)
        try:
            tick = self.started
            while not self._stop.is_set():
                self.samples.append((time.monotonic() - self.started, status(session, self.names)))
                tick += self.interval
                self._stop.wait(max(0.0, tick - time.monotonic()))
        finally:
            session.close()

    def __enter__(self) -> Sampler:
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def wait_for(self, count: int) -> None:
        """Wait until ``count`` samples follow the first (at most ``count`` intervals more)."""
        deadline = time.monotonic() + (count + 5) * self.interval
        while len(self.samples) <= count and time.monotonic() < deadline:
            time.sleep(0.05)

    def peak(self, name: str) -> int:
        """The highest value ``name`` had in any sample."""
        return max((s[name] for _, s in self.samples), default=0)


def judge(
    before: Sequence[float], after: Sequence[float], *, higher_is_better: bool
) -> tuple[str, float]:
    """The verdict on two sides' rounds (compare.py's words) and the change in per cent.

    Counters may be zero in a round (a large redo log writes no page at all); ratios of zero
    mean nothing, so then a side is "better" only if every round of it beats every round of
    the other and that is as unlikely by luck as compare.py asks (five rounds a side).
    """
    mean_before = sum(before) / len(before) if before else 0.0
    mean_after = sum(after) / len(after) if after else 0.0
    change = (mean_after / mean_before - 1) * 100 if mean_before else 0.0
    if len(before) < MIN_ROUNDS or len(after) < MIN_ROUNDS:
        return "undecided", change
    if min(before) > 0 and min(after) > 0:
        return compare_rounds(before, after, higher_is_better=higher_is_better).word, change
    # The chance that every round of one side beats every round of the other by luck.
    if 2 / math.comb(len(before) + len(after), len(before)) <= FAMILY_ALPHA:
        if max(after) < min(before):
            return ("better" if not higher_is_better else "worse"), change
        if min(after) > max(before):
            return ("better" if higher_is_better else "worse"), change
    return "undecided", change


def size_words(size: int) -> str:
    """Bytes as MiB or GiB: "16 MiB", "1 GiB"."""
    if size >= 1 << 30 and size % (1 << 30) == 0:
        return f"{size >> 30} GiB"
    return f"{size / (1 << 20):.0f} MiB"
