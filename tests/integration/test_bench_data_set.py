"""A data set for the one-row writes, against a real private MariaDB: made with every id, the
writes going at random across it from each kind of client (the load generator, sysbench,
InnoTune's own driver), and left out, said so, where the clients cannot pick a row
(mysqlslap)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from app.bench.loadgen import find_loadgen
from app.bench.reach import data_set_text
from app.bench.runner import Benchmark, BenchOptions, ClientRoute
from app.bench.slap import find_slap
from app.bench.sysbench import find_sysbench
from app.bench.workloads import DATA_CHUNK_ROWS, DATA_TABLE, ROW_BYTES, data_fill_sql
from app.mysql.session import Session
from app.practice.server import SERVER_CNF, PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.util import need
from tests.integration.test_bench import opener, scratch_schemas
from tests.integration.test_bench_loadgen import socket_login

#: A small data set: 16 MiB, some 76,000 rows (ids picked at random will repeat now and then).
DATA_BYTES = 16 * 2**20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    srv = PrivateServer(tmp_path_factory.mktemp("dataset") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def status(server: PrivateServer, name: str) -> int:
    return int(server.query(f"SHOW GLOBAL STATUS LIKE '{name}'").split()[-1])


@pytest.mark.parametrize("rows", [1, 999, 1000, 1001, 262_144 + 17])
def test_the_data_set_holds_every_id_once(server: PrivateServer, rows: int) -> None:
    session = opener(server)
    try:
        session.query("CREATE DATABASE IF NOT EXISTS innotune_dataset_test")
        session.query("USE innotune_dataset_test")
        session.query(f"DROP TABLE IF EXISTS {DATA_TABLE}")
        statements = data_fill_sql(rows)
        for sql in statements:
            session.query(sql)
        found = session.query(
            f"SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id), COUNT(DISTINCT k) "  # noqa: S608
            f"FROM {DATA_TABLE}"
        )[0]
        count, distinct, low, high, keys = (int(x) for x in found)
        assert (count, distinct, low, high) == (rows, rows, 1, rows)
        # The copies get keys of their own: the secondary index spreads like the ids.
        assert keys > min(rows, 1000) * 0.9
        # No statement adds more than a chunk: each stays well within a session's timeout.
        assert len(statements) - 2 >= (rows - 1000) // DATA_CHUNK_ROWS
    finally:
        session.query("DROP DATABASE IF EXISTS innotune_dataset_test")
        session.close()


def _route(server: PrivateServer, kind: str) -> ClientRoute | None:
    login = socket_login(server)
    if kind == "innotune":
        return None
    if kind == "sysbench":
        need(shutil.which("sysbench") is not None, "sysbench is not installed (make sysdeps-test)")
    finder = {"loadgen": find_loadgen, "sysbench": find_sysbench, "slap": find_slap}[kind]
    route = finder(LocalTransport(), login, server.running_pid())
    assert route is not None, kind
    return route


class Watched(Benchmark):
    """Keeps each row's key as written, and counts the rows changed since, before the drop."""

    changed = -1

    def _write_data_set(self, control: Session) -> None:
        super()._write_data_set(control)
        control.query(f"CREATE TABLE written AS SELECT id, k FROM {DATA_TABLE}")  # noqa: S608

    def _drop(self, control: Session) -> None:
        found = control.query(
            f"SELECT COUNT(*) FROM `{self.schema}`.{DATA_TABLE} d "  # noqa: S608
            f"JOIN `{self.schema}`.written w USING (id) WHERE d.k <> w.k"
        )
        self.changed = int(found[0][0])
        super()._drop(control)


@pytest.mark.parametrize("kind", ["loadgen", "sysbench", "innotune"])
def test_the_one_row_writes_go_across_the_data_set(server: PrivateServer, kind: str) -> None:
    route = _route(server, kind)
    options = BenchOptions(
        seconds=8,
        threads=(1,),
        workloads=("autocommit", "small_tx"),
        data_bytes=DATA_BYTES,
        rounds=2,
    )
    seen: list[str] = []
    updated = status(server, "Handler_update")
    bench = Watched(lambda: opener(server), options, route=route, say=seen.append)
    report = bench.run()
    updated = status(server, "Handler_update") - updated
    rows = DATA_BYTES // ROW_BYTES
    assert report.data_bytes == rows * ROW_BYTES
    assert any(f"data set of {rows:,} rows" in line for line in seen), seen
    assert bench.data_seconds > 0
    auto, small = report.results
    assert len(auto.rounds) == 2 and auto.commits > 0 and small.commits > 0
    # Every autocommit write and every small transaction updates one row of the data set
    # (k = k + 1 always changes it); nothing else in the benchmark updates a row.
    assert updated == auto.commits + small.commits, (updated, auto.commits, small.commits)
    assert auto.rows == auto.commits and small.rows == 4 * small.commits
    # At random across it, round after round: rows picked twice are as few as chance makes
    # them. (Rows picked again each round would be in any pool after the first.)
    writes = auto.commits + small.commits
    expected = rows * (1 - (1 - 1 / rows) ** writes)
    assert bench.changed > 0.9 * expected, (bench.changed, expected, writes)
    assert scratch_schemas(server) == []
    assert report.data_binlog_bytes is None  # no binary log: nothing kept of it


def test_a_binary_log_says_how_much_of_the_data_set_it_keeps(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    srv = PrivateServer(
        tmp_path_factory.mktemp("binlog") / "srv",
        server_cnf=SERVER_CNF + "log_bin = binlog\nbinlog_format = ROW\n",
    )
    srv.start()
    try:
        options = BenchOptions(
            seconds=2, threads=(1,), workloads=("autocommit",), data_bytes=DATA_BYTES
        )
        report = Benchmark(lambda: opener(srv), options).run()
        grew = report.data_binlog_bytes
        # Its rows, as row events: about the data set's size, not a few bytes of statements.
        assert grew is not None and 0.8 * DATA_BYTES < grew < 3 * DATA_BYTES, grew
        changes = [("innodb_buffer_pool_size", str(5 * 2**20), str(64 * 2**20))]
        text = data_set_text(report, changes, 3.0, report)
        assert "The binary log grew by" in text and "with both sides' rows" in text, text
        assert scratch_schemas(srv) == []
    finally:
        srv.stop()


def test_mysqlslap_runs_without_the_data_set(server: PrivateServer) -> None:
    route = _route(server, "slap")
    options = BenchOptions(
        seconds=2, threads=(1,), workloads=("autocommit",), data_bytes=DATA_BYTES
    )
    bench = Benchmark(lambda: opener(server), options, route=route)
    report = bench.run()
    assert bench.data_rows == 0 and report.data_bytes == 0
    assert report.results[0].commits > 0
    assert scratch_schemas(server) == []
