"""The three write workloads as SQL: the table, its prefill, and one transaction of each.

With a data set (``data_rows`` above 0, for a change of the buffer pool: see
:mod:`app.bench.reach`), the one-row writes go at random across ``bench_data`` instead of
into a small fresh table: the autocommit run updates one row per commit, and the small
transaction's UPDATE picks its row there. Only such writes show what a larger pool does.

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

#: The data set's table, and its rows written in one statement at first (then doubled).
DATA_TABLE = "bench_data"
DATA_FIRST_ROWS = 1000

#: The most rows one statement of the data set's writing adds: each stays seconds long on a
#: loaded host, well inside a session's read timeout, and a cancel is seen between them.
DATA_CHUNK_ROWS = 100_000

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


def data_rows(data_bytes: int) -> int:
    """The rows of a data set of about ``data_bytes`` (0: none)."""
    return max(0, data_bytes) // ROW_BYTES


def data_update(row_id: int) -> str:
    """One row of the data set written: the same in every client and route."""
    return f"UPDATE {DATA_TABLE} SET k = k + 1 WHERE id = {row_id}"  # noqa: S608


def data_warm_sql() -> list[str]:
    """Statements that read the whole data set, its rows and its index on ``k``, into the pool.

    A buffer pool just resized holds what the other size left; a pool that size on a server
    that has run a while is full of the pages its work touches (all of them, where they fit).
    """
    return [
        f"SELECT COUNT(*), SUM(LENGTH(pad)) FROM {DATA_TABLE}",  # noqa: S608 - our constants
        f"SELECT COUNT(*) FROM {DATA_TABLE} FORCE INDEX (k) WHERE k > 0",  # noqa: S608
    ]


def data_fill_sql(rows: int) -> list[str]:
    """Statements that make the data set: ids 1 to ``rows``, doubled up from the first rows.

    Ids are given, not left to AUTO_INCREMENT (whose bulk inserts may leave gaps), so every
    id a write picks exists. Plain INSERT … SELECT (a copy of the first rows under new ids,
    new random keys): the same on MySQL and MariaDB.
    """
    rng = random.Random(1)  # noqa: S311 - test data
    first = min(rows, DATA_FIRST_ROWS)
    values = ", ".join(f"({i + 1}, {_row(rng)[1:]}" for i in range(first))
    out = [
        TABLE_SQL.format(workload="data"),
        f"INSERT INTO {DATA_TABLE} (id, k, c, pad) VALUES {values}",  # noqa: S608
    ]
    have = first
    while have < rows:
        add = min(have, rows - have, DATA_CHUNK_ROWS)
        out.append(
            f"INSERT INTO {DATA_TABLE} (id, k, c, pad) "  # noqa: S608 - our constants
            f"SELECT id + {have}, FLOOR(1 + RAND() * 999999), c, pad FROM {DATA_TABLE} "
            f"WHERE id <= {add}"
        )
        have += add
    return out


@dataclass
class Statements:
    """One client's precomputed statements (its own random stream, seeded by client number).

    ``data_rows`` above 0: the one-row writes go at random across the data set.
    """

    workload: str
    seed: int
    data_rows: int = 0

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
            if self.data_rows:
                return [data_update(self._rng.randint(1, self.data_rows))]
            return [self.singles[self._i % len(self.singles)]]
        if self.workload == "small_tx":
            base = self._i * 3
            n = len(self.singles)
            if self.data_rows:
                update = data_update(self._rng.randint(1, self.data_rows))
            else:
                row = self._rng.randrange(1, PREFILL_ROWS + 1)
                update = f"UPDATE {self.table} SET k = k + 1 WHERE id = {row}"  # noqa: S608
            return [
                "BEGIN",
                self.singles[base % n],
                self.singles[(base + 1) % n],
                self.singles[(base + 2) % n],
                update,
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
