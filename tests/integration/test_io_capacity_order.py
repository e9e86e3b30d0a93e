"""The io_capacity pair changes in an order the live server takes without adjusting anything.

MySQL clamps a ``SET GLOBAL innodb_io_capacity`` above the current max (ha_innodb.cc,
innodb_io_capacity_update); the MariaDB 10.11 here moves the other value instead and says so
with warning 1210. Either way the order matters; these tests run on a private MariaDB 10.11,
through the real apply job and through the client, and show that the order InnoTune uses
draws no adjustment while the naive one does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.describe import dynamic
from app.jobs import runner
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.targetjob.values import ordered_settings, set_global
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
    change,
    facts_for,
    host_for,
    remove_jobs_and_snapshots,
    run_job,
    variable,
)

PAIR = ("innodb_io_capacity", "innodb_io_capacity_max")


def _pair(server: PrivateServer) -> tuple[int, int]:
    return int(variable(server, PAIR[0])), int(variable(server, PAIR[1]))


def _put(server: PrivateServer, pair: tuple[int, int]) -> None:
    """Set the pair without any adjustment: the max out of the way first."""
    server.query(
        f"SET GLOBAL {PAIR[1]} = 4294967295; SET GLOBAL {PAIR[0]} = {pair[0]}; "
        f"SET GLOBAL {PAIR[1]} = {pair[1]}"
    )
    assert _pair(server) == pair


def _set_all(server: PrivateServer, statements: list[str]) -> list[str]:
    """Run each statement in one session with SHOW WARNINGS after it; the warnings."""
    out = server.query("; ".join(f"{sql}; SHOW WARNINGS" for sql in statements))
    return [line for line in out.splitlines() if "1210" in line]


@pytest.mark.parametrize(
    ("start", "planned"),
    [((200, 2000), (20000, 40000)), ((20000, 40000), (150, 300))],
    ids=["raise", "lower"],
)
def test_the_order_draws_no_adjustment_from_the_live_server(
    private_server: PrivateServer, start: tuple[int, int], planned: tuple[int, int]
) -> None:
    server = private_server
    _put(server, start)
    naive_values = [(PAIR[0], str(planned[0])), (PAIR[1], str(planned[1]))]
    if planned[0] < start[0]:
        naive_values.reverse()  # lowering: the max first is the naive mistake
    now = dict(zip(PAIR, map(str, start), strict=True))
    ordered = ordered_settings(naive_values, lambda kv: kv[0], lambda kv: kv[1], now)
    assert ordered != naive_values
    naive = [set_global(k, v) for k, v in naive_values]
    assert _set_all(server, [set_global(k, v) for k, v in ordered]) == [], (
        "the server adjusted a value InnoTune set"
    )
    assert _pair(server) == planned
    # The naive order, from the same start, is what the server adjusts (the check can fail).
    _put(server, start)
    assert _set_all(server, naive), "MariaDB 10.11 warns when it moves the other value"


def test_the_apply_job_reorders_the_pair_and_rolls_back_in_order(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    """Statements handed over in the clamping order still end as planned, and roll back."""
    server = private_server
    socket = str(server.socket_path)
    facts = facts_for(local, socket)
    host = host_for(local, facts, socket)
    actions = [
        dynamic.describe([change(PAIR[0], "dynamic", "20000")], host)[0],
        dynamic.describe([change(PAIR[1], "dynamic", "40000")], host)[0],
    ]
    host.session.close()
    assert _pair(server) == (200, 2000)
    status = run_job(local, facts, actions, tmp_path)
    assert status.state == "applied", status.errors
    assert _pair(server) == (20000, 40000)
    sets = [s.detail for s in status.steps if s.step == "dynamic" and s.status == "ok"]
    assert sets == [set_global(PAIR[1], "40000"), set_global(PAIR[0], "20000")]  # room first
    back = runner.rollback(local, status.snapshot_id or "")
    assert back.state == "rolled-back", back.errors
    assert _pair(server) == (200, 2000)
    undone = [s.detail for s in back.steps if s.step == "restore" and s.status == "ok"]
    order = [next(k for k in PAIR[::-1] if k in d) for d in undone if "dynamic innodb_io" in d]
    assert order == [PAIR[0], PAIR[1]]  # io_capacity first, out of the max's way
