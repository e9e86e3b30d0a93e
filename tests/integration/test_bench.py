"""The write benchmark against a real private MariaDB: before/after a config change, cancel,
restarts, the sysbench path and the `innotune bench` command."""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.bench.figures import STATUS_NAMES, CounterTrack, spread
from app.bench.program import TargetLogin
from app.bench.rate import status_values, write_rate
from app.bench.report import report_text
from app.bench.route import cpu_probe, loadgen_route, session_factory, sysbench_route
from app.bench.runner import Benchmark, BenchOptions
from app.bench.sysbench import SysbenchRoute, find_sysbench
from app.cli import run_cli
from app.domain.bench import WORKLOADS, BenchReport
from app.domain.compare import NO_CHANGE_PERCENT
from app.domain.drift import drift_held, drift_stands
from app.domain.pace import CPU_WAIT_NOTE, cpu_wait
from app.domain.target import ConnectOptions, parse_target
from app.mysql.session import PyMySQLSession, Session
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.remote.local import LocalTransport
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import need
from tests.verdicts import VERDICT

DROP_IN = "90-innotune-bench-test.cnf"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    """One private server for the module (starting one costs seconds)."""
    srv = PrivateServer(tmp_path_factory.mktemp("bench") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def opener(server: PrivateServer) -> Session:
    return PyMySQLSession.direct(user=getpass.getuser(), socket_path=str(server.socket_path))


def scratch_schemas(server: PrivateServer) -> list[str]:
    return server.query("SHOW DATABASES LIKE 'innotune_bench%'").split()[1:]


def check_report(
    report: BenchReport, threads: tuple[int, ...], *, flush_per_commit: bool = True
) -> None:
    """`flush_per_commit` False: at innodb_flush_log_at_trx_commit=0 the log is flushed about once a
    second by a background thread, so a half-second run may see no fsync at all."""
    assert [(r.workload, r.threads) for r in report.results] == [
        (w, t) for w in WORKLOADS for t in threads
    ]
    for r in report.results:
        assert r.commits > 0 and r.rows >= r.commits, r
        assert r.commits_per_s > 0 and r.rows_per_s >= r.commits_per_s
        lat = r.latency
        assert 0 < lat.p50_ms <= lat.p95_ms <= lat.p99_ms <= lat.max_ms, r
        assert r.counters.redo_bytes and r.counters.redo_bytes > 0, r
        assert r.counters.data_fsyncs is not None, r
        assert r.counters.data_fsyncs > 0 or not flush_per_commit, r
        assert not r.counters.restarted
        assert r.stopped == "time"


def test_before_and_after_a_config_change(server: PrivateServer) -> None:
    drop_in = server.include_dir / DROP_IN
    try:
        before = Benchmark(
            lambda: opener(server), BenchOptions(seconds=3, threads=(1, 2), label="before")
        ).run()
        check_report(before, (1, 2))
        assert before.settings["innodb_flush_log_at_trx_commit"] == "1"
        assert scratch_schemas(server) == []

        # "Apply": a drop-in read last, then a restart.
        drop_in.write_text("[mysqld]\ninnodb_flush_log_at_trx_commit = 0\n")
        server.restart()
        after = Benchmark(
            lambda: opener(server), BenchOptions(seconds=3, threads=(1, 2), label="after")
        ).run()
        check_report(after, (1, 2), flush_per_commit=False)
        assert after.settings["innodb_flush_log_at_trx_commit"] == "0"
        assert scratch_schemas(server) == []
        # The counters see the change: a flush per commit before, none per commit after.
        b, a = before.result("autocommit", 1), after.result("autocommit", 1)
        assert b is not None and a is not None
        assert b.counters.data_fsyncs is not None and a.counters.data_fsyncs is not None
        assert b.counters.data_fsyncs >= 0.5 * b.commits
        assert a.counters.data_fsyncs < 0.2 * a.commits
        assert BenchReport.from_json(after.to_json()) == after
    finally:
        drop_in.unlink(missing_ok=True)
        server.restart()


def test_cancel_stops_promptly_and_drops_the_schema(server: PrivateServer) -> None:
    seen: list[object] = []
    bench = Benchmark(
        lambda: opener(server), BenchOptions(seconds=120, threads=(2,)), on_result=seen.append
    )
    out: list[BenchReport] = []
    worker = threading.Thread(target=lambda: out.append(bench.run()))
    worker.start()
    deadline = time.monotonic() + 20
    while not scratch_schemas(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let the first run write something
    bench.cancel.set()
    cancelled_at = time.monotonic()
    worker.join(30)
    assert not worker.is_alive()
    assert time.monotonic() - cancelled_at < 20  # promptly: the run would last 120 s
    report = out[0]
    assert report.cancelled
    assert [r.stopped for r in report.results] == ["cancelled"]
    assert scratch_schemas(server) == []


def test_counter_deltas_across_a_restart(server: PrivateServer) -> None:
    track = CounterTrack()
    session = opener(server)
    session.query("CREATE DATABASE IF NOT EXISTS restart_t")
    session.query("CREATE TABLE IF NOT EXISTS restart_t.t (id INT AUTO_INCREMENT PRIMARY KEY)")
    track.add(status_values(session, STATUS_NAMES))
    for _ in range(50):
        session.query("INSERT INTO restart_t.t VALUES ()")
    track.add(status_values(session, STATUS_NAMES))
    session.close()
    server.restart()
    session = opener(server)
    track.add(status_values(session, STATUS_NAMES))
    for _ in range(50):
        session.query("INSERT INTO restart_t.t VALUES ()")
    track.add(status_values(session, STATUS_NAMES))
    session.query("DROP DATABASE restart_t")
    session.close()
    counters = track.counters()
    # Innodb_lsn_current does not go back on a restart; the fsync count does.
    assert counters.restarted
    assert counters.redo_bytes is not None and counters.redo_bytes > 0
    assert counters.data_fsyncs is not None and counters.data_fsyncs >= 100


def test_write_rate_sees_another_writer(server: PrivateServer) -> None:
    session = opener(server)
    try:
        quiet = write_rate(session, 1.0)
        assert not quiet.busy and quiet.rows_per_s < 100
        load = Benchmark(
            lambda: opener(server),
            BenchOptions(seconds=30, threads=(2,), workloads=("autocommit",)),
        )
        worker = threading.Thread(target=load.run)
        worker.start()
        try:
            while not scratch_schemas(server):
                time.sleep(0.05)
            busy = write_rate(session, 1.5)
        finally:
            load.cancel.set()
            worker.join(30)
        assert busy.busy, busy
        assert busy.rows_per_s > 100 and "rows written per second" in busy.why
    finally:
        session.close()
    assert scratch_schemas(server) == []


def local_sysbench(server: PrivateServer) -> SysbenchRoute:
    need(shutil.which("sysbench") is not None, "sysbench is not installed (make sysdeps-test)")
    login = TargetLogin(str(server.socket_path), None, getpass.getuser())
    route = find_sysbench(LocalTransport(), login)
    assert route is not None and route.engine.startswith("sysbench 1.")
    return route


def test_sysbench_path_reports_the_same_figures(server: PrivateServer) -> None:
    route = local_sysbench(server)
    report = Benchmark(
        lambda: opener(server), BenchOptions(seconds=5, threads=(1, 2)), route=route
    ).run()
    assert report.engine.startswith("sysbench 1.")
    check_report(report, (1, 2))
    assert scratch_schemas(server) == []


def test_sysbench_cancel_kills_its_clients(server: PrivateServer) -> None:
    route = local_sysbench(server)
    bench = Benchmark(
        lambda: opener(server),
        BenchOptions(seconds=120, threads=(2,), workloads=("autocommit",)),
        route=route,
    )
    out: list[BenchReport] = []
    worker = threading.Thread(target=lambda: out.append(bench.run()))
    worker.start()
    while not scratch_schemas(server):
        time.sleep(0.05)
    time.sleep(1.5)  # sysbench is connected and writing
    bench.cancel.set()
    cancelled_at = time.monotonic()
    worker.join(30)
    assert time.monotonic() - cancelled_at < 20  # promptly: the run would last 120 s
    assert out[0].cancelled and out[0].results[0].stopped == "cancelled"
    assert scratch_schemas(server) == []


def test_bench_command(
    server: PrivateServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sock = str(server.socket_path)
    # stdin is not a terminal under pytest: without --yes it must refuse.
    assert run_cli(["bench", "local", "--instance", sock, "--seconds", "2", "--sample", "0.5"]) == 2
    refused = capsys.readouterr()
    assert "not running without consent" in refused.err
    assert "Current writes over" in refused.err
    assert scratch_schemas(server) == []

    out = tmp_path / "b.json"
    argv = ["bench", "local", "--instance", sock, "--seconds", "3", "--threads", "2"]
    argv += ["--sample", "0.5", "--yes", "--json", "--engine", "innotune", "--out", str(out)]
    assert run_cli(argv) == 0
    report = BenchReport.from_json(capsys.readouterr().out)
    check_report(report, (1, 2))
    assert report.rate_before is not None and report.engine == "innotune"
    assert BenchReport.from_json(out.read_text()) == report
    table = report_text(report)
    assert "commits/s" in table and "p99 ms" in table and "quiet" in table
    assert scratch_schemas(server) == []

    # After a change: the same run against the saved one, each run's verdict below the report.
    # The saved run had one round a run (3 s: a round is never under half a second); this one
    # has three, whose spread is the noise the verdicts use.
    server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
    try:
        argv = ["bench", "local", "--instance", sock, "--seconds", "9", "--threads", "2"]
        argv += ["--sample", "0.5", "--yes", "--engine", "innotune", "--compare", str(out)]
        assert run_cli(argv) == 0
    finally:
        server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    printed = capsys.readouterr().out
    against = printed.split(f"Against {out} ({report.started_at}):\n", 1)[1].splitlines()
    assert (
        against[0].split()
        == "workload clients before c/s after c/s p99 before p99 after verdict".split()
    )
    rows = {(ln.split()[0], ln.split()[1]): ln for ln in against[1:7]}
    assert set(rows) == {(w, t) for w in WORKLOADS for t in ("1", "2")}
    assert all(re.search(VERDICT + "$", ln) for ln in rows.values()), against
    assert "Not like for like" not in printed  # both with InnoTune's own client
    assert "Spread of commits/s over each run's 3 rounds: autocommit ×1 ±" in printed
    # A file that is no report: refused before anything runs, naming the file.
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    argv[-1] = str(bad)
    assert run_cli(argv) != 0
    err = capsys.readouterr().err
    assert f"--compare: {bad} is not a benchmark report" in err and "--out FILE" in err
    assert scratch_schemas(server) == []


@pytest.mark.parametrize("engine", ["innotune", "sysbench"])
def test_over_ssh_through_the_sudo_relay(
    server: PrivateServer, sshd: SshServer, ssh_users: SshUsers, tmp_path: Path, engine: str
) -> None:
    """A user with NOPASSWD sudo over SSH: every client is its own relay to root's socket login,
    and sysbench runs on the target under sudo."""
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    target = parse_target(
        f"{ssh_users.np_user}@{sshd.host}:{sshd.port}",
        ConnectOptions(
            identity=str(sshd.client_key), known_hosts=str(kh), instance=str(server.socket_path)
        ),
    )
    result = DoctorResult()
    try:
        steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
        assert result.ok, [s.line() for s in steps]
        assert result.session is not None and "relay under sudo" in result.session.via
        route = None
        if engine == "sysbench":
            need(shutil.which("sysbench") is not None, "sysbench is not installed")
            route = sysbench_route(result, target, Secrets(), result.session)
            assert route is not None and route.sudo and route.user == "root"
        report = Benchmark(
            session_factory(result, target, Secrets()),
            BenchOptions(seconds=3, threads=(2,)),
            route=route,
            target=target.label,
        ).run()
    finally:
        result.close()
    assert report.engine.startswith("sysbench" if route else "innotune")
    check_report(report, (2,))
    assert scratch_schemas(server) == []


def test_bench_compare_json_gives_each_runs_verdict_and_spread(
    server: PrivateServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--compare BEFORE.json --json`: per workload and client count, the verdict (faster,
    slower, no change or undecided) with the change's interval and each side's rounds; a flush
    per commit against none is faster."""
    sock = str(server.socket_path)
    out = tmp_path / "before.json"
    # Four runs judged at once share the error: 6 rounds a side, every one beaten, decide
    # (3 s a run: rounds of half a second).
    base = ["bench", "local", "--instance", sock, "--seconds", "12", "--threads", "2"]
    base += ["--sample", "0.5", "--yes", "--engine", "innotune", "--rounds", "6"]
    assert run_cli([*base, "--workloads", "autocommit,small_tx", "--out", str(out)]) == 0
    capsys.readouterr()
    before = BenchReport.from_json(out.read_text())
    assert all(len(r.rounds) == 6 and all(x > 0 for x in r.rounds) for r in before.results)

    server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
    try:
        argv = [*base, "--workloads", "autocommit,small_tx", "--compare", str(out), "--json"]
        assert run_cli(argv) == 0
    finally:
        server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    data = json.loads(capsys.readouterr().out)
    after = BenchReport.from_json(json.dumps(data["after"]))
    assert after.settings["innodb_flush_log_at_trx_commit"] == "0"
    assert data["before"]["file"] == str(out)
    runs = {(r["workload"], r["threads"]): r for r in data["runs"]}
    assert set(runs) == {(w, t) for w in ("autocommit", "small_tx") for t in (1, 2)}
    # What each ran under, and what changed between them.
    assert not data["same_settings"]
    changed = {"innodb_flush_log_at_trx_commit": {"before": "1", "after": "0"}}
    assert data["settings_changed"] == changed, data["settings_changed"]
    for (workload, threads), run in runs.items():
        assert run["verdict"] in ("faster", "slower", "no_change", "undecided"), run
        assert run["comparisons"] == 4 and run["before_rounds"] == run["after_rounds"] == 6
        b, a = before.result(workload, threads), after.result(workload, threads)
        assert b is not None and a is not None
        assert run["before_spread_percent"] == pytest.approx(spread(b.rounds) * 100, abs=0.01)
        low, high = run["low_percent"], run["high_percent"]
        assert low is not None and high is not None and low <= run["change_percent"] <= high
        # The words follow the interval: it excludes 0 for a verdict, lies in the band for none.
        if run["verdict"] == "faster":
            assert low > 0
        elif run["verdict"] == "slower":
            assert high < 0
        elif run["verdict"] == "no_change":
            assert -NO_CHANGE_PERCENT < low and high < NO_CHANGE_PERCENT
            assert not (min(a.rounds) > max(b.rounds) or max(a.rounds) < min(b.rounds))
    # One fsync per commit against none: single-row commits are faster. When every round of
    # six beats every round before, that decides even with four runs judged at once.
    autocommit = runs[("autocommit", 1)]
    b, a = before.result("autocommit", 1), after.result("autocommit", 1)
    assert b is not None and a is not None
    seen = (autocommit, b.rounds, a.rounds)
    if drift_held(before, after) and drift_stands(before, after) != "faster":
        # The suite's other sessions changed the machine's load between the samples taken
        # with the benchmark paused, not only upwards: the verdict is held back, says why.
        assert autocommit["verdict"] == "undecided", seen
        assert autocommit["held"].startswith("other work on the machine changed"), seen
    elif min(a.rounds) > max(b.rounds):
        assert autocommit["verdict"] == "faster", seen
    else:
        # The suite's three other sessions share the two cores: a round of either side can
        # lose half its time to them, and overlapping rounds may leave it open, never turned.
        assert autocommit["verdict"] in ("faster", "undecided"), seen
    assert scratch_schemas(server) == []


def test_the_servers_cpu_is_read_after_a_restart(server: PrivateServer) -> None:
    """The pid found at login goes stale when the server restarts (an apply that restarts it,
    then Verify): the server's CPU column was "—" for every run. The benchmark looks again."""
    target = parse_target("local", ConnectOptions(instance=str(server.socket_path)))
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok and result.session is not None and result.instance is not None, [
        s.line() for s in steps
    ]
    try:
        old = result.instance.pid
        assert old == server.running_pid()
        server.restart()
        new = server.running_pid()
        assert new is not None and new != old
        # As the Apply page does after a restart: a new session, the same instance record.
        result.session.close()
        result.session = session_factory(result, target, Secrets())()
        assert result.instance.pid == old
        probe = cpu_probe(result)
        assert probe is not None and probe.server_pid == new
        route = loadgen_route(result, target, Secrets(), result.session)
        assert route is not None and route.server_pid == new
        options = BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",))
        for clients, cpu in ((route, None), (None, probe)):
            report = Benchmark(
                session_factory(result, target, Secrets()), options, route=clients, cpu_probe=cpu
            ).run()
            run = report.results[0]
            assert run.cpu is not None and run.cpu.server_cores, (report.engine, run.cpu)
    finally:
        result.close()
    assert scratch_schemas(server) == []


def test_a_run_beside_busy_loops_says_the_server_waited_for_a_cpu(server: PrivateServer) -> None:
    """Every CPU kept busy by a loop in a session of its own (as another service would): the
    server's threads wait for a CPU at each step of a commit, read from their schedstat."""
    target = parse_target("local", ConnectOptions(instance=str(server.socket_path)))
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok and result.session is not None, [s.line() for s in steps]
    loops: list[subprocess.Popen[bytes]] = []
    try:
        probe = cpu_probe(result)
        route = loadgen_route(result, target, Secrets(), result.session)
        assert probe is not None and route is not None
        options = BenchOptions(seconds=3, threads=(1,), workloads=("autocommit",))
        loops = [
            subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
            for _ in range(os.cpu_count() or 2)
        ]
        report = Benchmark(
            session_factory(result, target, Secrets()), options, route=route, cpu_probe=probe
        ).run()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        result.close()
    run = report.results[0]
    found = cpu_wait(run)
    assert found is not None and found.paced, (run.commits_per_s, run.cpu, found)
    assert found.run_ms is not None and found.wait_ms > found.run_ms
    text = report_text(report)
    assert CPU_WAIT_NOTE in text and "autocommit × 1: waited" in text, text
    assert scratch_schemas(server) == []
