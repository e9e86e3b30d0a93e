"""The measured apply's judgements: quiet or busy from the inspection, and why no "after"."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.domain.hostfacts import HostFacts
from app.domain.serverfacts import ServerFacts
from app.flows.measure import (
    BUSY_COMMITS_PER_S,
    BUSY_THREADS_RUNNING,
    BUSY_WRITES_PER_S,
    quietness,
)
from app.flows.measured import why_no_after
from app.jobs.runner import JobStatus

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-mariadb-10.11/facts.json"


def server(**rates: float) -> ServerFacts:
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None and facts.server.rates is not None
    return dataclasses.replace(facts.server, rates=dataclasses.replace(facts.server.rates, **rates))


def with_running(found: ServerFacts, running: int) -> ServerFacts:
    status = tuple((k, v) for k, v in found.status if k != "Threads_running")
    return dataclasses.replace(found, status=(*status, ("Threads_running", str(running))))


def test_quiet_names_every_figure_and_busy_the_one_above_its_threshold() -> None:
    quiet = quietness(with_running(server(transactions_per_s=3.0, writes_per_s=1.0), 1))
    assert quiet.quiet
    assert "3 commits/s (at most 100)" in quiet.why and "0 other queries running" in quiet.why
    at_limit = server(transactions_per_s=BUSY_COMMITS_PER_S, writes_per_s=BUSY_WRITES_PER_S)
    assert quietness(with_running(at_limit, BUSY_THREADS_RUNNING + 1)).quiet
    busy = quietness(with_running(server(transactions_per_s=101.0), 1))
    assert not busy.quiet and busy.why == "busy: 101 commits/s (above 100)"
    writes = quietness(with_running(server(writes_per_s=60.0), 1))
    assert writes.why == "busy: 60 write statements/s (above 50)"
    # Threads_running counts the inspection's own query.
    running = quietness(with_running(server(), BUSY_THREADS_RUNNING + 2))
    assert running.why == "busy: 3 other queries running (above 2)"
    one = quietness(with_running(server(), 2))
    assert "1 other query running (at most 2)" in one.why, one.why


def test_no_sample_is_not_known_to_be_quiet() -> None:
    found = quietness(dataclasses.replace(server(), rates=None))
    assert not found.quiet and "no sample" in found.why
    assert not quietness(None).quiet


def test_after_runs_only_on_an_applied_change_and_says_why_not() -> None:
    assert why_no_after(JobStatus("j1", "applied", snapshot_id="s1")) == ""
    rolled = why_no_after(JobStatus("j2", "rolled-back"))
    assert "not run: the change was rolled back (job j2)" in rolled
    assert "waits to be kept" in why_no_after(JobStatus("j3", "awaiting-confirm"))
    assert "ended failed-rollback" in why_no_after(JobStatus("j4", "failed-rollback"))
