"""The plan-quality benchmark works: a short run on the sid host fills every row of its table.

Small on purpose (2 tables of 2,000 rows, one 2 s round, the "os" position, the apply's
sample and watch 1 s): it proves the benchmark boots the host, builds and caches its data set,
applies InnoTune's plan through `innotune apply` and rolls it back, and measures every
configuration. The figures themselves come from `make bench-plan-quality` (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks.bench_plan_quality import QUICK_GRID
from tests.hosts.util import need, need_root

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.root
@pytest.mark.slow
def test_a_quick_run_fills_every_row(tmp_path: Path) -> None:
    need_root()
    need(shutil.which("sysbench") is not None, "sysbench is not installed")
    need(shutil.which("debootstrap") is not None, "debootstrap is not installed")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "tests.benchmarks.bench_plan_quality", "--host", "sid"]
    argv += ["--quick", "--positions", "os", "--tables", "2", "--rows", "2000"]
    argv += ["--seconds", "2", "--warmup", "0", "--rounds", "1", "--out", str(out)]
    # The plan's apply: a 1 s sample, and a 1 s watch after its restart (innotune's own 10 s
    # and 15 s are waits, nothing this test checks).
    argv += ["--apply-waits", "1"]
    env = dict(os.environ, INNOTUNE_PLAN_DATA_CACHE=str(tmp_path / "cache"))
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=540, cwd=REPO, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    names = ["defaults", "InnoTune plan", *QUICK_GRID]
    rows = [line for line in done.stdout.splitlines() if line.startswith("sid    os ")]
    for name in names:
        assert any(name in row for row in rows), done.stdout
    # The data set was built once and cached, keyed by the host image and its size.
    assert [p.name for p in (tmp_path / "cache").iterdir()][0].endswith("-2x2000.tar.zst")
    figures = json.loads((out / "plan-quality-sid.json").read_text())
    assert figures["data_bytes"] > 0
    measured = {i["name"]: i for i in figures["results"]["os"]}
    assert sorted(measured) == sorted(names)
    for item in measured.values():
        assert len(item["tps"]) == 1 and item["tps"][0] > 0, item["name"]
        assert item["loadavg_1min"] and item["loadavg_1min"][0] >= 0
        # At "os" every configuration ran with the commit flush of that position.
        assert item["in_force"]["innodb_flush_log_at_trx_commit"] == "2", item["name"]
    plan = measured["InnoTune plan"]
    assert "snapshot" in plan["apply_output"][0]
    # The plan's pool, from the host (not the server's 128 MiB), was in force.
    assert int(plan["in_force"]["innodb_buffer_pool_size"]) > 128 * 1024**2
    assert int(measured["defaults"]["in_force"]["innodb_buffer_pool_size"]) == 128 * 1024**2
    verdict = figures["verdicts"]["os"]
    assert set(verdict["checks"]) >= {"within the spread of the best", "≥ +30 % over the defaults"}
