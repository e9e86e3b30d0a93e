"""The truth table's MariaDB 10.11 line, asked again of the live server here.

tests/unit/planner_truth.py writes down what the sources say; for the line that runs on this
machine the server itself is the source ([LIVE-1011]), so a drift fails here.
"""

from __future__ import annotations

import subprocess

from app.practice.server import PrivateServer
from tests.hosts.debian_hosts import DebianHost
from tests.unit.planner_truth import LINES, PLANNED


def _rows(server: PrivateServer) -> dict[str, tuple[str, str]]:
    out = server.query(
        "SELECT LOWER(VARIABLE_NAME), READ_ONLY, COALESCE(NUMERIC_MIN_VALUE, '') "
        "FROM information_schema.SYSTEM_VARIABLES"
    )
    rows = [line.split("\t") for line in out.splitlines()[1:] if line.strip()]
    return {name: (ro, low) for name, ro, low in rows if name in PLANNED}


def test_the_1011_line_is_what_the_live_server_says(private_server: PrivateServer) -> None:
    version = private_server.query("SELECT VERSION()").splitlines()[-1]
    assert version.startswith("10.11."), version
    line = next(x for x in LINES if x.version.startswith("10.11."))
    rows = _rows(private_server)
    assert set(PLANNED) - set(rows) == set(line.absent & set(PLANNED))
    assert {n for n, (ro, _) in rows.items() if ro == "YES"} == set(line.restart)
    for name, low in line.minimum.items():
        if name in rows and rows[name][1]:
            assert int(rows[name][1]) == low, name


def test_obsolete_options_are_what_the_live_binary_calls_removed(
    private_server: PrivateServer,
) -> None:
    line = next(x for x in LINES if x.version.startswith("10.11."))
    for name in sorted(line.obsolete):
        out = subprocess.run(
            [
                private_server.binaries.server,
                "--no-defaults",
                f"--{name.replace('_', '-')}=2",
                "--verbose",
                "--help",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert "was removed. It does nothing now" in out.stderr, name
    # Deprecated is not obsolete: innodb_change_buffering still takes a value on 10.11.
    out = private_server.query(
        "SET GLOBAL innodb_change_buffering = 'all'; SHOW WARNINGS; "
        "SELECT @@GLOBAL.innodb_change_buffering; SET GLOBAL innodb_change_buffering = 'none'"
    )
    assert "1287" in out and "all" in out.splitlines()[-1]
    assert "innodb_change_buffering" not in line.obsolete


def test_the_97_line_is_what_the_live_mysql_says(debian_hosts: dict[str, DebianHost]) -> None:
    """[LIVE-97]: the sid host's MySQL 9.7, asked the same questions through its client."""
    sid = debian_hosts["sid"]
    assert sid.sql("SELECT VERSION()").startswith("9.7."), "the sid host runs another server"
    line = next(x for x in LINES if x.version.startswith("9.7."))
    read_only, absent = set(), set()
    for name in sorted(PLANNED):
        done = subprocess.run(
            sid.command("mysql", "-NBe", f"SET GLOBAL {name} = @@GLOBAL.{name}"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if "Unknown system variable" in done.stderr:
            absent.add(name)
        elif "read only" in done.stderr:
            read_only.add(name)
        else:
            assert done.returncode == 0, done.stderr
    # Dynamic, but the planner only ever turns it OFF (or back ON from OFF): refused live.
    off = subprocess.run(
        sid.command("mysql", "-NBe", "SET GLOBAL innodb_doublewrite = 'OFF'"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert off.returncode != 0 and "cannot change doublewrite mode to OFF" in off.stderr
    read_only.add("innodb_doublewrite")
    assert absent == set(line.absent & set(PLANNED))
    assert read_only == set(line.restart)
    high = sid.sql(
        "SELECT MAX_VALUE FROM performance_schema.variables_metadata "
        "WHERE VARIABLE_NAME = 'innodb_redo_log_capacity'"
    )
    assert int(high) == line.maximum["innodb_redo_log_capacity"]
