"""The binary log is a choice with its price (issue 26, item 6): kept by default, never off
while replicas or readers use it, and off as ``skip-log-bin`` in the option file."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.hostfacts import HostFacts
from app.domain.plan import SliderPositions
from app.domain.serverfacts import BinlogUse, OptionLine, Variable
from app.export.model import ExportError, digest
from app.knobs import default_catalogue
from app.optionfiles import parse, render, set_server_option
from app.planner import default_positions, make_plan
from app.planner.binlog import binlog_found, binlog_lock, binlog_where
from tests.unit.planner_truth import LINES
from tests.unit.test_planner_matrix import facts_for, hosts

CAT = default_catalogue()


def _facts(version: str, **server: object) -> HostFacts:
    line = next(x for x in LINES if x.version.startswith(version))
    facts = facts_for(next(h for h in hosts() if h.name == "sata-ssd"), line)
    assert facts.server is not None
    return dataclasses.replace(facts, server=dataclasses.replace(facts.server, **server))


def _plan(facts: HostFacts, **moved: object):  # type: ignore[no-untyped-def]
    start = default_positions(facts)
    return make_plan(facts, dataclasses.replace(start, **moved), CAT)


NOBODY = BinlogUse(replica_hosts=0, dump_threads=0, logs=3, first_log="binlog.000004")


def test_kept_by_default_and_the_sentence_says_what_was_found() -> None:
    facts = _facts("9.7", binlog_enabled=True, binlog_use=NOBODY, replicas_connected=0)
    assert SliderPositions().binlog is True and default_positions(facts).binlog is True
    plan = _plan(facts)
    assert plan.change("log_bin") is None
    said = dict(plan.sentences)["binlog"]
    assert said.startswith("The binary log stays on: MySQL 8.0 and later turn it on by default")
    assert "no replica is connected" in said and "no connection reads the binary log now" in said
    assert "older ones were purged" in said  # the oldest kept is number 4
    assert "replicas, point-in-time recovery and some backup tools" in said


@pytest.mark.parametrize(
    ("use", "connected", "why"),
    [
        (BinlogUse(replica_hosts=2, dump_threads=0), 0, "2 replicas are connected"),
        (BinlogUse(replica_hosts=0, dump_threads=0), 1, "1 replica is connected"),
        (BinlogUse(replica_hosts=0, dump_threads=1), 0, "1 connection reads it now"),
    ],
)
def test_never_off_with_replicas_or_readers(use: BinlogUse, connected: int, why: str) -> None:
    facts = _facts("9.7", binlog_enabled=True, binlog_use=use, replicas_connected=connected)
    assert facts.server is not None and binlog_lock(facts.server) == why
    plan = _plan(facts, binlog=False)
    assert plan.change("log_bin") is None
    assert dict(plan.sentences)["binlog"].startswith(f"The binary log stays on: {why}")
    assert any(why in w for w in plan.warnings)


def test_off_on_mysql_is_a_restart_change_written_as_skip_log_bin() -> None:
    facts = _facts("9.7", binlog_enabled=True, binlog_use=NOBODY, replicas_connected=0)
    plan = _plan(facts, binlog=False)
    change = plan.change("log_bin")
    assert change is not None
    assert (change.target, change.current, change.proposed) == ("option_file", "ON", "OFF")
    assert change.restart_needed and not change.live and plan.restart_needed
    assert "3,795" in change.reason and "2,463" in change.reason  # the measured price
    # sync_binlog no longer matters, so it is not forced to 1 and no binlog warning stays.
    assert plan.change("sync_binlog") is None
    assert not any("binary log is on" in w for w in plan.warnings)
    # The export refuses it (each host's readers would need checking), saying how to go on.
    with pytest.raises(ExportError, match="--reject log_bin"):
        digest(plan)


def test_off_on_mariadb_names_where_it_was_turned_on_and_beats_that_line() -> None:
    line = OptionLine(
        "log_bin", "mysql-bin", "/etc/mysql/mariadb.conf.d/60-binlog.cnf", 2, "log-bin=mysql-bin"
    )
    facts = _facts(
        "11.8",
        binlog_enabled=True,
        binlog_use=NOBODY,
        replicas_connected=0,
        option_lines=(line,),
    )
    assert facts.server is not None
    assert binlog_where(facts.server) == (
        "line 2 of /etc/mysql/mariadb.conf.d/60-binlog.cnf turns it on (log-bin=mysql-bin)"
    )
    kept = dict(_plan(facts).sentences)["binlog"]
    assert "line 2 of /etc/mysql/mariadb.conf.d/60-binlog.cnf turns it on" in kept
    change = _plan(facts, binlog=False).change("log_bin")
    assert change is not None and change.proposed == "OFF" and change.restart_needed
    # In a file that itself turns it on, the line goes and skip-log-bin follows (rewriting
    # "log-bin=mysql-bin" in place as a bare "log-bin" would turn it on).
    edited = set_server_option(
        parse(b"[mysqld]\nlog-bin=mysql-bin\n", "/x.cnf"), "mysqld", "log_bin", "OFF"
    )
    assert render(edited) == b"[mysqld]\nskip-log-bin\n"


def test_off_already_is_locked_and_never_turned_on() -> None:
    facts = _facts("11.8", binlog_enabled=False, binlog_use=BinlogUse(0, 0))
    assert facts.server is not None
    assert binlog_lock(facts.server) == "the binary log is off already"
    for keep in (True, False):
        plan = _plan(facts, binlog=keep)
        assert plan.change("log_bin") is None
        assert dict(plan.sentences)["binlog"] == (
            "The binary log is off (MariaDB's default); InnoTune never turns it on."
        )


def test_gtids_and_expiry_are_named() -> None:
    facts = _facts("9.7", binlog_enabled=True, binlog_use=NOBODY, replicas_connected=0)
    assert facts.server is not None
    variables = tuple(
        v
        for v in facts.server.variables
        if v.name not in ("gtid_mode", "binlog_expire_logs_seconds")
    ) + (Variable("gtid_mode", "ON"), Variable("binlog_expire_logs_seconds", "2592000"))
    server = dataclasses.replace(facts.server, variables=variables, replica=True)
    found = binlog_found(server)
    assert "GTIDs are on (ON)" in found
    assert "binary logs are purged after 30 days" in found
    assert "this server is itself a replica of another server" in found
