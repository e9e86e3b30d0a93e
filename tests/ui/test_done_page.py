"""The Done page sums up from what the wizard did."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.domain.bench import BenchReport, CpuUse
from app.domain.hostfacts import HostFacts
from app.domain.target import parse_target
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.values import size_text
from app.ui.pages.done import DonePage, gains
from app.ui.state import WizardState

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"


def test_summary_names_changes_snapshot_and_log(qtbot: QtBot) -> None:
    facts = HostFacts.from_json(FACTS.read_text())
    pos = dataclasses.replace(default_positions(facts), crash_loss="os", memory_share=50)
    state = WizardState(target=parse_target("practice"), facts=facts)
    state.plan = make_plan(facts, pos, default_catalogue())
    state.snapshot_id = "20261122-120000-abcd"
    page = DonePage(state)
    qtbot.addWidget(page)
    page.initializePage()
    text = page.text.text()
    assert "innodb_flush_log_at_trx_commit: 1 → 2" in text
    assert re.search(r"\d+ changes? applied to the practice server", text), text
    pool = next(c for c in state.plan.changes if c.key == "innodb_buffer_pool_size")
    assert f"innodb_buffer_pool_size: 128 MiB → {size_text(int(pool.proposed))}" in text
    assert "innotune rollback practice 20261122-120000-abcd" in text
    assert "innotune.log" in text
    state.snapshot_id = None  # planned, never applied
    page.initializePage()
    text = page.text.text()
    assert re.search(r"\d+ changes? planned \(not applied\) for the practice server", text), text
    assert "Nothing was applied, so there is nothing to undo." in text


def test_gains_compare_the_same_workloads() -> None:
    def report(label: str, rate: float, rounds: tuple[float, ...] = ()) -> BenchReport:
        from app.domain.bench import Counters, Latency, WorkloadResult

        lat = Latency(p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
        n = int(rate * 10)
        rounds = rounds or (rate, rate, rate)
        result = WorkloadResult(
            "autocommit", 1, 10.0, n, n, rate, rate, lat, Counters(), rounds=rounds
        )
        return BenchReport("t", "now", "innotune", 10.0, (result,), label=label)

    five_before, five_after = (98.0, 99.0, 100.0, 101.0, 102.0), (147.0, 149.0, 150.0, 151.0, 153.0)
    assert gains(report("before", 100.0, five_before), report("after", 150.0, five_after)) == [
        "autocommit × 1 client: 100 → 150 commits/s: faster: +50% (+44% to +56%)"
    ]
    # Three rounds a side never decide: undecided, never "no change".
    assert gains(report("before", 100.0), report("after", 150.0)) == [
        "autocommit × 1 client: 100 → 150 commits/s: undecided: 3 rounds a side are too few "
        "to tell; measure longer"
    ]
    # The same settings twice, 28 % apart on a busy host: not -28 %, and not decided.
    noisy = gains(
        report("before", 3270.0, (3000.0, 3270.0, 4200.0, 3100.0, 3500.0)),
        report("after", 2357.0, (2357.0, 2900.0, 3100.0, 4000.0, 3300.0)),
    )
    assert len(noisy) == 1 and "undecided: the rounds spread too widely to tell" in noisy[0]
    assert gains(None, report("after", 1.0)) == []
    # A run whose clients set the pace says so: its change is not all the server's.
    after = report("after", 150.0)
    bound = CpuUse(1.0, 0.5, 0.95, 2, "target", True, "the host's CPUs were 95% busy")
    after = dataclasses.replace(after, results=(dataclasses.replace(after.results[0], cpu=bound),))
    assert gains(report("before", 100.0, five_before), after) == [
        "autocommit × 1 client: 100 → 150 commits/s: undecided: 3 rounds a side are too few "
        "to tell; measure longer (client-bound)"
    ]
    # An "after" that completed no transaction: too short to measure, never 0 or -100 %.
    empty = dataclasses.replace(
        after.results[0], commits=0, rows=0, commits_per_s=0.0, rounds=(0.0, 0.0, 0.0)
    )
    short = gains(report("before", 100.0), dataclasses.replace(after, results=(empty,)))
    assert short == [
        "autocommit × 1 client: 100 commits/s → too short to measure: unmeasured: the “after” "
        "run completed no transaction; no change claimed (client-bound)"
    ]


@pytest.mark.parametrize("said_by", ["job", "warnings"])
def test_done_counts_only_what_the_host_took(qtbot: QtBot, said_by: str) -> None:
    """A kernel setting the job found read-only is not counted as applied (issue 28).

    The facts are sid's as saved before InnoTune recorded what a host can take, so the plan
    still sets kernel settings and the job finds /proc/sys read-only. The job names what it
    did not apply; an older job said so only in its warnings.
    """
    from app.describe.actions import Host
    from app.describe.preview import build_preview
    from app.domain.facts import Capabilities
    from app.flows.apply import not_taken
    from app.jobs.runner import JobStatus

    sid = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7/facts.json"
    facts = HostFacts.from_json(sid.read_text())
    machine = dataclasses.replace(facts.os.machine, capabilities=Capabilities())
    facts = dataclasses.replace(facts, os=dataclasses.replace(facts.os, machine=machine))
    state = WizardState(target=parse_target("root@sid"), facts=facts)
    state.plan = make_plan(facts, default_positions(facts), default_catalogue())
    kernel = [c for c in state.plan.changes if c.target == "sysctl"]
    assert kernel, "the starting plan on sid sets kernel settings"
    preview = build_preview(state.plan, Host(facts))
    # From saved facts the option files cannot be read (a live preview reads them): keep
    # only the actions the job would run as they are.
    preview = dataclasses.replace(
        preview, actions=tuple(a for a in preview.actions if not a.unsupported)
    )
    # As the job words it when /proc/sys is read-only (a container's, the test hosts').
    said = {
        c.id: f"/proc/sys/{c.key.replace('.', '/')} is read-only (Read-only file system): "
        "not supported on this host"
        for c in kernel
    }
    status = JobStatus("j1", "applied", warnings=list(said.values()), snapshot_id="s1")
    if said_by == "job":
        status = JobStatus("j1", "applied", not_applied=said, snapshot_id="s1")
    state.not_taken = not_taken(preview, status)
    assert set(state.not_taken) == {c.id for c in kernel}
    state.snapshot_id = "s1"
    page = DonePage(state)
    qtbot.addWidget(page)
    page.initializePage()
    text = page.text.text()
    others = [c for c in state.plan.changes if c.target not in ("advice", "sysctl")]
    assert re.search(rf"\b{len(others)} changes? applied to", text), text
    assert f"{len(kernel)} change" in text and "this host did not take" in text
    assert "read-only" in text
    for c in kernel:  # each change with the warning of its own file
        assert state.not_taken[c.id].startswith(f"/proc/sys/{c.key.replace('.', '/')} ")


def test_done_sums_up_the_watches_before_and_after(qtbot: QtBot) -> None:
    """Watches recorded on sid (tests/fixtures/watch/SOURCE.md): trx_commit 1 → 2 between."""
    from app.domain.watch import Watch

    watches = Path(__file__).parents[1] / "fixtures/watch"
    facts = HostFacts.from_json(FACTS.read_text())
    state = WizardState(target=parse_target("root@sid"), facts=facts)
    state.watch_before = Watch.from_json((watches / "sid-trx1.json").read_text())
    page = DonePage(state)
    qtbot.addWidget(page)
    page.initializePage()
    assert "Watched on your server" not in page.text.text()  # no pair yet
    state.watch_after = Watch.from_json((watches / "sid-trx2.json").read_text())
    page.initializePage()
    text = page.text.text()
    assert "Watched on your server (its own workload)" in text
    assert re.search(r"InnoDB fsyncs per commit: [\d.]+ fsyncs → [\d.]+ fsyncs, better", text)
    assert "Traffic before: " in text and "commits/s" in text
    # A pair whose traffic differs says so instead of verdicts.
    state.watch_after = Watch.from_json((watches / "trixie-rate200.json").read_text())
    state.watch_before = Watch.from_json((watches / "trixie-rate100.json").read_text())
    page.initializePage()
    assert "No verdicts: the traffic changed too much" in page.text.text()


def test_the_apply_page_names_what_the_host_did_not_take() -> None:
    """The job's outcome counts the changes in force and names the others once."""
    from app.jobs.runner import JobStatus
    from app.ui.pages.apply_texts import outcome_lines

    why = (
        "/proc/sys/vm/dirty_ratio is read-only (Read-only file system): not supported on this host"
    )
    status = JobStatus(
        "j1",
        "applied",
        warnings=[why, "tuned is active"],
        changes=["innodb_buffer_pool_size", "vm.dirty_ratio"],
        not_applied={"vm.dirty_ratio": why},
    )
    lines = outcome_lines(status)
    assert lines[0] == "Job j1: applied 1 of 2 changes; not applied: vm.dirty_ratio."
    assert lines[1:] == [f"Not applied: vm.dirty_ratio: {why}", "Warning: tuned is active"]
    assert outcome_lines(JobStatus("j2", "applied"))[0] == "Job j2: applied."


def test_done_says_when_busy_cpus_paced_the_runs(qtbot: QtBot) -> None:
    """Runs whose server spent most of each commit waiting for a CPU: one sentence on Done."""
    from app.domain.bench import Counters, Latency, WorkloadResult

    def report(label: str, rate: float, wait: float) -> BenchReport:
        lat = Latency(p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
        n = int(rate * 10)
        rounds = tuple(rate * f for f in (0.98, 0.99, 1.0, 1.01, 1.02))
        cpu = CpuUse(0.05, 0.04, 1.0, 2, "target", server_wait=wait)
        result = WorkloadResult(
            "autocommit", 1, 10.0, n, n, rate, rate, lat, Counters(), cpu=cpu, rounds=rounds
        )
        return BenchReport("t", "now", "innotune", 10.0, (result,), label=label)

    facts = HostFacts.from_json(FACTS.read_text())
    state = WizardState(target=parse_target("practice"), facts=facts)
    state.plan = make_plan(facts, default_positions(facts), default_catalogue())
    state.snapshot_id = "20261130-120000-abcd"
    state.bench_before, state.bench_after = (
        report("before", 285.0, 0.94),
        report("after", 5000, 0.02),
    )
    page = DonePage(state)
    qtbot.addWidget(page)
    page.initializePage()
    text = page.text.text()
    assert "CPUs were busy: in one run the server spent much of each commit" in text
    state.bench_before = report("before", 4000.0, 0.02)
    page.initializePage()
    assert "CPUs were busy" not in page.text.text()
