"""Raising io_capacity above its max on the real MySQL 9.7 and MariaDB 10.5 / 11.8.

MySQL clamps ``SET GLOBAL innodb_io_capacity`` to the current ``innodb_io_capacity_max``
(ha_innodb.cc, innodb_io_capacity_update: "Setting innodb_io_capacity to …"), so a plan that
raises both must make room first. The apply job on each booted host, over SSH, must end with
both values as planned, and its rollback with both as they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.describe import dynamic, optionfile
from app.domain.target import ConnectOptions, parse_target
from app.jobs import runner
from app.remote.connect import open_transport
from app.remote.transport import Transport
from tests.hosts.debian_hosts import DebianHost
from tests.hosts.util import need
from tests.integration.test_apply import change, facts_for, host_for, run_job

PAIR = ("innodb_io_capacity", "innodb_io_capacity_max")


@pytest.fixture(params=["bullseye", "trixie", "sid"])
def live(request: pytest.FixtureRequest, debian_hosts: dict[str, DebianHost]) -> DebianHost:
    """One booted host with its packaged server (INNOTUNE_TEST_HOSTS may leave it out)."""
    need(request.param in debian_hosts, f"{request.param} is not among INNOTUNE_TEST_HOSTS")
    return debian_hosts[request.param]


@pytest.fixture
def ssh(live: DebianHost, tmp_path: Path) -> Iterator[Transport]:
    """root over SSH to the host, its key trusted through a known_hosts file."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(live.known_hosts_line())
    options = ConnectOptions(identity=str(live.client_key), known_hosts=str(known_hosts))
    transport = open_transport(parse_target(live.target, options), own_known_hosts=tmp_path / "own")
    yield transport
    transport.close()


def pair(host: DebianHost) -> tuple[int, int]:
    """(innodb_io_capacity, innodb_io_capacity_max) as the server has them now."""
    low, high = host.sql(f"SELECT @@GLOBAL.{PAIR[0]}, @@GLOBAL.{PAIR[1]}").split()
    return int(low), int(high)


def test_a_raise_above_the_max_ends_as_planned(
    live: DebianHost, ssh: Transport, tmp_path: Path
) -> None:
    start = pair(live)
    planned = (max(start[1] * 2, 4000), max(start[1] * 4, 8000))  # io_capacity above the max
    assert planned[0] > start[1]
    socket = live.sql("SELECT @@socket")
    facts = facts_for(ssh, socket)
    host = host_for(ssh, facts, socket)
    # Handed over in the order that clamps on MySQL: io_capacity first.
    wanted = [
        change(PAIR[0], "dynamic", str(planned[0])),
        change(PAIR[1], "dynamic", str(planned[1])),
    ]
    actions = [optionfile.describe(wanted, host)[0]]
    actions += [dynamic.describe([c], host)[0] for c in wanted]
    host.session.close()
    try:
        status = run_job(ssh, facts, actions, tmp_path)
        assert status.state == "applied", status.errors
        assert pair(live) == planned
        warnings = [s.detail for s in status.steps if s.status == "warn"]
        assert not warnings, warnings
    finally:
        back = runner.rollback(ssh, status.snapshot_id or "")
    assert back.state == "rolled-back", back.errors
    assert pair(live) == start
    assert not live.differences()
