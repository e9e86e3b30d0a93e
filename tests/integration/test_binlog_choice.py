"""The binary log's choice on the real servers (issue 26, item 6): off after the restart,
on again after the rollback. MySQL 9.7 (sid) has it on by default; on MariaDB 11.8 (trixie),
where it is off by default, the test turns it on with an option file of its own first, and
InnoTune names that file and line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.hosts.debian_hosts import DebianHost, LocalDebian
from tests.integration.test_lifecycle import (
    booted,
    innotune,
    job,
    ok,
    on_every_host,
    rollback_args,
    snapshot_of,
)

# Everything else as it is: only the binary log moves.
REST = (
    "--fit-disks",
    "off",
    "--fit-os",
    "off",
    "--memory-share",
    "keep",
    "--redo",
    "keep",
    "--myisam",
    "off",
    "--sample",
    "1",
)
ON_FILE = "etc/mysql/mariadb.conf.d/60-test-binlog.cnf"


def _restart(host: DebianHost) -> None:
    host.run("systemctl", "restart", host.service)
    host.wait_for_server()


def _plan(cli: object, target: list[str], *args: str) -> dict[str, object]:
    return json.loads(ok(cli("plan", *target, *REST, *args, "--json")))  # type: ignore[operator]


def test_the_binary_log_goes_off_and_comes_back(
    debian_hosts: dict[str, DebianHost], tmp_path: Path
) -> None:
    """On sid and trixie at once: each waits for its own server's restarts."""
    on_every_host(_off_and_back, booted(debian_hosts, "sid", "trixie"), tmp_path)


def _off_and_back(host: DebianHost, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    on_file = host.root / ON_FILE
    if host.flavour == "mariadb":
        assert host.sql("SELECT @@log_bin") == "0"
        plan = _plan(cli, target, "--binlog", "off")
        said = dict(plan["sentences"])["binlog"]  # type: ignore[call-overload]
        assert said == "The binary log is off (MariaDB's default); InnoTune never turns it on."
        assert not [c for c in plan["changes"] if c["key"] == "log_bin"]  # type: ignore[attr-defined]
        on_file.write_text("[mysqld]\n# the test's own\nlog-bin = mysql-bin\n")
        _restart(host)
    try:
        assert host.sql("SELECT @@log_bin") == "1"
        report = ok(cli("inspect", *target, "--sample", "0"))
        assert "binary log on" in report and "replicas registered 0" in report, report
        assert "connections reading it 0" in report and " kept, the oldest " in report, report
        kept = _plan(cli, target)
        said = dict(kept["sentences"])["binlog"]  # type: ignore[call-overload]
        assert said.startswith("The binary log stays on: "), said
        assert "no replica is connected" in said and "this server is not a replica" in said
        assert "no connection reads the binary log now" in said, said
        if host.flavour == "mariadb":
            assert f"line 3 of /{ON_FILE} turns it on (log-bin=mysql-bin)" in said, said
        else:
            assert "MySQL 8.0 and later turn it on by default" in said, said
        assert not [c for c in kept["changes"] if c["key"] == "log_bin"]  # type: ignore[attr-defined]
        off = _plan(cli, target, "--binlog", "off")
        [change] = [c for c in off["changes"] if c["key"] == "log_bin"]  # type: ignore[attr-defined]
        assert change["proposed"] == "OFF" and change["restart_needed"]

        preview = ok(cli("preview", *target, *REST, "--binlog", "off"))
        assert "+skip-log-bin" in preview, preview
        assert f"systemctl restart {host.service}" in preview, preview
        assert "log_bin:" not in preview, preview  # no warning that another line would win

        pid = host.main_pid()
        out = job(cli("apply", *target, *REST, "--binlog", "off", "--yes", "--watch", "3"))
        assert "end: applied" in out, out
        assert host.main_pid() != pid
        assert host.sql("SELECT @@log_bin") == "0"
        back = job(cli("rollback", *rollback_args(target, snapshot_of(out))))
        assert "end: rolled-back" in back, back
        assert host.sql("SELECT @@log_bin") == "1"
    finally:
        if on_file.exists():
            on_file.unlink()
            _restart(host)
    if host.flavour == "mariadb":
        assert host.sql("SELECT @@log_bin") == "0"


DUMPS = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"


@pytest.mark.parametrize("server_host", ["sid", "trixie"], indirect=True)
def test_a_reader_of_the_binary_log_keeps_it_on(
    server_host: DebianHost | LocalDebian, tmp_path: Path
) -> None:
    """A real reader (mysqlbinlog following the log, as a replica's dump thread does): the
    plan refuses to turn the binary log off and says why."""
    host = server_host
    assert isinstance(host, DebianHost)
    cli, target = innotune(host, tmp_path)
    on_file = host.root / ON_FILE
    reader = "mysqlbinlog"
    if host.flavour == "mariadb":
        on_file.write_text("[mysqld]\nlog-bin = mysql-bin\n")
        _restart(host)
        reader = "mariadb-binlog"
    pid = ""
    try:
        assert host.sql("SELECT @@log_bin") == "1"
        first = host.sql("SHOW BINARY LOGS").split()[0]
        pid = host.run(
            "sh",
            "-c",
            f"setsid {reader} --read-from-remote-server --stop-never --user=root "
            f"{first} >/dev/null 2>&1 & echo $!",
        ).strip()
        for _ in range(100):  # the reader connects in the background
            if host.sql(DUMPS) == "1":
                break
            time.sleep(0.1)
        assert host.sql(DUMPS) == "1"
        plan = _plan(cli, target, "--binlog", "off")
        said = dict(plan["sentences"])["binlog"]  # type: ignore[call-overload]
        assert said.startswith(
            "The binary log stays on: 1 connection reads it now, so it cannot go off."
        ), said
        assert not [c for c in plan["changes"] if c["key"] == "log_bin"]  # type: ignore[attr-defined]
        assert any("1 connection reads it now" in w for w in plan["warnings"])  # type: ignore[attr-defined]
    finally:
        if pid:
            host.run("kill", pid, check=False)
        if on_file.exists():
            on_file.unlink()
            _restart(host)
