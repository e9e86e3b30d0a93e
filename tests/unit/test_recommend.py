"""The recommendation's few lines, from recorded facts of real hosts (app/flows/recommend.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from app.domain.hostfacts import HostFacts
from app.flows.planning import default_positions, plan_for
from app.flows.recommend import plan_key, recommend, server_name

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _facts(name: str) -> HostFacts:
    return HostFacts.from_json((HOSTS / name / "facts.json").read_text())


def test_mysql_97_live_changes_risk_nothing_and_read_in_mib_and_gib() -> None:
    facts = _facts("sid-mysql-9.7")
    plan = plan_for(facts, default_positions(facts))
    rec = recommend(facts, plan, "sid")
    assert rec.headline == "For sid (MySQL 9.7.4) InnoTune recommends 2 changes:"
    lines = [c.text() for c in rec.changes]
    assert any(
        line.startswith("Memory InnoDB uses to cache table and index pages")
        and "128 MiB → 17.4 GiB" in line
        for line in lines
    ), lines
    assert any("100 MiB → 1 GiB" in line and "no write rate was measured" in line for line in lines)
    assert not any(re.search(r"\d{7,}", line) for line in lines), lines  # never raw bytes
    assert rec.risk.startswith("Nothing: durability is kept")
    assert rec.restart == "No restart: every change applies while the server runs."


def test_a_restart_says_the_estimated_downtime_and_a_loss_says_what_a_crash_costs() -> None:
    facts = _facts("bullseye-mariadb-10.5")
    plan = plan_for(facts, default_positions(facts))
    rec = recommend(facts, plan, "bullseye")
    assert rec.restart.startswith("The server restarts for 1 change. Estimated downtime about ")
    assert rec.restart.endswith("; an estimate, not a measurement.")
    faster = plan_for(facts, dataclasses.replace(default_positions(facts), crash_loss="os"))
    risky = recommend(facts, faster, "bullseye")
    assert risky.risk.startswith("In a crash, nothing if only the server process crashes;")
    assert "if the OS crashes or power fails" in risky.risk
    assert any(c.what.endswith("(innodb_flush_log_at_trx_commit)") for c in risky.changes)


def test_consent_is_to_what_changes_and_the_name_says_which_server() -> None:
    facts = _facts("trixie-mariadb-11.8")
    plan = plan_for(facts, default_positions(facts))
    same = dataclasses.replace(plan, file_checksums=())
    assert plan_key(plan) == plan_key(same) and plan_key(plan)
    other = plan_for(facts, dataclasses.replace(default_positions(facts), crash_loss="os"))
    assert plan_key(other) != plan_key(plan)
    assert server_name(facts, "practice", "this computer") == "the practice server"
    assert server_name(facts, "ssh", "root@db1") == "root@db1"
