"""`innotune apply --measure`: a change set live is applied, then measured interleaved."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.practice.server import PrivateServer
from tests.hosts.util import need_root
from tests.integration.conftest import Cli
from tests.integration.test_apply import remove_jobs_and_snapshots, tree, variable
from tests.verdicts import VERDICT


def test_cli_apply_measures_a_live_change_interleaved_and_names_each_verdict(
    private_server: PrivateServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    need_root()
    innotune = Cli(tmp_path / "xdg")
    request.addfinalizer(lambda: remove_jobs_and_snapshots(innotune.ids))
    server = private_server
    common = ["local", "--instance", str(server.socket_path)]
    sliders = ["--crash-loss", "os", "--fit-os", "off", "--fit-disks", "off"]
    sliders += ["--memory-share", "keep", "--redo", "keep"]
    before = tree(server.base / "etc")

    done = innotune(
        "apply",
        *common,
        *sliders,
        "--sample",
        "0",
        "--yes",
        "--watch",
        "1",
        "--measure",
        "--measure-budget",
        "45",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out, err = done.stdout, done.stderr
    assert "Measuring interleaved, after the apply" in err and "budget 45 s" in err, err
    # The change set live first (its snapshot the way back), then the old and the new value
    # in turn: the benchmark's first line comes after the job's last step.
    assert err.index("✓ verify") < err.index("Run 1 of"), err
    assert "Run 1 of 36 “before”: autocommit with 1 client" in err, err
    assert "Run 2 of 36 “after”: autocommit with 1 client" in err, err
    assert "applied" in out and "Measured before and after:" in out
    assert re.search(r"Method: interleaved, \d+ rounds each", out), out
    assert "Time budget 45 s" in out, out
    table = out.split("Measured before and after:", 1)[1].splitlines()
    rows = [ln for ln in table if ln.startswith(("autocommit", "small_tx", "bulk"))]
    assert len(rows) == 6, out
    assert all(re.search(VERDICT, row) for row in rows), out
    assert "innodb_flush_log_at_trx_commit 1 → 2" in out, out
    assert variable(server, "innodb_flush_log_at_trx_commit") == "2"

    back = innotune("rollback", *common, "--yes")
    assert back.returncode == 0, back.stdout + back.stderr
    assert variable(server, "innodb_flush_log_at_trx_commit") == "1"
    assert tree(server.base / "etc") == before
