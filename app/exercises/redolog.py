"""Exercise 6: the same bounded write workload with the smallest redo log and with 1 GiB.

A small log fills quickly; before InnoDB may reuse it, the pages its changes touched must
be on disk (a checkpoint), so the page cleaner writes the same hot pages again and again.
A large log lets a page collect many changes before it is written once.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.exercises.tools import (
    Round,
    Sampler,
    Settings,
    Workload,
    drop_table,
    judge,
    load_table,
    measured_round,
    restore_leftovers,
    server_words,
    size_words,
    status,
    variable,
    warm,
    write_out,
)
from app.mysql import burst
from app.mysql.session import PyMySQLSession

TABLE = "redo_rows"
PAGES = "Innodb_pages_written"
REDO = "Innodb_os_log_written"
AGE = "Innodb_checkpoint_age"
LARGE = 1 << 30


@dataclass(frozen=True)
class LogRun:
    """One log size's outcome."""

    size: int
    live: bool  # the size changed without a restart
    rounds: list[Round]
    left_dirty: int  # pages still to write at the end (written by the final write-out)
    peak_age: int  # the highest checkpoint age seen, bytes

    @property
    def transactions(self) -> int:
        """Transactions measured (warm-up excluded)."""
        return sum(r.transactions for r in self.rounds)

    @property
    def pages(self) -> int:
        """Pages written while the workload ran."""
        return sum(r.counters[PAGES] for r in self.rounds)

    @property
    def per_1000(self) -> float:
        """Pages written per 1,000 transactions while the workload ran."""
        return 1000 * self.pages / self.transactions if self.transactions else 0.0

    @property
    def total_per_1000(self) -> float:
        """Pages per 1,000 transactions, the pages still to write at the end included."""
        done = self.pages + self.left_dirty
        return 1000 * done / self.transactions if self.transactions else 0.0

    @property
    def rate(self) -> float:
        """Commits per second over the measured rounds."""
        seconds = sum(r.seconds for r in self.rounds)
        return self.transactions / seconds if seconds else 0.0


def log_variable(session: PyMySQLSession) -> tuple[str, int]:
    """The variable that sizes the redo log here, and the smallest size the server accepts.

    MySQL 8.0.30+ sizes it with innodb_redo_log_capacity (at least 8 MiB); MariaDB and older
    MySQL with innodb_log_file_size, which MariaDB also wants no smaller than the log buffer.
    """
    if variable(session, "innodb_redo_log_capacity"):
        return "innodb_redo_log_capacity", 8 << 20
    smallest = 4 << 20
    rows = session.query(
        "SELECT NUMERIC_MIN_VALUE FROM information_schema.SYSTEM_VARIABLES "
        "WHERE VARIABLE_NAME = 'INNODB_LOG_FILE_SIZE'"
    )
    if rows and rows[0][0]:
        smallest = int(float(rows[0][0]))
    buffer = int(variable(session, "innodb_log_buffer_size") or 0)
    if "mariadb" in str(session.query("SELECT VERSION()")[0][0]).lower():
        smallest = max(smallest, buffer)
    return "innodb_log_file_size", smallest


def measure(
    lab: Lab,
    settings: Settings,
    name: str,
    size: int,
    *,
    rows: int,
    transactions: int,
    rounds: int,
) -> LogRun:
    """Resize the log, warm up (filling it), then ``rounds`` rounds, then write out the rest."""
    lab.say(f"Redo log {size_words(size)}: resizing …")
    live = settings.set(name, size)
    sock = str(lab.server.socket_path)
    session = burst.connect(sock)
    try:
        if not live:
            warm(session, TABLE)
        session.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    finally:
        session.close()
    workload = Workload(sock, TABLE, rows)
    workload.run(transactions=transactions // 2)  # the log fills; not counted
    done: list[Round] = []
    with Sampler(sock, [AGE], interval=0.25) as sampler:
        for i in range(rounds):
            lab.check()
            done.append(measured_round(lab, workload, transactions, [PAGES, REDO]))
            r = done[-1]
            lab.say(
                f"Redo log {size_words(size)}, round {i + 1} of {rounds}: {r.rate:.0f} commits/s, "
                f"{r.per_1000(PAGES):.0f} pages written per 1,000 transactions."
            )
    session = burst.connect(sock)
    try:
        before = status(session, [PAGES])[PAGES]
        write_out(session, TABLE)
        left = status(session, [PAGES])[PAGES] - before
    finally:
        session.close()
    return LogRun(size, live, done, left, sampler.peak(AGE))


def run(
    lab: Lab,
    *,
    rows: int = 20000,
    transactions: int = 500,
    rounds: int = 5,
    large: int = LARGE,
) -> ExerciseResult:
    """The same workload with the server's smallest redo log and with ``large`` bytes."""
    lab.server.start()
    restore_leftovers(lab)
    session = burst.connect(str(lab.server.socket_path))
    try:
        name, smallest = log_variable(session)
        server = server_words(session)
    finally:
        session.close()
    settings = Settings(lab)
    settings.set("innodb_flush_log_at_trx_commit", 2)
    runs: list[LogRun] = []
    try:
        load_table(lab, TABLE, rows)
        for size in (smallest, large):
            lab.check()
            runs.append(
                measure(
                    lab,
                    settings,
                    name,
                    size,
                    rows=rows,
                    transactions=transactions,
                    rounds=rounds,
                )
            )
    finally:
        lab.say("Putting the redo log size and the other settings back …")
        settings.restore()
        drop_table(lab, TABLE)
    small, big = runs
    pages_word, _ = judge(
        [r.per_1000(PAGES) for r in small.rounds],
        [r.per_1000(PAGES) for r in big.rounds],
        higher_is_better=False,
    )
    rate_word, rate_change = judge(
        [r.rate for r in small.rounds], [r.rate for r in big.rounds], higher_is_better=True
    )
    fewer = (1 - big.total_per_1000 / small.total_per_1000) * 100 if small.total_per_1000 else 0
    figures = {
        "server": server,
        "variable": name,
        "small": size_words(small.size),
        "large": size_words(big.size),
        "transactions": small.transactions,
        "rows_per_tx": 8,
        "live": "changed live, without a restart"
        if small.live and big.live
        else "needed a restart for each size",
        "pages_small": small.per_1000,
        "pages_large": big.per_1000,
        "total_small": small.total_per_1000,
        "total_large": big.total_per_1000,
        "left_small": small.left_dirty,
        "left_large": big.left_dirty,
        "age_small": small.peak_age / (1 << 20),
        "age_large": big.peak_age / (1 << 20),
        "rate_small": small.rate,
        "rate_large": big.rate,
        "pages_verdict": pages_word,
        "rate_verdict": rate_word,
        "fewer_percent": fewer,
        "rate_change": rate_change,
        "pages_sentence": _pages_sentence(pages_word, fewer, small, big),
        "rate_sentence": _rate_sentence(rate_word, rate_change),
        "runs": [
            {
                "size": r.size,
                "live": r.live,
                "pages_per_1000": r.per_1000,
                "total_per_1000": r.total_per_1000,
                "left_dirty": r.left_dirty,
                "peak_checkpoint_age": r.peak_age,
                "commits_per_s": r.rate,
                "rounds": [x.as_dict() for x in r.rounds],
            }
            for r in runs
        ],
    }
    return ExerciseResult(
        exercise="redolog",
        headers=[
            "redo log",
            "commits/s",
            "pages written per 1,000 transactions",
            "pages left to write at the end",
            "peak checkpoint age",
        ],
        rows=[
            [
                size_words(r.size),
                f"{r.rate:.0f}",
                f"{r.per_1000:.0f}",
                str(r.left_dirty),
                f"{r.peak_age / (1 << 20):.1f} MiB",
            ]
            for r in runs
        ],
        chart=Chart(
            title="Pages written for the same transactions, two redo log sizes",
            categories=[f"{size_words(r.size)} log" for r in runs],
            series={
                "while writing": [round(r.per_1000, 1) for r in runs],
                "with the pages left at the end": [round(r.total_per_1000, 1) for r in runs],
            },
            y_label="pages per 1,000 transactions",
        ),
        explanation=text_for("redolog").explain(figures),
        figures=figures,
    )


def _pages_sentence(word: str, fewer: float, small: LogRun, big: LogRun) -> str:
    if word == "better":
        return (
            f"With the {size_words(big.size)} log the server wrote {fewer:.0f} % fewer pages "
            f"for the same work ({big.total_per_1000:.0f} instead of "
            f"{small.total_per_1000:.0f} per 1,000 transactions, the pages still to write at "
            "the end counted)."
        )
    if word == "worse":
        return (
            f"Here the {size_words(big.size)} log wrote more pages, {-fewer:.0f} % more: "
            "not what the field report saw; run it again on a quieter machine."
        )
    return (
        "The rounds spread too widely to tell: no clear difference in pages written "
        f"({small.per_1000:.0f} and {big.per_1000:.0f} per 1,000 transactions)."
    )


def _rate_sentence(word: str, change: float) -> str:
    if word in ("better", "worse"):
        more = "more" if change > 0 else "fewer"
        return f"{abs(change):.0f} % {more} with the large log."
    if word == "no_change":
        return "no change worth tuning for (within 10 %)."
    return "no clear difference (the rounds spread too widely to tell)."
