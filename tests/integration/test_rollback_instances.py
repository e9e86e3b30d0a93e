"""Rollback restores the snapshot the user means: two server instances on one host.

The Debian MariaDB (its /etc/mysql, init script) and a private server (its own
--defaults-file and datadir) run side by side on this machine; `innotune` is run as a
user runs it, against `local`. Every snapshot records its instance and state; a rollback
with --instance touches that instance only, says when nothing is in force, and restoring
an older snapshot undoes the newer ones byte for byte.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from app.jobs import history, runner
from app.jobs import snapshot as snap
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from app.targetjob import records as job_records
from tests.hosts.debian_mariadb import DebianMariaDB, record_tree, tree_digest
from tests.hosts.util import need_root
from tests.integration.conftest import Cli
from tests.integration.test_apply import (  # noqa: F401 - the autouse fixture cleans up
    _remove_new_jobs_and_snapshots,
    remove_jobs_and_snapshots,
    tree,
    variable,
)

TRX = "innodb_flush_log_at_trx_commit"
# Live changes and one drop-in; the OS and the disks are left alone (shared machine).
QUIET = ["--sample", "0", "--fit-os", "off", "--fit-disks", "off", "--watch", "1", "--yes"]
QUIET += ["--memory-share", "keep", "--redo", "keep"]  # the pool and redo log as they are
SNAPSHOTS_OUT = Path("/tmp/innotune-issue19-snapshots.txt")


def debian_pid_and_uptime(server: DebianMariaDB) -> tuple[str, int]:
    """The Debian server's pid and Uptime: a restart changes the first and resets the second."""
    pid = subprocess.run(
        ["cat", "/run/mysqld/mysqld.pid"], capture_output=True, text=True, check=True
    ).stdout.strip()
    uptime = int(server.query("SHOW GLOBAL STATUS LIKE 'Uptime'").split()[-1])
    return pid, uptime


def snapshot_id(out: str) -> str:
    found = re.search(r"snapshot\s+(\d{8}T\d{6}Z-[0-9a-f]{6})", out)
    assert found, out
    return found.group(1)


def states(listing: str) -> dict[str, str]:
    """snapshot id -> its state word(s), from `innotune snapshots` output."""
    found = {}
    for line in listing.split("\nJobs")[0].splitlines():
        match = re.match(r"\s+(\d{8}T\d{6}Z-[0-9a-f]{6})\s+\S+\s+(.+?)\s{2}", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def test_two_instances_rollback_restores_the_chosen_one_and_older_snapshots_byte_for_byte(
    debian_mariadb: DebianMariaDB,
    private_server: PrivateServer,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    need_root()
    innotune = Cli(tmp_path / "xdg")
    request.addfinalizer(lambda: remove_jobs_and_snapshots(innotune.ids))
    private = private_server
    a = ["--instance", str(private.socket_path)]
    b = ["--instance", debian_mariadb.socket]
    a_etc_before = tree(private.base / "etc")
    debian_before = tree_digest(record_tree())
    b_trx_before = debian_mariadb.query(f"SELECT @@{TRX}").strip()
    assert variable(private, TRX) == "1" and b_trx_before == "1"

    # Apply on A (the private server), then on B (the Debian server): B's is the newest.
    on_a = innotune("apply", "local", *a, "--crash-loss", "os", *QUIET)
    assert on_a.returncode == 0, on_a.stdout + on_a.stderr
    a_first = snapshot_id(on_a.stdout)
    assert variable(private, TRX) == "2"
    on_b = innotune("apply", "local", *b, "--crash-loss", "os", *QUIET)
    assert on_b.returncode == 0, on_b.stdout + on_b.stderr
    b_snap = snapshot_id(on_b.stdout)
    assert debian_mariadb.query(f"SELECT @@{TRX}").strip() == "2"
    debian_applied = tree_digest(record_tree())
    assert debian_applied != debian_before  # B's drop-in is there
    b_pid, b_uptime = debian_pid_and_uptime(debian_mariadb)

    # The snapshots carry their instance (datadir + option file) and state.
    records = {r.id: r for r in history.list_records(LocalTransport())}
    assert records[a_first].snapshot.instance["option_file"] == str(private.main_cnf)
    assert records[a_first].snapshot.instance["datadir"] == str(private.datadir)
    assert records[b_snap].snapshot.instance["datadir"] == "/var/lib/mysql"
    assert records[a_first].state == records[b_snap].state == "applied"

    # Rollback --instance A restores A's snapshot only.
    back = innotune("rollback", "local", *a, "--yes")
    assert back.returncode == 0, back.stdout + back.stderr
    assert f"Restore snapshot {a_first}" in back.stdout
    assert b_snap not in back.stdout + back.stderr
    assert tree(private.base / "etc") == a_etc_before
    assert variable(private, TRX) == "1"
    # B: its files and values untouched, not restarted.
    assert tree_digest(record_tree()) == debian_applied
    assert debian_mariadb.query(f"SELECT @@{TRX}").strip() == "2"
    pid_now, uptime_now = debian_pid_and_uptime(debian_mariadb)
    assert pid_now == b_pid and uptime_now >= b_uptime

    # Again: nothing of A is in force, nothing changes.
    again = innotune("rollback", "local", *a, "--yes")
    assert again.returncode == 1
    assert "No snapshot of this server is in force" in again.stdout
    assert "Nothing was changed" in again.stdout
    assert tree(private.base / "etc") == a_etc_before
    assert tree_digest(record_tree()) == debian_applied

    # Naming B's snapshot while A is chosen, or A's rolled-back one: refused without --yes.
    other = innotune("rollback", "local", b_snap, *a)
    assert other.returncode == 1
    assert "belongs to another server instance" in other.stderr
    assert "refused without --yes" in other.stderr
    spent = innotune("rollback", "local", a_first, *a)
    assert spent.returncode == 1 and "is rolled back" in spent.stderr
    assert tree_digest(record_tree()) == debian_applied
    assert debian_pid_and_uptime(debian_mariadb)[0] == b_pid

    # Apply A twice, then restore the first: byte-identical to before the first apply.
    first = innotune("apply", "local", *a, "--crash-loss", "os", *QUIET)
    assert first.returncode == 0, first.stdout + first.stderr
    a1 = snapshot_id(first.stdout)
    second = innotune("apply", "local", *a, "--crash-loss", "any", *QUIET)
    assert second.returncode == 0, second.stdout + second.stderr
    a2 = snapshot_id(second.stdout)
    assert a2 != a1 and variable(private, TRX) == "0"
    assert tree(private.base / "etc") != a_etc_before
    # A rollback previewed before a2 existed (nothing newer to undo) is refused by the job.
    stale = runner.rollback(LocalTransport(), a1, undo=[])
    assert stale.state == "refused" and "preview it again" in stale.errors[0]
    assert variable(private, TRX) == "0"
    older = innotune("rollback", "local", a1, *a, "--yes")
    assert older.returncode == 0, older.stdout + older.stderr
    assert "This also undoes 1 later change of" in older.stdout and a2 in older.stdout
    assert tree(private.base / "etc") == a_etc_before
    assert variable(private, TRX) == "1"
    assert tree_digest(record_tree()) == debian_applied

    listing = innotune("snapshots", "local")
    assert listing.returncode == 0, listing.stderr
    SNAPSHOTS_OUT.write_text(listing.stdout)
    found = states(listing.stdout)
    assert found[a_first] == "rolled back"
    assert found[a1] == "rolled back"
    assert found[a2].startswith("superseded") and a1 in found[a2]
    assert found[b_snap] == "applied"
    # Per instance, newest first: A's block lists a2, a1, a_first in that order, not B's.
    blocks = listing.stdout.split("\nJobs")[0].split("Instance ")
    a_block = next(part for part in blocks if part.startswith(str(private.datadir) + " "))
    assert a_block.index(a2) < a_block.index(a1) < a_block.index(a_first)
    assert b_snap not in a_block
    only_a = innotune("snapshots", "local", *a)
    assert only_a.returncode == 0 and b_snap not in only_a.stdout and a2 in only_a.stdout

    # Retention: pruned to 2 of A's, the oldest rolled-back one goes; B's is not touched.
    # Each job removed its free lock file when it ended.
    a_key = records[a_first].instance_key
    assert not Path(job_records.lock_path(a_key)).exists()
    pruned = innotune("snapshots", "local", *a, "--prune", "--keep", "2")
    assert pruned.returncode == 0, pruned.stderr
    assert f"removed 1 snapshot on this computer ({a_first}) and 1 local" in pruned.stdout
    assert not Path(snap.target_dir(a_first)).exists()
    assert not (Path(runner.job_dir(a_first))).exists()
    kept = states(pruned.stdout)
    assert a_first not in kept and {a1, a2} == set(kept)  # --instance: A's only
    assert Path(snap.target_dir(b_snap)).exists()
    local_copies = {
        p.parent.name for p in Path(innotune.env["XDG_DATA_HOME"]).rglob("manifest.json")
    }
    assert a_first not in local_copies and {a1, a2, b_snap} <= local_copies

    # B's own rollback still finds B's snapshot in force.
    b_back = innotune("rollback", "local", *b, "--yes")
    assert b_back.returncode == 0, b_back.stdout + b_back.stderr
    assert f"Restore snapshot {b_snap}" in b_back.stdout
    assert tree_digest(record_tree()) == debian_before
    assert debian_mariadb.query(f"SELECT @@{TRX}").strip() == b_trx_before
