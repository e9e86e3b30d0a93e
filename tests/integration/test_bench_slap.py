"""The benchmark's clients as the target's mariadb-slap / mysqlslap, against a real private
MariaDB and a real sshd: the run next to the server, the fallback order on a host with only the
server and its client, cancel, the caps, the scratch schema dropped, a password that never
reaches a command line."""

from __future__ import annotations

import dataclasses
import os
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.bench.program import wait_for_clients
from app.bench.report import report_text
from app.bench.route import client_route, session_factory
from app.bench.runner import Benchmark, BenchOptions
from app.bench.slap import SlapRoute, find_slap, statements, transactions_in
from app.bench.sysbench import SysbenchRoute
from app.domain.bench import WORKLOADS, BenchReport
from app.domain.errors import InnoTuneError
from app.domain.target import ConnectOptions, Target, parse_target
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.remote.local import LocalTransport
from tests.hosts.util import below_us
from tests.integration.test_bench import opener, scratch_schemas
from tests.integration.test_bench_loadgen import (
    bench_connections,
    over_ssh,  # noqa: F401 - a fixture
    run_watching_for,
    server,  # noqa: F401 - a fixture
    socket_login,
    wait_for,
)

PER_TX = {"autocommit": 1, "small_tx": 4, "bulk": 5000}


def slap_pids() -> list[int]:
    """This session's mariadb-slap processes (the other session's hosts run theirs too)."""
    found = subprocess.run(["pgrep", "-x", "mariadb-slap"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split() if below_us(int(p))]


def local_route(server: PrivateServer, **kw: Any) -> SlapRoute:  # noqa: F811
    route = find_slap(LocalTransport(), socket_login(server, **kw), server.running_pid())
    assert route is not None and route.engine.startswith("mariadb-slap 1")
    return route


def test_statements_are_the_benchmarks_own() -> None:
    for workload in WORKLOADS:
        listed = statements(workload)
        assert all(";" not in s for s in listed)  # the file's delimiter
        assert transactions_in(workload, listed) > 0
    small = statements("small_tx")
    # Each transaction: BEGIN, 3 inserts, the row picked on the server, the UPDATE, COMMIT.
    assert small[:7][0] == "BEGIN" and small[6] == "COMMIT"
    assert [s.split()[0] for s in small[1:4]] == ["INSERT"] * 3
    assert "RAND()" in small[4] and small[5].endswith("WHERE id = @innotune_row")


def test_runs_on_the_target_over_ssh(
    server: PrivateServer,  # noqa: F811
    over_ssh: tuple[DoctorResult, Target],  # noqa: F811
) -> None:
    result, target = over_ssh
    assert result.session is not None
    route = client_route(result, target, Secrets(), result.session, "slap")
    assert isinstance(route, SlapRoute)
    assert route.user == "root" and route.sudo and route.password is None
    assert route.server_pid == server.running_pid()
    # 3 s a run: beside the suite's other sessions a run's share, less its start, was once
    # under 0.6 s, shorter than one bulk transaction (5,000 rows), so it committed none.
    report = Benchmark(
        session_factory(result, target, Secrets()),
        BenchOptions(seconds=18, threads=(1, 2)),
        route=route,
        target=target.label,
    ).run()
    assert report.engine.startswith("mariadb-slap 1") and report.engine.endswith("on the target")
    assert [(r.workload, r.threads) for r in report.results] == [
        (w, t) for w in WORKLOADS for t in (1, 2)
    ]
    for r in report.results:
        assert r.commits > 0 and r.rows == r.commits * PER_TX[r.workload], r
        # The target's clock: the run's share of the budget (3 s at most), and its start.
        assert 0 < r.seconds < 6, r
        assert r.commits_per_s == pytest.approx(r.commits / r.seconds, rel=0.01)
        # No transaction timed: the mean from Little's law, no percentiles.
        assert not r.latency.percentiles and r.latency.p99_ms == 0
        assert r.latency.mean_ms == pytest.approx(
            r.threads * r.seconds / r.commits * 1000, rel=0.01
        )
        assert r.counters.redo_bytes and r.counters.data_fsyncs, r
        assert r.stopped == "time"
        assert r.cpu is not None and r.cpu.where == "target", r
        # Measured (a C client may use less than the clock tick of `times`: 0.00 then).
        assert r.cpu.client_cores is not None and r.cpu.client_cores >= 0, r
        assert r.cpu.server_cores and r.cpu.server_cores > 0, r
    text = report_text(report)
    assert "~ mean latency" in text and "no percentiles" in text
    assert scratch_schemas(server) == []
    wait_for(lambda: slap_pids() == [], 10)


def only_server_and_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This computer as a host with the server's client programs but no python3, no sysbench:
    the commands InnoTune runs from now on see a PATH of this computer's programs without
    python3 and sysbench (the real programs, nothing stands in for them)."""
    path = tmp_path / "bin"
    path.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/usr/sbin"):
        for tool in Path(folder).iterdir():
            name = tool.name
            if not name.startswith(("python", "sysbench")) and not (path / name).exists():
                (path / name).symlink_to(tool)
    assert (path / "mariadb-slap").exists() and not (path / "python3").exists()
    monkeypatch.setenv("PATH", str(path))


def test_auto_falls_back_to_slap_on_a_host_with_only_the_server_and_client(
    server: PrivateServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = parse_target("local", ConnectOptions(instance=str(server.socket_path)))
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok and result.session is not None, [s.line() for s in steps]
    try:
        assert isinstance(client_route(result, target, Secrets(), result.session), SysbenchRoute)
        only_server_and_client(tmp_path, monkeypatch)
        route = client_route(result, target, Secrets(), result.session)
        assert isinstance(route, SlapRoute)
        for engine in ("sysbench", "loadgen"):
            with pytest.raises(InnoTuneError, match="was asked for"):
                client_route(result, target, Secrets(), result.session, engine)
        report = Benchmark(
            session_factory(result, target, Secrets()),
            BenchOptions(seconds=2, threads=(2,), workloads=("small_tx",)),
            route=route,
        ).run()
        assert report.results[0].commits > 0 and report.results[0].cpu is not None
    finally:
        result.close()
    assert scratch_schemas(server) == []


def test_cancel_stops_it_at_once(server: PrivateServer) -> None:  # noqa: F811
    bench = Benchmark(
        lambda: opener(server),
        BenchOptions(seconds=240, threads=(3,), workloads=("autocommit",)),
        route=local_route(server),
    )
    out: list[BenchReport] = []
    worker = threading.Thread(target=lambda: out.append(bench.run()))
    worker.start()
    wait_for(lambda: bench_connections(server) >= 3, 60)
    time.sleep(1.0)  # writing
    assert slap_pids()
    bench.cancel.set()
    cancelled_at = time.monotonic()
    worker.join(30)
    assert not worker.is_alive()
    assert time.monotonic() - cancelled_at < 15  # the run would last 240 s
    assert out[0].cancelled and out[0].results[0].stopped == "cancelled"
    assert scratch_schemas(server) == []
    wait_for(lambda: slap_pids() == [] and bench_connections(server) == 0, 10)


def test_a_client_that_connects_after_the_stop_is_stopped_too(
    server: PrivateServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A busy host starts the program late: the budget ends before its clients connect. It
    must not then run its whole statement list (seen: 120 s for a 1 s benchmark)."""
    slow = tmp_path / "slow-slap"
    real = local_route(server).program
    slow.write_text(f'#!/bin/sh\nsleep 2\nexec {real} "$@"\n')
    slow.chmod(0o755)
    route = dataclasses.replace(local_route(server), program=str(slow))
    options = BenchOptions(seconds=0.5, threads=(2,), workloads=("autocommit",))
    started = time.monotonic()
    report = Benchmark(lambda: opener(server), options, route=route).run()
    assert time.monotonic() - started < 30  # the statement list would take minutes
    assert report.results[0].stopped == "time"
    assert scratch_schemas(server) == []
    wait_for(lambda: slap_pids() == [] and bench_connections(server) == 0, 10)


@pytest.mark.parametrize(("cap", "why"), [("max_rows", "rows"), ("max_bytes", "bytes")])
def test_the_row_and_byte_caps_hold(
    server: PrivateServer,  # noqa: F811
    cap: str,
    why: str,
) -> None:
    limit = {"max_rows": 3000} if cap == "max_rows" else {"max_bytes": 220 * 2000}
    options = BenchOptions(seconds=120, threads=(3,), workloads=("autocommit",), **limit)  # type: ignore[arg-type]
    started = time.monotonic()
    report = Benchmark(lambda: opener(server), options, route=local_route(server)).run()
    assert time.monotonic() - started < 60  # the cap, not the 120 s budget, ended it
    r = report.results[0]
    assert r.stopped == why
    # Whole passes over the statement file: at most the cap, and not far below it.
    assert options.row_cap * 0.5 < r.rows <= options.row_cap
    assert scratch_schemas(server) == []


def test_a_password_login_never_on_a_command_line(server: PrivateServer) -> None:  # noqa: F811
    password = "sl-" + secrets.token_hex(10)
    user = "innotune_slap"
    server.query(f"DROP USER IF EXISTS '{user}'@'localhost'")
    server.query(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY '{password}'")
    server.query(f"GRANT ALL ON `innotune\\_bench\\_%`.* TO '{user}'@'localhost'")
    try:
        route = local_route(server, user=user, password=password)
        bench = Benchmark(
            lambda: opener(server),
            BenchOptions(seconds=3, threads=(2,), workloads=("autocommit",)),
            route=route,
        )
        assert run_watching_for(password, bench).results[0].commits > 0
        # A wrong password: the run fails with the server's answer, the schema is dropped.
        wrong = local_route(server, user=user, password="wrong-" + password)
        with pytest.raises(InnoTuneError, match="Access denied"):
            Benchmark(
                lambda: opener(server),
                BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",)),
                route=wrong,
            ).run()
        assert scratch_schemas(server) == []
    finally:
        server.query(f"DROP USER '{user}'@'localhost'")
    assert not os.environ.get("MYSQL_PWD")


def test_a_client_left_from_the_last_run_does_not_start_the_watch(
    server: PrivateServer,  # noqa: F811
) -> None:
    """A killed client may stay listed while it rolls back (a bulk transaction on a busy host
    did): the next run's budget starts with a connection of its own, not that one."""
    schema = "innotune_bench_linger"
    server.query(f"CREATE DATABASE IF NOT EXISTS {schema}")
    control, lingering = opener(server), opener(server)
    done = threading.Event()
    try:
        lingering.query(f"USE {schema}")
        earlier = {str(lingering.query("SELECT CONNECTION_ID()")[0][0])}
        started = time.monotonic()
        assert not wait_for_clients(
            control, schema, done.is_set, threading.Event(), limit=1.0, earlier=earlier
        )
        assert time.monotonic() - started >= 1.0
        # Without ``earlier`` it is taken for the program's client at once.
        assert wait_for_clients(control, schema, done.is_set, threading.Event(), limit=1.0)
        fresh = opener(server)
        try:
            fresh.query(f"USE {schema}")
            assert wait_for_clients(
                control, schema, done.is_set, threading.Event(), limit=5.0, earlier=earlier
            )
        finally:
            fresh.close()
    finally:
        lingering.close()
        control.close()
        server.query(f"DROP DATABASE {schema}")


def test_a_run_over_before_its_clients_are_seen_is_still_measured(
    server: PrivateServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy host the poll for the program's clients may answer only once the program has
    ended: the readings then taken spanned none of its work (the server's CPU read 0.0 for
    1,320 commits). The readings from before the launch count instead."""
    from app.bench import program

    def late(control: Any, schema: str, ended: Any, cancel: Any, **kw: Any) -> bool:
        while not ended():  # the clients come and go unseen
            time.sleep(0.05)
        return True

    monkeypatch.setattr(program, "wait_for_clients", late)
    report = Benchmark(
        lambda: opener(server),
        BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",), max_rows=2000),
        route=local_route(server),
    ).run()
    (r,) = report.results
    assert r.stopped == "rows" and r.commits > 0, r
    assert r.counters.redo_bytes and r.counters.data_fsyncs, r
    assert r.cpu is not None and r.cpu.server_cores and r.cpu.server_cores > 0, r
