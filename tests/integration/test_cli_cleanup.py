"""A test's cleanup removes only the jobs and snapshots it made: other sessions share this host.

`innotune snapshots` lists every snapshot and job in /var/lib/innotune, those of the test
sessions running beside this one too. A test that collected every id it saw there removed
them when it ended, and the session using them failed: seen as the Apply page's list
missing a snapshot (tests/ui/test_apply_page_snapshots.py), a job gone while followed
("missing"), a rollback whose snapshot had vanished.
"""

from __future__ import annotations

import time
from pathlib import Path

from app.jobs import history
from app.jobs import snapshot as snap
from app.remote.local import LocalTransport
from tests.integration.conftest import Cli
from tests.integration.test_apply import remove_jobs_and_snapshots


def _another_sessions_snapshot(local: LocalTransport, tmp_path: Path) -> snap.Snapshot:
    """A snapshot on this host of an instance no test here runs, stored as an apply stores one."""
    datadir = str(tmp_path / "another-session" / "data")
    taken = time.time()
    made = snap.Snapshot(
        id=snap.new_id(),
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken)),
        target="another test session",
        instance={
            "key": history.identity_key(datadir, None),
            "datadir": datadir,
            "option_file": None,
        },
        files=(),
        values=(),
        taken=taken,
    )
    snap.store_on_target(local, made, sudo=False)
    return made


def test_a_listing_leaves_the_snapshots_it_shows_to_their_owners(
    local: LocalTransport, tmp_path: Path
) -> None:
    theirs = _another_sessions_snapshot(local, tmp_path)
    try:
        innotune = Cli(tmp_path / "xdg")
        listed = innotune("snapshots", "local")
        assert listed.returncode == 0, listed.stderr
        assert theirs.id in listed.stdout  # shown: it is on this host ...
        assert theirs.id not in innotune.ids  # ... but not this test's to remove
        remove_jobs_and_snapshots(innotune.ids)
        assert Path(snap.target_dir(theirs.id), "manifest.json").exists()
    finally:
        remove_jobs_and_snapshots([theirs.id])
