"""What the real Oracle MySQL 9.7 (Debian sid, systemd) showed, fixed and tested on it.

- A server started with ``--daemonize`` (Oracle's EL units did so): asking the binary about the
  options with the running command line forked a daemon ("[MY-010946] Failed to start mysqld
  daemon"); the preview and the job's validation now leave run-time-only options out.
- A value kept by ``SET PERSIST`` in mysqld-auto.cnf beats InnoTune's drop-in at the next start:
  it becomes part of the change (RESET PERSIST or SET PERSIST_ONLY, the user's choice), the
  file is snapshotted and a rollback puts it back byte for byte, proven across restarts.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.debian_hosts import DebianHost
from tests.integration.test_lifecycle import (
    OFF,
    TRX,
    innotune,
    job,
    ok,
    rollback_args,
    snapshot_of,
)

OVERRIDE = "/etc/systemd/system/mysql.service.d/daemonize.conf"
AUTO = "var/lib/mysql/mysqld-auto.cnf"


@pytest.fixture
def sid(debian_hosts: dict[str, DebianHost]) -> Iterator[DebianHost]:
    """The MySQL 9.7 host; its files must be as booted afterwards."""
    host = debian_hosts["sid"]
    yield host
    changed = host.differences()
    if changed:
        host.put_back()
    assert not changed, changed


def restart(host: DebianHost) -> None:
    host.run("systemctl", "daemon-reload")
    host.run("systemctl", "restart", "mysql.service", timeout=180)
    host.wait_for_server()


def main_argv(host: DebianHost) -> list[str]:
    pid = host.main_pid()
    return host.run("cat", f"/proc/{pid}/cmdline").split("\0")[:-1]


@pytest.fixture
def daemonized(sid: DebianHost) -> Iterator[DebianHost]:
    """mysqld started by its unit as ``mysqld --daemonize --pid-file=…`` (Type=forking)."""
    (sid.root / OVERRIDE.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    (sid.root / OVERRIDE.lstrip("/")).write_text(
        "[Service]\nType=forking\nPIDFile=/run/mysqld/mysqld.pid\nExecStart=\n"
        "ExecStart=/usr/sbin/mysqld --daemonize --pid-file=/run/mysqld/mysqld.pid\n"
    )
    try:
        restart(sid)
        assert "--daemonize" in main_argv(sid)
        yield sid
    finally:
        (sid.root / OVERRIDE.lstrip("/")).unlink()
        restart(sid)


def test_a_daemonized_server_is_checked_without_its_run_time_options(
    daemonized: DebianHost, tmp_path: Path
) -> None:
    """The daemonized server, with a value kept by SET PERSIST: its check leaves the run-time
    options out, and the persisted value is kept in step (SET PERSIST_ONLY; RESET PERSIST is
    the test below). One apply and rollback prove both: each restarts MySQL 9.7 twice."""
    host = daemonized
    # What the old check did, on this server: the binary forks instead of answering.
    done = subprocess.run(
        host.command(*main_argv(host), "--verbose", "--help"), capture_output=True, text=True
    )
    assert "MY-010946" in done.stderr
    out = _persisted_value_in_the_change(host, tmp_path, "persist")
    assert "validate: the server binary accepts the options" in out, out
    assert "--daemonize" in main_argv(host)  # restarted by its own unit, the same way


def test_a_persisted_value_becomes_part_of_the_change(sid: DebianHost, tmp_path: Path) -> None:
    """RESET PERSIST (the "persist" choice is the daemonized server's test above)."""
    _persisted_value_in_the_change(sid, tmp_path, "reset")


def _persisted_value_in_the_change(host: DebianHost, tmp_path: Path, choice: str) -> str:
    """SET PERSIST, then preview, apply with a restart and roll back with ``--persisted
    CHOICE``: the drop-in wins, mysqld-auto.cnf is back byte for byte. The apply's output."""
    host.sql(f"SET PERSIST {TRX} = 1")
    before = (host.root / AUTO).read_bytes()
    cli, target = innotune(host, tmp_path)
    args = ("--crash-loss", "os", *OFF, "--sample", "1", "--persisted", choice)
    try:
        preview = ok(cli("preview", *target, *args))
        wanted = (
            f"RESET PERSIST IF EXISTS {TRX};"
            if choice == "reset"
            else (f"SET PERSIST_ONLY {TRX} = 2;")
        )
        assert wanted in preview, preview
        assert "rejects the options" not in preview and f"+{TRX} = 2" in preview, preview
        assert "mysqld-auto.cnf" in preview and "which wins" not in preview, preview
        # A 2 s watch after the restart (innotune's own is 15 s): a crash shows at the start.
        out = job(cli("apply", *target, *args, "--yes", "--restart", "--watch", "2"))
        assert host.sql(f"SELECT @@{TRX}") == "2"  # after the restart: the drop-in won
        persisted = json.loads((host.root / AUTO).read_text()).get("mysql_dynamic_variables", {})
        if choice == "reset":
            assert TRX not in persisted
        else:
            assert persisted[TRX]["Value"] == "2"
        pid = host.main_pid()
        job(cli("rollback", *rollback_args(target, snapshot_of(out))))
        assert host.main_pid() != pid  # the apply restarted, so its rollback does too
        assert (host.root / AUTO).read_bytes() == before  # byte for byte
        assert host.sql(f"SELECT @@{TRX}") == "1"
        persisted_now = host.sql("SELECT * FROM performance_schema.persisted_variables")
        assert persisted_now == f"{TRX}	1"
        return out
    finally:
        host.sql("RESET PERSIST")
        (host.root / AUTO).unlink(missing_ok=True)  # the booted host had none
