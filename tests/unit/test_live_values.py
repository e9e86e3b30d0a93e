"""Server variables set live between rounds: a resize is waited for, anything else is not.

A recorded session stands in for MySQL's answers (its resize status variables, as MySQL 8.0.31+
names them); the real servers' side is tests/integration/test_measure_interleaved.py (MariaDB,
whose SET returns when done) and the sid whole flow (MySQL 9.7).
"""

from __future__ import annotations

from typing import Any

from app.jobs.live import set_values


class Recorded:
    """Answers SHOW GLOBAL VARIABLES from ``now`` and each SHOW GLOBAL STATUS from ``states``."""

    def __init__(self, now: dict[str, str], states: list[list[tuple[str, str]]]) -> None:
        self.now, self.states, self.sql = now, states, []

    def query(self, sql: str) -> Any:
        self.sql.append(sql)
        if sql.startswith("SHOW GLOBAL VARIABLES"):
            return list(self.now.items())
        if sql.startswith("SHOW GLOBAL STATUS"):
            return self.states.pop(0)
        return []


def test_a_resize_returns_only_once_the_server_says_it_is_done() -> None:
    busy = [("Innodb_buffer_pool_resize_status_code", "5")]
    done = [("Innodb_buffer_pool_resize_status_code", "0"), ("Innodb_redo_log_resize_status", "OK")]
    session = Recorded({"innodb_buffer_pool_size": "134217728"}, [busy, busy, done])
    set_values(session, [("innodb_buffer_pool_size", "1073741824")])
    assert sum(s.startswith("SHOW GLOBAL STATUS") for s in session.sql) == 3
    assert session.states == []


def test_no_wait_without_a_resize_or_when_nothing_changes() -> None:
    trx = Recorded({"innodb_flush_log_at_trx_commit": "1"}, [])
    set_values(trx, [("innodb_flush_log_at_trx_commit", "0")])
    pool = Recorded({"innodb_buffer_pool_size": "134217728"}, [])
    set_values(pool, [("innodb_buffer_pool_size", "134217728")])
    for session in (trx, pool):
        assert not any(s.startswith("SHOW GLOBAL STATUS") for s in session.sql), session.sql
    assert any(s.startswith("SET GLOBAL") for s in trx.sql)
    assert not any(s.startswith("SET GLOBAL") for s in pool.sql)
