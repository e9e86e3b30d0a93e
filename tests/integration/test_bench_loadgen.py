"""The benchmark's load generator on the target, against a real private MariaDB and a real sshd:
the run next to the server, cancel (its processes killed), the caps, the scratch schema dropped,
a password that never reaches a command line, and the client-bound flag."""

from __future__ import annotations

import getpass
import json
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.bench.loadgen import LoadgenRoute, find_loadgen
from app.bench.program import TargetLogin
from app.bench.report import report_text
from app.bench.route import client_route, cpu_probe, session_factory
from app.bench.runner import Benchmark, BenchOptions, status_values
from app.cli import run_cli
from app.domain.bench import WORKLOADS, BenchReport
from app.domain.errors import InnoTuneError
from app.domain.target import ConnectOptions, Target, parse_target
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.remote.local import LocalTransport
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import below_us
from tests.integration.test_bench import opener, scratch_schemas


def loadgen_pids() -> list[int]:
    """This test session's load generator processes on this host (the target here).

    Only those below this process (directly, or through the test's own sshd and sudo): the
    suite's other session runs benchmarks of its own on this machine at the same time.
    """
    found = subprocess.run(["pgrep", "-f", "innotune-loadgen"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split() if below_us(int(p))]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    srv = PrivateServer(tmp_path_factory.mktemp("loadgen") / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def bench_connections(server: PrivateServer) -> int:
    out = server.query(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB LIKE 'innotune_bench%'"
    )
    return int(out.split()[-1])


def wait_for(check: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def socket_login(server: PrivateServer, **kw: Any) -> TargetLogin:
    """This computer's account by the server's socket, unless ``kw`` says otherwise."""
    args = {"socket": str(server.socket_path), "port": None, "user": getpass.getuser()}
    return TargetLogin(**{**args, **kw})


def local_route(server: PrivateServer, **kw: Any) -> LoadgenRoute:
    route = find_loadgen(LocalTransport(), socket_login(server, **kw), server.running_pid())
    assert route is not None and route.engine.startswith("innotune-loadgen (python 3.")
    return route


def ssh_target(sshd: SshServer, user: str, server: PrivateServer, kh: Path) -> Target:
    kh.write_text(sshd.known_hosts_line())
    return parse_target(
        f"{user}@{sshd.host}:{sshd.port}",
        ConnectOptions(
            identity=str(sshd.client_key), known_hosts=str(kh), instance=str(server.socket_path)
        ),
    )


@pytest.fixture
def over_ssh(
    server: PrivateServer, sshd: SshServer, ssh_users: SshUsers, tmp_path: Path
) -> Iterator[tuple[DoctorResult, Target]]:
    """The NOPASSWD sudo user over SSH, the database through the relay under sudo."""
    target = ssh_target(sshd, ssh_users.np_user, server, tmp_path / "known_hosts")
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok, [s.line() for s in steps]
    assert result.session is not None and "relay under sudo" in result.session.via
    try:
        yield result, target
    finally:
        result.close()


def test_runs_on_the_target_next_to_the_server(
    server: PrivateServer, over_ssh: tuple[DoctorResult, Target]
) -> None:
    result, target = over_ssh
    assert result.session is not None
    route = client_route(result, target, Secrets(), result.session, "loadgen")
    assert isinstance(route, LoadgenRoute)
    # The root socket login under sudo, as the relay does; the server's pid for its CPU.
    assert route.user == "root" and route.sudo and route.password is None
    assert route.server_pid == server.running_pid()
    seen: dict[str, int] = {}

    def watch() -> None:
        # While it runs: the clients are processes on the target, logged in over the socket.
        while "done" not in seen:
            pids = loadgen_pids()
            if pids:
                seen["pids"] = max(seen.get("pids", 0), len(pids))
                users = server.query(
                    "SELECT USER, HOST FROM information_schema.PROCESSLIST "
                    "WHERE DB LIKE 'innotune_bench%' AND COMMAND <> 'Daemon'"
                )
                if "root\tlocalhost" in users:
                    seen["socket_root"] = 1
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        report = Benchmark(
            session_factory(result, target, Secrets()),
            BenchOptions(seconds=6, threads=(1, 2)),
            route=route,
            target=target.label,
        ).run()
    finally:
        seen["done"] = 1
        watcher.join()
    assert report.engine.startswith("innotune-loadgen")
    assert [(r.workload, r.threads) for r in report.results] == [
        (w, t) for w in WORKLOADS for t in (1, 2)
    ]
    for r in report.results:
        assert r.commits > 0 and r.rows == r.commits * {"autocommit": 1, "small_tx": 4}.get(
            r.workload, 5000
        )
        lat = r.latency
        assert 0 < lat.p50_ms <= lat.p95_ms <= lat.p99_ms <= lat.max_ms, r
        assert r.counters.redo_bytes and r.counters.data_fsyncs, r
        assert r.stopped == "time"
        assert r.cpu is not None and r.cpu.where == "target", r
        assert r.cpu.client_cores and r.cpu.client_cores > 0, r
        assert r.cpu.server_cores and r.cpu.server_cores > 0, r
        assert r.cpu.host_busy is not None and r.cpu.cpus
    # Two clients: two client processes and the one that runs them.
    assert seen.get("pids", 0) >= 3 and seen.get("socket_root")
    assert "cpu cli" in report_text(report)
    assert scratch_schemas(server) == []
    wait_for(lambda: loadgen_pids() == [], 10)


def test_one_load_generator_serves_every_round_of_a_benchmark(server: PrivateServer) -> None:
    """Started once, it takes each round's settings in turn; it ends with the benchmark."""
    opened: list[list[str]] = []

    class Counting(LocalTransport):
        def open_stream(self, argv: Any, **kw: Any) -> Any:
            opened.append(list(argv))
            return super().open_stream(argv, **kw)

    route = find_loadgen(Counting(), socket_login(server), server.running_pid())
    assert route is not None
    options = BenchOptions(
        seconds=6, threads=(1, 2), workloads=("autocommit", "small_tx"), rounds=3
    )
    bench = Benchmark(lambda: opener(server), options, route=route)
    report = bench.run()
    assert len(opened) == 1  # one python3 for 12 rounds
    for r in report.results:
        assert len(r.rounds) == 3 and all(cps > 0 for cps in r.rounds), r
        assert r.stopped == "time" and r.cpu is not None and r.cpu.client_cores
    assert bench.times.steps == 12
    per = bench.times.per_step()
    assert per["timed"] > 0 and per["table"] > 0 and per["start"] > 0, per
    assert scratch_schemas(server) == []
    wait_for(lambda: loadgen_pids() == [] and bench_connections(server) == 0, 10)


def test_cancel_kills_the_clients_on_the_target(
    server: PrivateServer, over_ssh: tuple[DoctorResult, Target]
) -> None:
    result, target = over_ssh
    assert result.session is not None
    route = client_route(result, target, Secrets(), result.session, "loadgen")
    bench = Benchmark(
        session_factory(result, target, Secrets()),
        BenchOptions(seconds=240, threads=(3,), workloads=("autocommit",)),
        route=route,
    )
    out: list[BenchReport] = []
    worker = threading.Thread(target=lambda: out.append(bench.run()))
    worker.start()
    wait_for(lambda: bench_connections(server) >= 3, 60)
    time.sleep(1.0)  # writing
    assert len(loadgen_pids()) >= 4
    bench.cancel.set()
    cancelled_at = time.monotonic()
    worker.join(30)
    assert not worker.is_alive()
    assert time.monotonic() - cancelled_at < 15  # the run would last 240 s
    assert out[0].cancelled and out[0].results[0].stopped == "cancelled"
    assert scratch_schemas(server) == []
    wait_for(lambda: loadgen_pids() == [] and bench_connections(server) == 0, 10)


def test_a_lost_stream_kills_the_clients(server: PrivateServer) -> None:
    """InnoTune gone (its end of the stream closed): every client process ends at once."""
    route = local_route(server)
    control = opener(server)
    schema = f"innotune_bench_{secrets.token_hex(4)}"
    try:
        control.query(f"CREATE DATABASE `{schema}`")
        control.query(
            f"CREATE TABLE `{schema}`.bench_autocommit (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
            "k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL) ENGINE=InnoDB"
        )
        from app.bench.loadgen import BOOTSTRAP, program, settings_line

        text = program()
        stream = LocalTransport().open_stream(
            ["python3", "-I", "-c", BOOTSTRAP, str(len(text))], sudo=False
        )
        stream.sendall(text + settings_line(route, schema, "autocommit", 2, 300.0, 10**9))
        wait_for(lambda: bench_connections(server) >= 2, 30)
        assert len(loadgen_pids()) >= 3
        stream.close()
        wait_for(lambda: loadgen_pids() == [] and bench_connections(server) == 0, 10)
    finally:
        control.query(f"DROP DATABASE IF EXISTS `{schema}`")
        control.close()


def _handler_writes(server: PrivateServer) -> int:
    session = opener(server)
    try:
        return int(status_values(session, ("Handler_write",))["Handler_write"] or 0)
    finally:
        session.close()


@pytest.mark.parametrize(("cap", "why"), [("max_rows", "rows"), ("max_bytes", "bytes")])
def test_the_row_and_byte_caps_hold(server: PrivateServer, cap: str, why: str) -> None:
    limit = {"max_rows": 700} if cap == "max_rows" else {"max_bytes": 220 * 450}
    options = BenchOptions(seconds=120, threads=(3,), workloads=("autocommit",), **limit)  # type: ignore[arg-type]
    writes = _handler_writes(server)
    started = time.monotonic()
    report = Benchmark(lambda: opener(server), options, route=local_route(server)).run()
    assert time.monotonic() - started < 60  # the cap, not the 120 s budget, ended it
    r = report.results[0]
    assert r.stopped == why
    assert r.rows == r.commits == options.row_cap  # each client stops at its share
    # The server agrees: no more rows were written than the cap (plus SHOW STATUS's few).
    assert _handler_writes(server) - writes <= options.row_cap + 100
    assert scratch_schemas(server) == []


def _cmdlines_and_environs() -> bytes:
    blob = b""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for name in ("cmdline", "environ"):
                try:
                    blob += Path(f"/proc/{pid}/{name}").read_bytes()
                except OSError:
                    pass
    return blob


def run_watching_for(secret: str, bench: Benchmark) -> BenchReport:
    """``bench``'s report; fails if ``secret`` shows in a command line or environment meanwhile."""
    out: list[BenchReport] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(bench.run())
        except BaseException as exc:  # noqa: BLE001 - raised again below, in the test
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    leaked = False
    while worker.is_alive():
        leaked = leaked or secret.encode() in _cmdlines_and_environs()
        time.sleep(0.2)
    worker.join()
    assert not leaked, "the password showed in a process's command line or environment"
    if errors:
        raise errors[0]
    return out[0]


@pytest.mark.parametrize("via", ["socket", "tcp"])
def test_a_password_login_never_on_a_command_line(server: PrivateServer, via: str) -> None:
    password = "lg-" + secrets.token_hex(10)
    user = f"innotune_lg_{via}"
    for host in ("localhost", "127.0.0.1"):
        server.query(f"DROP USER IF EXISTS '{user}'@'{host}'")
        server.query(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'")
        server.query(f"GRANT ALL ON `innotune\\_bench\\_%`.* TO '{user}'@'{host}'")
    where = (
        {"socket": str(server.socket_path), "port": None}
        if via == "socket"
        else {"socket": None, "port": server.port}
    )
    route = local_route(server, user=user, password=password, **where)
    bench = Benchmark(
        lambda: opener(server),
        BenchOptions(seconds=4, threads=(2,), workloads=("autocommit", "small_tx")),
        route=route,
    )
    report = run_watching_for(password, bench)
    assert all(r.commits > 0 and r.cpu is not None for r in report.results)
    users = server.query("SELECT USER FROM information_schema.PROCESSLIST")
    assert user not in users  # every client logged out

    # A wrong password: the run fails with the server's answer, the schema is dropped.
    wrong = local_route(server, user=user, password="wrong-" + password, **where)
    with pytest.raises(InnoTuneError, match="Access denied"):
        Benchmark(
            lambda: opener(server),
            BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",)),
            route=wrong,
        ).run()
    assert scratch_schemas(server) == []
    wait_for(lambda: loadgen_pids() == [], 10)
    for host in ("localhost", "127.0.0.1"):
        server.query(f"DROP USER '{user}'@'{host}'")


def test_clients_over_the_link_are_flagged(
    server: PrivateServer, over_ssh: tuple[DoctorResult, Target]
) -> None:
    """InnoTune's own client on this side of the SSH link: every run is client-bound, and the
    report says so (what the load generator is there to avoid)."""
    result, target = over_ssh
    report = Benchmark(
        session_factory(result, target, Secrets()),
        BenchOptions(seconds=2, threads=(1, 2), workloads=("autocommit",)),
        cpu_probe=cpu_probe(result),
    ).run()
    assert report.engine == "innotune"
    for r in report.results:
        assert r.cpu is not None and r.cpu.where == "link" and r.cpu.client_bound
        assert r.cpu.server_cores is not None and r.cpu.server_cores > 0
    assert report.client_bound == report.results
    text = report_text(report)
    assert "Client-bound" in text and "SSH link" in text


def test_bench_command_over_ssh_with_the_load_generator(
    server: PrivateServer,
    sshd: SshServer,
    ssh_users: SshUsers,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    argv = ["bench", f"{ssh_users.np_user}@{sshd.host}:{sshd.port}", "--identity"]
    argv += [str(sshd.client_key), "--known-hosts", str(kh), "--instance", str(server.socket_path)]
    argv += ["--engine", "loadgen", "--workloads", "small_tx", "--seconds", "3", "--threads", "2"]
    argv += ["--sample", "0.2", "--yes", "--json"]
    assert run_cli(argv) == 0
    report = BenchReport.from_json(capsys.readouterr().out)
    assert report.engine.startswith("innotune-loadgen")
    assert [(r.workload, r.threads) for r in report.results] == [("small_tx", 1), ("small_tx", 2)]
    assert all(r.commits > 0 and r.cpu and r.cpu.where == "target" for r in report.results)
    assert json.loads(report.to_json())["results"][0]["cpu"]["server_cores"] > 0
    assert scratch_schemas(server) == []
