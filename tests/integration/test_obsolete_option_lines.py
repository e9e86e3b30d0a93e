"""Option lines the server no longer reads are removed: planned, previewed, applied, rolled back.

A private MariaDB 10.11 gets an option file carried over from an older server, with
innodb_buffer_pool_instances and innodb-log-files-in-group, which 10.11 removed (its own
words at every start: "'innodb-buffer-pool-instances' was removed. It does nothing now and
exists only for compatibility with old my.cnf files"). The inspection finds the lines, the
plan removes them, the preview shows the diff, the real apply job takes them out (no restart),
the binary stops warning, and the rollback puts the file back byte for byte.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from pathlib import Path

from app.describe import optionfile, preview
from app.jobs import runner
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.report import plan_text
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    _remove_new_jobs_and_snapshots,
    facts_for,
    host_for,
    run_job,
)

OLD = (
    "# carried over from a MariaDB 10.4 host\n"
    "[mysqld]\n"
    "innodb_buffer_pool_instances = 4\n"
    "key_buffer_size = 16M   # kept\n"
    "innodb-log-files-in-group=2\n"
)


def _removed_warnings(server: PrivateServer) -> list[str]:
    """What the server binary says about removed options when it reads these files."""
    out = subprocess.run(
        [server.binaries.server, f"--defaults-file={server.main_cnf}", "--verbose", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return [line for line in out.stderr.splitlines() if "was removed" in line]


def test_removed_options_are_taken_out_of_the_option_file_and_put_back(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    old = server.include_dir / "40-old.cnf"
    old.write_text(OLD)
    server.restart()
    assert len(_removed_warnings(server)) == 2  # the live 10.11 says so itself
    original = hashlib.sha256(old.read_bytes()).hexdigest()

    facts = facts_for(local, str(server.socket_path))
    assert facts.server is not None
    found = {(o.name, o.line) for o in facts.server.option_lines if o.file == str(old)}
    assert {("innodb_buffer_pool_instances", 3), ("innodb_log_files_in_group", 5)} <= found

    positions = dataclasses.replace(default_positions(facts), fit_disks=False, fit_os=False)
    cat = default_catalogue()
    plan = make_plan(facts, positions, cat)
    removals = [c for c in plan.changes if c.target == "option_remove"]
    assert sorted(c.key for c in removals) == [
        "innodb_buffer_pool_instances",
        "innodb_log_files_in_group",
    ]
    assert all(c.path == str(old) and not c.restart_needed for c in removals)
    text = plan_text(plan, cat)
    assert f"removes the line from {old}" in text

    host = host_for(local, facts, str(server.socket_path))
    try:
        action = optionfile.describe(removals, host)[0]
        shown = preview.describe_actions(
            dataclasses.replace(plan, changes=tuple(removals)), host, []
        )
    finally:
        host.session.close()
    assert action.unsupported == () and not action.restart_needed
    (write,) = action.files
    assert write.path == str(old)
    assert write.after == (
        b"# carried over from a MariaDB 10.4 host\n[mysqld]\nkey_buffer_size = 16M   # kept\n"
    )
    diffs = [f for a in shown for f in a.files]
    assert [f.path for f in diffs] == [str(old)]

    pid = server.running_pid()
    status = run_job(local, facts, [action], tmp_path)
    assert status.state == "applied", status.errors
    assert not status.restarted and server.running_pid() == pid
    assert old.read_bytes() == write.after
    assert _removed_warnings(server) == []  # the binary reads the files without a warning

    back = runner.rollback(local, status.snapshot_id or "")
    assert back.state == "rolled-back", back.errors
    assert hashlib.sha256(old.read_bytes()).hexdigest() == original
    assert old.read_text() == OLD


def test_a_removal_beside_a_setting_edits_both_files_in_one_action(
    local: LocalTransport, private_server: PrivateServer
) -> None:
    """The drop-in gets the setting, the old file loses its line; one preview, two diffs."""
    server = private_server
    old = server.include_dir / "40-old.cnf"
    old.write_text(OLD)
    facts = facts_for(local, str(server.socket_path))
    positions = dataclasses.replace(default_positions(facts), fit_disks=False, fit_os=False)
    plan = make_plan(facts, positions, default_catalogue())
    removals = [c for c in plan.changes if c.target == "option_remove"]
    setting = dataclasses.replace(
        removals[0],
        id="innodb_io_capacity",
        target="dynamic",
        key="innodb_io_capacity",
        current="200",
        proposed="400",
        live=True,
        path=None,
    )
    host = host_for(local, facts, str(server.socket_path))
    try:
        action = optionfile.describe([setting, *removals], host)[0]
    finally:
        host.session.close()
    assert action.unsupported == ()
    written = {f.path: f.after for f in action.files}
    assert written[str(old)] == (
        b"# carried over from a MariaDB 10.4 host\n[mysqld]\nkey_buffer_size = 16M   # kept\n"
    )
    drop_in = next(p for p in written if p != str(old))
    assert b"innodb_io_capacity = 400" in written[drop_in]
    assert set(action.change_ids) == {"innodb_io_capacity", *(c.id for c in removals)}
    assert not action.warnings, action.warnings
