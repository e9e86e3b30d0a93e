"""The benchmark on the packaged server lines, as a user runs it: every column filled."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.bench.route import client_route, cpu_probe, session_factory
from app.bench.runner import Benchmark, BenchOptions
from app.bench.slap import SlapRoute
from app.domain.target import ConnectOptions, parse_target
from app.remote.connect import open_transport
from tests.hosts.debian_hosts import DebianHost, LocalDebian
from tests.integration.test_lifecycle import innotune, ok


@pytest.mark.parametrize("server_host", ["sid", "bullseye", "trixie", "bookworm"], indirect=True)
@pytest.mark.parametrize("engine", ["auto", "slap"])
def test_the_servers_cpu_is_measured(
    server_host: DebianHost | LocalDebian, tmp_path: Path, engine: str
) -> None:
    """The server's CPU column was "—" for every run on MySQL 9.7 (sid, under systemd)."""
    cli, target = innotune(server_host, tmp_path)
    argv = ["bench", *target, "--seconds", "2", "--threads", "2", "--engine", engine]
    argv += ["--workloads", "autocommit", "--rounds", "1"]
    report = json.loads(ok(cli(*argv, "--json", "--yes", "--sample", "0.5")))
    # What it ran under: the server's version and the variables a plan may touch.
    redo = "innodb_redo_log_capacity" if server_host.flavour == "mysql" else "innodb_log_file_size"
    recorded = {"version", "innodb_flush_log_at_trx_commit", "sync_binlog", redo}
    recorded |= {"innodb_buffer_pool_size", "innodb_doublewrite", "innodb_io_capacity"}
    assert recorded <= set(report["settings"]), report["settings"]
    for r in report["results"]:
        cpu = r["cpu"]
        assert cpu is not None and cpu["where"] == "target", r
        assert cpu["server_cores"] is not None, (report["engine"], r)
        # Read in clock ticks (1/100 s): a run slowed to a few commits beside the suite's
        # other sessions (8 in a second once, on this machine's MariaDB) may use less than
        # one tick of the server's CPU; a few hundred commits take several.
        if r["commits"] >= 300:
            assert cpu["server_cores"] > 0, (report["engine"], r)
        assert cpu["client_cores"] is not None, (report["engine"], r)


@pytest.mark.parametrize("server_host", ["sid"], indirect=True)
def test_the_servers_cpu_after_a_restart_under_systemd(
    server_host: DebianHost | LocalDebian, tmp_path: Path
) -> None:
    """The wizard's way: log in, a restart by the service manager (an apply that restarts),
    then benchmark on the same connection. The pid found at login is gone by then."""
    assert isinstance(server_host, DebianHost)
    known = tmp_path / "known_hosts"
    known.write_text(server_host.known_hosts_line())
    options = ConnectOptions(identity=str(server_host.client_key), known_hosts=str(known))
    target = parse_target(server_host.target, options)
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok and result.session is not None and result.instance is not None, [
        s.line() for s in steps
    ]
    try:
        old = result.instance.pid
        server_host.run("systemctl", "restart", server_host.service)
        server_host.wait_for_server()
        new = server_host.main_pid()
        assert new != old
        result.session.close()  # as the Apply page does after a restart: a new session
        result.session = session_factory(result, target, Secrets())()
        route = client_route(result, target, Secrets(), result.session)
        assert route is not None and route.server_pid == new, route
        bench = Benchmark(
            session_factory(result, target, Secrets()),
            BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",)),
            route=route,
            cpu_probe=cpu_probe(result),
        )
        run = bench.run().results[0]
        assert run.cpu is not None and run.cpu.server_cores, run.cpu
    finally:
        result.close()


@pytest.mark.parametrize("server_host", ["bookworm"], indirect=True)
def test_a_slap_run_that_starts_late_still_runs_its_time(
    server_host: DebianHost | LocalDebian, tmp_path: Path
) -> None:
    """On a busy host mariadb-slap started two seconds after its command: a 2-second run was
    ended after 39 ms and reported as one. The time counts from its first client now."""
    known = tmp_path / "known_hosts"
    known.write_text(server_host.known_hosts_line())
    instance = server_host.instance_args[-1] if server_host.instance_args else None
    options = ConnectOptions(
        identity=str(server_host.client_key), known_hosts=str(known), instance=instance
    )
    target = parse_target(server_host.target, options)
    result = DoctorResult()
    steps = list(run_doctor(target, Secrets(), result, opener=open_transport))
    assert result.ok and result.session is not None, [s.line() for s in steps]
    try:
        route = client_route(result, target, Secrets(), result.session, engine="slap")
        assert isinstance(route, SlapRoute), route
        late = 3.0
        wrapper = f"/tmp/innotune-late-slap-{tmp_path.name}"  # noqa: S108
        script = f'#!/bin/sh\nsleep {late}\nexec {route.program} "$@"\n'
        route.transport.write_file_atomic(wrapper, script.encode(), mode="0755")
        bench = Benchmark(
            session_factory(result, target, Secrets()),
            BenchOptions(seconds=2, threads=(2,), workloads=("autocommit",)),
            route=replace(route, program=wrapper),
            cpu_probe=cpu_probe(result),
        )
        run = bench.run().results[0]
        route.transport.run(["rm", "-f", wrapper], timeout=20)
        # The program's clock spans the late start and then the clients' whole timed part
        # (the 2 s budget less the step's own set-up), never a fraction of it.
        timed = bench.run_seconds
        assert timed >= 0.5 and run.stopped == "time", (timed, run)
        assert run.seconds >= late + 0.9 * timed, (timed, run)
        assert run.commits > 0 and run.cpu is not None and run.cpu.server_cores, run
    finally:
        result.close()
