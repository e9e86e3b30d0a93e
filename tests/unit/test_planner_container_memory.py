"""A server in a container gets a buffer pool that fits the container's memory limit (issue 30)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.values import GIB

SID = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7/facts.json"


def _in_a_container(limit: int | None) -> HostFacts:
    facts = HostFacts.from_json(SID.read_text())
    assert facts.server is not None
    box = Container("docker", "c0ffee", "db", "innotune/mysql:9.7", memory_limit_bytes=limit)
    instance = dataclasses.replace(facts.server.instance, container=box)
    server = dataclasses.replace(facts.server, instance=instance)
    return dataclasses.replace(facts, server=server, instances=(instance,))


def _pool(facts: HostFacts) -> tuple[int, str]:
    plan = make_plan(facts, default_positions(facts), default_catalogue())
    change = next(c for c in plan.changes if c.key == "innodb_buffer_pool_size")
    return int(change.proposed), change.reason


def test_the_pool_fits_the_containers_memory_limit() -> None:
    host_pool, _ = _pool(_in_a_container(None))
    assert host_pool > 8 * GIB  # the 23.5 GiB host alone would give it far more
    pool, reason = _pool(_in_a_container(4 * GIB))
    assert pool <= 4 * GIB * 0.9  # what the job accepts
    assert pool < host_pool
    assert "of the 4 GiB the server's container may use" in reason, reason


def test_a_limit_above_what_the_host_gives_changes_nothing() -> None:
    assert _pool(_in_a_container(64 * GIB)) == _pool(_in_a_container(None))
