"""The planner's shortcuts (its own serialiser, indexes and caches) answer as the long ways do.

The Trade-offs page plans on every slider move, so the planner keeps a few answers instead of
working them out again; each shortcut here is checked against the plain computation it
replaces, on every recorded host profile and facts fixture.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from app.domain.facts import to_jsonable
from app.domain.hostfacts import HostFacts
from app.domain.serverfacts import Variable
from app.knobs import default_catalogue
from app.planner import default_positions, facts_checksum, make_plan
from app.planner.context import Ctx, server_variable
from tests.unit.planner_profiles import PROFILES

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "hosts").glob("*/facts.json"))
CAT = default_catalogue()


def _all_facts() -> list[tuple[str, HostFacts]]:
    found = [(name, p.facts) for name, p in PROFILES.items()]
    found += [(path.parent.name, HostFacts.from_json(path.read_text())) for path in FIXTURES]
    assert len(found) > len(PROFILES)  # the recorded whole-host fixtures are there too
    return found


def test_checksum_is_the_sha256_of_the_facts_json() -> None:
    for name, facts in _all_facts():
        compact = json.dumps(to_jsonable(facts), separators=(",", ":"))
        assert facts_checksum(facts) == hashlib.sha256(compact.encode()).hexdigest(), name


def test_variable_index_answers_as_the_server_does() -> None:
    for name, facts in _all_facts():
        server = facts.server
        assert server is not None
        for var in server.variables:
            assert server_variable(server, var.name) == server.variable(var.name), name
        assert server_variable(server, "no_such_variable") is None


def test_variable_index_keeps_the_first_of_a_repeated_name() -> None:
    facts = PROFILES["practice-mariadb1011"].facts
    assert facts.server is not None
    twice = (Variable("innodb_io_capacity", "111"), Variable("innodb_io_capacity", "222"))
    server = dataclasses.replace(facts.server, variables=twice + facts.server.variables)
    assert server_variable(server, "innodb_io_capacity") == server.variable("innodb_io_capacity")
    assert server_variable(server, "innodb_io_capacity") == "111"


def test_catalogue_answers_follow_the_server_version() -> None:
    """Planning for one version, then another, then the first: never a stale answer."""
    names = [k.name for k in CAT.knobs if k.is_server_variable]
    for name in (
        "mysql57-perc-raid-hdd",
        "mariadb114-zfs-nvme",
        "mysql57-perc-raid-hdd",
        "mysql84-nvme",
    ):
        facts = PROFILES[name].facts
        ctx = Ctx.of(facts, default_positions(facts), CAT)
        for knob in names:
            assert ctx.facts_for(knob) == CAT.facts_for(knob, ctx.version.family, ctx.version)


def test_plans_do_not_depend_on_what_was_planned_before() -> None:
    profiles = ["mysql80-sata-ssd", "practice-mariadb1011", "mysql80-sata-ssd"]
    plans = [
        make_plan(PROFILES[n].facts, default_positions(PROFILES[n].facts), CAT) for n in profiles
    ]
    again = make_plan(PROFILES["mysql80-sata-ssd"].facts, plans[0].positions, CAT)
    assert plans[0] == plans[2] == again
