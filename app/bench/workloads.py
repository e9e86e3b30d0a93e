"""The three write workloads as SQL: the table, its prefill, and one transaction of each.

The same statements are used by InnoTune's own driver and, as Lua, by the sysbench script
(:mod:`app.bench.sysbench`), so both report the same thing. Values are precomputed once
per client so the client's CPU goes to sending, not to building strings.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

#: Rows put in the table before small_tx runs, so its UPDATEs hit existing rows.
PREFILL_ROWS = 10_000

#: Rows in one bulk INSERT, and INSERTs in one bulk transaction.
BULK_ROWS_PER_INSERT = 500
BULK_INSERTS_PER_TX = 10

#: Rows each transaction writes (inserted or updated), by workload.
ROWS_PER_TX = {"autocommit": 1, "small_tx": 4, "bulk": BULK_ROWS_PER_INSERT * BULK_INSERTS_PER_TX}

#: What one row takes on disk, roughly (two CHAR columns in utf8mb4 at 1 byte a character,
#: two integers, InnoDB's row header): used to hold the byte cap.
ROW_BYTES = 220

TABLE_SQL = (
    "CREATE TABLE bench_{workload} ("
    "id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
    "k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k (k)"
    ") ENGINE=InnoDB"
)


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=n))


def _row(rng: random.Random) -> str:
    return f"({rng.randrange(1, 1_000_000)}, '{_text(rng, 120)}', '{_text(rng, 60)}')"


@dataclass
class Statements:
    """One client's precomputed statements (its own random stream, seeded by client number)."""

    workload: str
    seed: int

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)  # noqa: S311 - test data, not secrets
        self._rng = rng
        self.table = f"bench_{self.workload}"
        insert = f"INSERT INTO {self.table} (k, c, pad) VALUES "  # noqa: S608 - our constants
        self.singles = [insert + _row(rng) for _ in range(256)]
        if self.workload == "bulk":
            self.bulk = insert + ", ".join(_row(rng) for _ in range(BULK_ROWS_PER_INSERT))
        self._i = 0

    def transaction(self) -> list[str]:
        """The statements of the next transaction (BEGIN/COMMIT included where needed)."""
        self._i += 1
        if self.workload == "autocommit":
            return [self.singles[self._i % len(self.singles)]]
        if self.workload == "small_tx":
            base = self._i * 3
            n = len(self.singles)
            row = self._rng.randrange(1, PREFILL_ROWS + 1)
            return [
                "BEGIN",
                self.singles[base % n],
                self.singles[(base + 1) % n],
                self.singles[(base + 2) % n],
                f"UPDATE {self.table} SET k = k + 1 WHERE id = {row}",  # noqa: S608
                "COMMIT",
            ]
        return ["BEGIN", *([self.bulk] * BULK_INSERTS_PER_TX), "COMMIT"]


def prefill_sql(workload: str, table: str = "") -> list[str]:
    """Statements that put the starting rows in a workload's fresh table (or in ``table``)."""
    if workload != "small_tx":
        return []
    rng = random.Random(0)  # noqa: S311 - test data
    out = []
    for start in range(0, PREFILL_ROWS, 1000):
        rows = ", ".join(_row(rng) for _ in range(min(1000, PREFILL_ROWS - start)))
        into = table or f"bench_{workload}"
        out.append(f"INSERT INTO {into} (k, c, pad) VALUES {rows}")  # noqa: S608
    return out
