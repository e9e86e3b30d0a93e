"""Preview is what Apply does (issue 26 item 5), with and without the restart, on the four
server lines: the SQL, the commands (the restart's included) and the plan's warnings."""

from __future__ import annotations

import dataclasses

import pytest

from app.describe.actions import Host
from app.describe.preview import build_preview, with_requested_restart
from app.domain.hostfacts import HostFacts
from app.jobs import runner
from app.jobs import snapshot as snap
from app.planner import default_positions, make_plan
from tests.unit.planner_truth import LINES, Line
from tests.unit.test_planner_matrix import CAT, facts_for, hosts
from tests.unit.test_restart_anyway import job_statements

FOUR = [x for x in LINES if x.version in ("10.5.27", "10.11.19", "11.8.2", "9.7.4")]


def _facts(line: Line) -> HostFacts:
    facts = facts_for(next(h for h in hosts() if h.name == "sata-ssd"), line)
    assert facts.server is not None
    service = "mariadb.service" if line.mariadb else "mysql.service"
    instance = dataclasses.replace(facts.server.instance, started_by="systemd", service=service)
    return dataclasses.replace(facts, server=dataclasses.replace(facts.server, instance=instance))


@pytest.mark.parametrize("restart", [False, True], ids=["no-restart", "restart-ticked"])
@pytest.mark.parametrize("line", FOUR, ids=[x.version for x in FOUR])
def test_preview_shows_the_statements_and_commands_the_job_runs(line: Line, restart: bool) -> None:
    facts = _facts(line)
    # The starting plan with the crash-loss slider moved: live changes and, on some lines,
    # changes that need the restart; the kernel and disks left out (no sysfs here).
    positions = dataclasses.replace(
        default_positions(facts), crash_loss="os", fit_disks=False, fit_os=False
    )
    plan = make_plan(facts, positions, CAT)
    preview = build_preview(plan, Host(facts))
    if restart:
        preview = with_requested_restart(preview, facts, plan)
    saved = snap.Snapshot("id", "now", "test", {}, (), ())
    bundle = runner.build_bundle(
        "id", saved, preview.actions, validate=None, expected={}, restart_anyway=restart
    )
    assert bundle.restart_needed == preview.will_restart
    # What the job runs (targetjob/job.py): when it restarts, no SET GLOBAL of a variable
    # the option files carry ("not set live, the restart applies them").
    held = set(bundle.persisted_keys) if bundle.restart_needed else set()
    assert list(preview.statements) == job_statements(bundle)
    assert set(preview.held_for_restart) == held
    ran = [tuple(c.argv) for c in bundle.commands]
    if bundle.restart_needed:
        assert facts.server is not None
        ran.append(tuple(facts.server.instance.restart_argv() or ()))
    assert [tuple(c.argv) for c in preview.commands] == ran
    text = preview.text()
    commands = text.split("== Commands, in order ==")[1].split("== Restart ==")[0]
    sql = text.split("== SQL ==")[1].split("== Commands, in order ==")[0]
    service = "mariadb.service" if line.mariadb else "mysql.service"
    if restart:
        assert f"systemctl restart {service}" in commands
        assert "SET GLOBAL innodb_flush_log_at_trx_commit" not in sql
        assert "not set live, the restart applies them from the option files" in sql
    elif not preview.restart_needed:
        assert "systemctl" not in commands
        assert "SET GLOBAL innodb_flush_log_at_trx_commit = 2" in sql
    warnings = text.split("== Warnings ==")[1]
    assert plan.warnings, "the plan at 'os' warns (binary log on, trx_commit 2)"
    for warning in plan.warnings:
        assert warning in warnings


@pytest.mark.parametrize("line", FOUR, ids=[x.version for x in FOUR])
def test_preview_spells_the_pool_as_trade_offs_does(line: Line) -> None:
    """The exact bytes the job writes, and beside them the figure of the slider's label."""
    from app.planner.slidertexts import note
    from app.planner.values import size_text

    facts = _facts(line)
    positions = dataclasses.replace(default_positions(facts), fit_disks=False, fit_os=False)
    plan = make_plan(facts, positions, CAT)
    change = plan.change("innodb_buffer_pool_size")
    assert change is not None
    figure = size_text(int(change.proposed))
    assert f" of RAM: {figure}" in note("memory", plan, facts)
    text = build_preview(plan, Host(facts)).text()
    assert f"innodb_buffer_pool_size: 134217728 (128 MiB) → {change.proposed} ({figure})" in text
