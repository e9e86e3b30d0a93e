"""The catalogue against the live servers of the booted Debian hosts, not against itself.

For every knob the catalogue lists for the server's version: does it exist, is its default
the server's, is it dynamic (``SET GLOBAL`` to its own value), and are its range and allowed
values the server's. MariaDB answers in information_schema.SYSTEM_VARIABLES and
``mariadbd --verbose --help``; MySQL in performance_schema.variables_metadata and
``mysqld --verbose --help``. Any disagreement names the knob. (This machine's MariaDB 10.11
is checked the same way by test_catalogue_vs_server.py.)
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from app.domain.server import ServerVersion
from app.knobs import VersionFacts
from tests.hosts.debian_hosts import DebianHost
from tests.integration.test_catalogue_vs_server import (
    CAT,
    SERVER_KNOBS,
    _check_row,
    _expected_default,
    _help_variables,
    _rows,
    _same,
)

assert all(re.fullmatch(r"[a-z0-9_]+", n) for n in SERVER_KNOBS)  # safe to put in SQL


@pytest.fixture(params=["bullseye", "trixie", "sid"])
def live(request: pytest.FixtureRequest, debian_hosts: dict[str, DebianHost]) -> DebianHost:
    """One booted host with its packaged server."""
    return debian_hosts[request.param]


def version_of(host: DebianHost) -> ServerVersion:
    """The server's own answer."""
    version, comment = host.sql("SELECT VERSION(), @@version_comment").split("\t")
    return ServerVersion.parse(version, comment)


def knob_facts(host: DebianHost) -> dict[str, VersionFacts | None]:
    """What the catalogue says of every server knob for this server's version."""
    version = version_of(host)
    return {name: CAT.facts_for(name, version.flavour, version) for name in SERVER_KNOBS}


def mysql(host: DebianHost, sql: str) -> tuple[bool, str]:
    """Run SQL as root inside the host; (worked, output or error)."""
    done = subprocess.run(
        host.command("mysql", "-NBe", sql), capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0, (done.stdout if done.returncode == 0 else done.stderr).strip()


def test_the_catalogue_covers_each_live_line(live: DebianHost) -> None:
    version = version_of(live)
    assert version.flavour.value == live.flavour
    line, exact = CAT.line_for(version.flavour, version)
    assert exact, f"{version} is not one of the catalogue's lines (nearest: {line})"
    assert line == f"{live.flavour}-{live.server_line}"


def test_help_output_agrees(live: DebianHost) -> None:
    binary = "/usr/sbin/mysqld" if live.flavour == "mysql" else "/usr/sbin/mariadbd"
    text = live.run("runuser", "-u", "mysql", "--", binary, "--no-defaults", "--verbose", "--help")
    variables = _help_variables(text)
    problems = []
    for name, facts in knob_facts(live).items():
        if facts is None:
            if name in variables:
                problems.append(f"{name}: the server knows it, the catalogue says it does not")
        elif name not in variables:
            problems.append(f"{name}: the server does not know it, the catalogue says it does")
        elif not _same(_expected_default(facts), variables[name]):
            problems.append(
                f"{name}: catalogue default {_expected_default(facts)!r}, "
                f"--help prints {variables[name]!r}"
            )
    assert not problems, f"{live.name} ({version_of(live)}):\n" + "\n".join(problems)


def _mysql_metadata_problems(name: str, facts: VersionFacts, row: list[str]) -> list[str]:
    """variables_metadata: DATA_TYPE, MIN_VALUE, MAX_VALUE against the catalogue's range."""
    _, data_type, low, high = row
    where = f"{name} ({facts.line})"
    if data_type not in ("Integer", "Numeric") or not low:
        return []
    if facts.min is None or facts.max is None:
        return [f"{where}: server range {low}..{high}, catalogue states none"]
    stated = (facts.min, facts.max)
    if data_type == "Numeric":  # a double: the table shows its bounds cut to integers
        stated = (int(facts.min), int(facts.max))
    if float(low) != stated[0] or float(high) != pytest.approx(stated[1], rel=1e-12):
        return [f"{where}: range {facts.min}..{facts.max} vs {low}..{high}"]
    if facts.allowed is not None and set(facts.allowed) != set(range(int(low), int(high) + 1)):
        return [f"{where}: allowed {facts.allowed} vs {low}..{high}"]
    return []


def _compare(
    facts_by_name: dict[str, VersionFacts | None],
    rows: dict[str, Any],
    check: Callable[[str, VersionFacts, Any], list[str]],
) -> list[str]:
    """Existence both ways, then ``check`` on each knob both sides have."""
    problems = []
    for name, facts in facts_by_name.items():
        if facts is None:
            if name in rows:
                problems.append(f"{name}: the server has it, the catalogue says it does not")
        elif name not in rows:
            problems.append(f"{name}: the catalogue has it, the server does not")
        else:
            problems += check(name, facts, rows[name])
    return problems


def test_server_tables_agree(live: DebianHost) -> None:
    """Existence, dynamic-ness, range and values from the server's own tables."""
    facts_by_name = knob_facts(live)
    names = ", ".join(f"'{n}'" for n in SERVER_KNOBS)
    problems: list[str] = []
    if live.flavour == "mariadb":
        columns = (
            "VARIABLE_NAME, VARIABLE_TYPE, DEFAULT_VALUE, READ_ONLY, NUMERIC_MIN_VALUE, "
            "NUMERIC_MAX_VALUE, NUMERIC_BLOCK_SIZE, ENUM_VALUE_LIST"
        )
        sql = (
            f"SELECT {columns} FROM information_schema.SYSTEM_VARIABLES "  # noqa: S608
            f"WHERE LOWER(VARIABLE_NAME) IN ({names})"
        )
        done = subprocess.run(
            live.command("mysql", "-Be", sql), capture_output=True, text=True, check=True
        )
        problems = _compare(facts_by_name, _rows(done.stdout.strip()), _check_row)
    else:
        sql = (
            "SELECT VARIABLE_NAME, DATA_TYPE, MIN_VALUE, MAX_VALUE "  # noqa: S608
            f"FROM performance_schema.variables_metadata WHERE VARIABLE_NAME IN ({names})"
        )
        ok, out = mysql(live, sql)
        assert ok, out
        meta = {ln.split("\t")[0]: ln.split("\t") for ln in out.splitlines()}
        problems = _compare(facts_by_name, meta, _mysql_metadata_problems)
    assert not problems, f"{live.name} ({version_of(live)}):\n" + "\n".join(problems)


def test_dynamic_knobs_take_set_global_and_their_allowed_values(live: DebianHost) -> None:
    """SET GLOBAL to its own value proves dynamic-ness; each allowed word is taken, then undone."""
    problems = []
    for name, facts in knob_facts(live).items():
        if facts is None:
            continue
        worked, said = mysql(live, f"SET GLOBAL {name} = @@GLOBAL.{name}")
        if not worked and "read only" not in said.lower():
            problems.append(f"{name}: SET GLOBAL to its own value failed: {said}")
            continue
        if worked is not facts.dynamic:
            problems.append(
                f"{name}: catalogue dynamic={facts.dynamic}, SET GLOBAL worked={worked}"
            )
            continue
        words = [v for v in facts.allowed or () if isinstance(v, str)]
        if not (worked and words):
            continue
        _, before = mysql(live, f"SELECT @@GLOBAL.{name}")
        for word in words:
            taken, said = mysql(live, f"SET GLOBAL {name} = '{word}'")
            if word in facts.restart_values and taken:
                problems.append(f"{name}: the catalogue says {word!r} needs a restart, it was set")
            elif word not in facts.restart_values and not taken:
                problems.append(f"{name}: the catalogue allows {word!r}, the server says: {said}")
        mysql(live, f"SET GLOBAL {name} = '{before}'")
    assert not problems, f"{live.name} ({version_of(live)}):\n" + "\n".join(problems)
