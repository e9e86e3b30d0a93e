"""The catalogue's version facts against real server output, not against the catalogue itself.

MariaDB: the server installed here (`mariadbd --no-defaults --verbose --help` and
information_schema.SYSTEM_VARIABLES of a private instance). MySQL: the upstream test
results recorded in tests/fixtures/hosts/mysql-*/ (see their SOURCE.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from app.domain.server import Flavour, ServerVersion
from app.knobs import VersionFacts, default_catalogue
from app.practice.binaries import find_binaries
from app.practice.server import PrivateServer, ServerError
from tests.hosts.util import need

CAT = default_catalogue()
SERVER_KNOBS = [k.name for k in CAT.knobs if k.is_server_variable]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


def _mariadbd() -> tuple[str, ServerVersion]:
    bins = find_binaries()
    need(bins is not None and bins.flavour == "mariadb", "no MariaDB server program installed")
    assert bins is not None
    return bins.server, ServerVersion.parse(
        bins.version, "MariaDB" if "ariadb" in bins.version else ""
    )


def _help_variables(text: str) -> dict[str, str]:
    """The `Variables (--variable-name=value)` section as {underscore_name: value}."""
    _, found, tail = text.partition("Variables (--variable-name=value)")
    assert found, "no Variables section in the --help output"
    result = {}
    for line in tail.splitlines():
        if not line.strip():
            if result:
                break
            continue
        name, _, value = line.partition(" ")
        result[name.replace("-", "_")] = value.strip()
    return result


@pytest.fixture(scope="module")
def local_help() -> tuple[ServerVersion, dict[str, str]]:
    server, version = _mariadbd()
    proc = subprocess.run(
        [server, "--no-defaults", "--verbose", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return version, _help_variables(proc.stdout)


def _same(expected: object, reported: str) -> bool:
    """Does the server's text say the catalogue's value (ON/TRUE/1 for true, 90.000000 = 90.0)?"""
    if isinstance(expected, bool):
        return reported.upper() in (("ON", "TRUE", "1") if expected else ("OFF", "FALSE", "0"))
    if isinstance(expected, float):
        return float(reported) == pytest.approx(expected)
    if isinstance(expected, int):
        return reported.isdigit() and int(reported) == expected
    if expected == "(No default value)" and reported == "NULL":  # the table's word for it
        return True
    if expected in ("ON", "OFF") and reported.upper() in ("TRUE", "FALSE"):
        return (expected == "ON") == (reported.upper() == "TRUE")
    return str(expected) == reported


def _expected_default(facts: VersionFacts) -> object:
    return facts.help_default if facts.help_default is not None else facts.default


# -- MariaDB: mariadbd --verbose --help ------------------------------------------------------


@pytest.mark.parametrize("name", SERVER_KNOBS)
def test_help_output_agrees(name: str, local_help: tuple[ServerVersion, dict[str, str]]) -> None:
    version, variables = local_help
    facts = CAT.facts_for(name, Flavour.MARIADB, version)
    if facts is None:
        assert name not in variables, f"{version} knows {name}, the catalogue says it does not"
        return
    assert name in variables, f"{version} does not know {name}, the catalogue says it does"
    assert _same(_expected_default(facts), variables[name]), (
        f"{name} on {version}: catalogue default {_expected_default(facts)!r}, "
        f"--help prints {variables[name]!r}"
    )


# -- MariaDB: information_schema.SYSTEM_VARIABLES ---------------------------------------------


def _rows(output: str) -> dict[str, dict[str, str]]:
    lines = output.splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    return {row["VARIABLE_NAME"].lower(): row for row in rows}


def _check_row(name: str, facts: VersionFacts, row: dict[str, str]) -> list[str]:
    problems = []
    where = f"{name} ({facts.line})"
    if not _same(_expected_default(facts), row["DEFAULT_VALUE"]):
        problems.append(f"{where}: default {_expected_default(facts)!r} vs {row['DEFAULT_VALUE']}")
    if (row["READ_ONLY"] == "YES") is facts.dynamic:
        problems.append(f"{where}: dynamic={facts.dynamic} but READ_ONLY={row['READ_ONLY']}")
    low, high = row["NUMERIC_MIN_VALUE"], row["NUMERIC_MAX_VALUE"]
    if row["VARIABLE_TYPE"] not in ("BOOLEAN", "ENUM", "VARCHAR") and low != "NULL":
        if facts.min is None or facts.max is None:
            problems.append(f"{where}: server range {low}..{high}, catalogue states none")
        elif float(low) != facts.min or float(high) != pytest.approx(facts.max, rel=1e-12):
            problems.append(f"{where}: range {facts.min}..{facts.max} vs {low}..{high}")
        elif facts.allowed is not None and set(facts.allowed) != set(
            range(int(low), int(high) + 1)
        ):
            problems.append(f"{where}: allowed {facts.allowed} vs {low}..{high}")
    if row["ENUM_VALUE_LIST"] != "NULL" and facts.allowed is not None:
        if set(row["ENUM_VALUE_LIST"].split(",")) != {str(v) for v in facts.allowed}:
            problems.append(f"{where}: allowed {facts.allowed} vs {row['ENUM_VALUE_LIST']}")
    block = row["NUMERIC_BLOCK_SIZE"]
    if block not in ("NULL", "0", "1") and facts.block != int(block):
        problems.append(f"{where}: block {facts.block} vs NUMERIC_BLOCK_SIZE {block}")
    return problems


def test_system_variables_agree(private_server: PrivateServer) -> None:
    """Existence, default, dynamic-ness, range and values of every server knob, from the server."""
    version = ServerVersion.parse(private_server.query("SELECT VERSION()").splitlines()[1])
    assert version.flavour is Flavour.MARIADB
    assert all(re.fullmatch(r"[a-z0-9_]+", n) for n in SERVER_KNOBS)  # safe to put in SQL
    names = ", ".join(f"'{n.upper()}'" for n in SERVER_KNOBS)
    columns = (
        "VARIABLE_NAME, VARIABLE_TYPE, DEFAULT_VALUE, READ_ONLY, NUMERIC_MIN_VALUE, "
        "NUMERIC_MAX_VALUE, NUMERIC_BLOCK_SIZE, ENUM_VALUE_LIST"
    )
    table = "information_schema.SYSTEM_VARIABLES"
    sql = f"SELECT {columns} FROM {table} WHERE VARIABLE_NAME IN ({names})"  # noqa: S608
    rows = _rows(private_server.query(sql))
    problems: list[str] = []
    checked = absent = 0
    for name in SERVER_KNOBS:
        facts = CAT.facts_for(name, Flavour.MARIADB, version)
        if facts is None:
            absent += 1
            if name in rows:
                problems.append(f"{name}: the catalogue says {version} lacks it, the server has it")
            continue
        if name not in rows:
            problems.append(f"{name}: the catalogue has it for {version}, the server does not")
            continue
        checked += 1
        problems += _check_row(name, facts, rows[name])
    assert not problems, "\n".join(problems)
    # Sanity: the comparison really covered both sides.
    assert checked >= 20 and absent >= 5


def test_knobs_marked_dynamic_really_take_set_global(private_server: PrivateServer) -> None:
    """READ_ONLY is the server's claim; SET GLOBAL to the current value proves it."""
    version = ServerVersion.parse(private_server.query("SELECT VERSION()").splitlines()[1])
    refused = []
    for name in SERVER_KNOBS:
        facts = CAT.facts_for(name, Flavour.MARIADB, version)
        if facts is None:
            continue
        try:
            private_server.query(f"SET GLOBAL {name} = @@GLOBAL.{name}")
            works = True
        except ServerError as exc:
            works = False
            assert "read only" in str(exc).lower() or "read-only" in str(exc).lower(), str(exc)
        if works is not facts.dynamic:
            refused.append(f"{name}: catalogue dynamic={facts.dynamic}, SET GLOBAL worked={works}")
    assert not refused, "\n".join(refused)


# -- MySQL: recorded upstream test results ------------------------------------------------------


def _fixture(dirname: str) -> tuple[ServerVersion, dict[str, str]]:
    base = FIXTURES / dirname
    source = (base / "SOURCE.md").read_text()
    match = re.search(r"^Version: (\S+)$", source, re.MULTILINE)
    assert match, f"{base}/SOURCE.md names no Version"
    return ServerVersion.of("mysql", match.group(1)), _help_variables(
        (base / "mysqld--help.txt").read_text()
    )


MYSQL_FIXTURES = sorted(
    p.name for p in FIXTURES.glob("mysql-*") if (p / "mysqld--help.txt").exists()
)


@pytest.mark.parametrize("dirname", MYSQL_FIXTURES)
def test_mysql_help_fixture_agrees(dirname: str) -> None:
    """Defaults and existence of the non-InnoDB server knobs (InnoDB is a plugin the test omits)."""
    version, variables = _fixture(dirname)
    # The excerpt is complete for these prefixes (SOURCE.md), so absence there means absence.
    complete = ("binlog_", "key_", "max_", "sync_")
    compared = 0
    for name in SERVER_KNOBS:
        if not name.startswith(complete):
            continue
        facts = CAT.facts_for(name, Flavour.MYSQL, version)
        if facts is None:
            assert name not in variables, f"MySQL {version} knows {name}; the catalogue says not"
            continue
        assert name in variables, f"MySQL {version} lacks {name}; the catalogue says it has it"
        assert _same(facts.default, variables[name]), (
            f"{name} on MySQL {version}: catalogue {facts.default!r}, upstream {variables[name]!r}"
        )
        compared += 1
    assert compared >= 3  # sync_binlog, binlog_group_commit_sync_delay, key_buffer_size


def test_mysql_fixtures_cover_every_mysql_line() -> None:
    """5.7, 8.0 and 8.4 each have recorded output, and each file is the line it claims to be."""
    assert MYSQL_FIXTURES == ["mysql-5.7", "mysql-8.0", "mysql-8.4"]
    for dirname in MYSQL_FIXTURES:
        version, _ = _fixture(dirname)
        assert f"{version.major}.{version.minor}" == dirname.removeprefix("mysql-")
    # binlog_transaction_dependency_tracking came in 5.7.22 and went away in 8.4.0.
    _, v80 = _fixture("mysql-8.0")
    _, v84 = _fixture("mysql-8.4")
    assert "binlog_transaction_dependency_tracking" in v80
    assert "binlog_transaction_dependency_tracking" not in v84
    assert v84["mysql_native_password"] == "OFF"  # 8.4 ships the plugin disabled; 9.0 removed it
    assert v84["restrict_fk_on_non_standard_key"] == "TRUE"  # new in 8.4.0
