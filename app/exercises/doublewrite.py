"""Exercise 7: what the doublewrite buffer costs, with it on and off, for the same workload.

With doublewrite on, InnoDB first writes each batch of pages to the doublewrite area and
syncs it, then writes the pages to their places; a page torn by a power cut half-way is
repaired from the first copy. The smallest redo log keeps the page cleaner busy, so pages
are written while the workload runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.exercises.redolog import log_variable
from app.exercises.tools import (
    Round,
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

TABLE = "dblwr_rows"
PAGES = "Innodb_pages_written"
DBLWR = "Innodb_dblwr_pages_written"


@dataclass(frozen=True)
class DoublewriteRun:
    """One side's outcome."""

    setting: str  # ON or OFF, as the server reported it during the run
    live: bool
    rounds: list[Round]
    final: dict[str, int]  # what writing out the pages still dirty at the end added

    @property
    def transactions(self) -> int:
        """Transactions measured."""
        return sum(r.transactions for r in self.rounds)

    @property
    def pages(self) -> int:
        """Pages written to their places."""
        return sum(r.counters[PAGES] for r in self.rounds) + self.final[PAGES]

    @property
    def dblwr(self) -> int:
        """Pages written to the doublewrite area first."""
        return sum(r.counters[DBLWR] for r in self.rounds) + self.final[DBLWR]

    @property
    def rate(self) -> float:
        """Commits per second."""
        seconds = sum(r.seconds for r in self.rounds)
        return self.transactions / seconds if seconds else 0.0


def measure(
    lab: Lab, settings: Settings, setting: str, *, rows: int, transactions: int, rounds: int
) -> DoublewriteRun:
    """Doublewrite at ``setting``, the smallest redo log, warm-up, then ``rounds`` rounds."""
    sock = str(lab.server.socket_path)
    session = burst.connect(sock)
    try:
        current = variable(session, "innodb_doublewrite").upper()
        log_name, smallest = log_variable(session)
    finally:
        session.close()
    live = True
    if current != setting:
        lab.say(f"Turning doublewrite {setting} …")
        live = settings.set("innodb_doublewrite", setting)
    settings.set(log_name, smallest)
    settings.set("innodb_flush_log_at_trx_commit", 2)
    session = burst.connect(sock)
    try:
        warm(session, TABLE)
        shown = variable(session, "innodb_doublewrite").upper()
    finally:
        session.close()
    workload = Workload(sock, TABLE, rows)
    workload.run(transactions=transactions // 2)  # the log fills, the page cleaner starts
    done = []
    for i in range(rounds):
        lab.check()
        done.append(measured_round(lab, workload, transactions, [PAGES, DBLWR]))
        r = done[-1]
        lab.say(
            f"Doublewrite {shown}, round {i + 1} of {rounds}: {r.rate:.0f} commits/s, "
            f"{r.counters[PAGES]} pages written, {r.counters[DBLWR]} of them first to the "
            "doublewrite area."
        )
    # The pages still dirty are written too (as a checkpoint would): every page changed counts.
    session = burst.connect(sock)
    try:
        before = status(session, [PAGES, DBLWR])
        write_out(session, TABLE)
        after = status(session, [PAGES, DBLWR])
    finally:
        session.close()
    return DoublewriteRun(shown, live, done, {n: after[n] - before[n] for n in (PAGES, DBLWR)})


def run(
    lab: Lab,
    *,
    rows: int = 20000,
    transactions: int = 400,
    rounds: int = 5,
    sides: tuple[str, str] = ("ON", "OFF"),
) -> ExerciseResult:
    """The same workload with doublewrite on and off; the setting is put back at the end."""
    lab.server.start()
    restore_leftovers(lab)
    session = burst.connect(str(lab.server.socket_path))
    try:
        server = server_words(session)
        _, smallest = log_variable(session)
    finally:
        session.close()
    settings = Settings(lab)
    runs: list[DoublewriteRun] = []
    try:
        load_table(lab, TABLE, rows)
        for setting in sides:
            lab.check()
            runs.append(
                measure(lab, settings, setting, rows=rows, transactions=transactions, rounds=rounds)
            )
    finally:
        lab.say("Putting doublewrite, the redo log size and the other settings back …")
        settings.restore()
        drop_table(lab, TABLE)
    on, off = sorted(runs, key=lambda r: r.setting != "ON")
    word, change = judge(
        [r.rate for r in on.rounds], [r.rate for r in off.rounds], higher_is_better=True
    )
    figures = {
        "server": server,
        "log": size_words(smallest),
        "transactions": on.transactions,
        "pages_on": on.pages,
        "dblwr_on": on.dblwr,
        "pages_off": off.pages,
        "dblwr_off": off.dblwr,
        "share_on": 100 * on.dblwr / on.pages if on.pages else 0.0,
        "rate_on": on.rate,
        "rate_off": off.rate,
        "rate_verdict": word,
        "rate_change": change,
        "restart": "changes live" if off.live else "takes effect only after a restart",
        "cost_sentence": _cost_sentence(word, change),
        "runs": [
            {
                "setting": r.setting,
                "live": r.live,
                "pages_written": r.pages,
                "dblwr_pages_written": r.dblwr,
                "commits_per_s": r.rate,
                "written_out_at_end": r.final,
                "rounds": [x.as_dict() for x in r.rounds],
            }
            for r in runs
        ],
    }
    return ExerciseResult(
        exercise="doublewrite",
        headers=[
            "doublewrite",
            "commits/s",
            "pages written",
            "written to the doublewrite area first",
        ],
        rows=[[r.setting, f"{r.rate:.0f}", str(r.pages), str(r.dblwr)] for r in runs],
        chart=Chart(
            title="The same transactions with doublewrite on and off",
            categories=[f"doublewrite {r.setting}" for r in runs],
            series={
                "pages written": [float(r.pages) for r in runs],
                "doublewrite copies": [float(r.dblwr) for r in runs],
            },
            y_label="pages",
        ),
        explanation=text_for("doublewrite").explain(figures),
        figures=figures,
    )


def _cost_sentence(word: str, change: float) -> str:
    """What the protection cost here, from the rounds' commits per second (off against on)."""
    if word == "better":
        return (
            f"Turning it off gave {change:.0f} % more commits per second here: that is what the "
            "protection costs on this disk and this workload."
        )
    if word == "worse":
        return (
            f"Turning it off gave {-change:.0f} % fewer commits per second here, so the "
            "protection cost nothing measurable (the machine's load varied more than it)."
        )
    if word == "no_change":
        return (
            "Commits per second did not change by more than 10 %: the protection costs little here."
        )
    return (
        "The rounds' commits per second spread too widely to tell: no clear difference "
        f"({change:+.0f} % on average with it off)."
    )
