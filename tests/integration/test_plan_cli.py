"""`innotune plan` end to end: live against the practice server, and from saved facts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.knobs import default_catalogue
from app.planner import make_plan
from app.practice.server import PrivateServer

REPO = Path(__file__).resolve().parents[2]
SLIDERS = ["--crash-loss", "os", "--memory-share", "20", "--redo", "balanced", "--myisam", "on"]


def innotune(xdg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(xdg))
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=REPO,
    )


def test_plan_live_and_from_saved_facts_agree(tmp_path_factory: pytest.TempPathFactory) -> None:
    # A short directory: the practice server's socket path must stay within 107 bytes.
    xdg = tmp_path_factory.mktemp("p")
    out = tmp_path_factory.mktemp("plan")
    facts_file, live_plan, file_plan = out / "facts.json", out / "live.json", out / "file.json"
    started = innotune(xdg, "practice", "start")
    assert started.returncode == 0, started.stderr
    try:
        live = innotune(
            xdg,
            "plan",
            "practice",
            "--sample",
            "1",
            *SLIDERS,
            "--save-facts",
            str(facts_file),
            "--out",
            str(live_plan),
        )
        assert live.returncode == 0, live.stderr
    finally:
        stopped = innotune(xdg, "practice", "stop")
        assert stopped.returncode == 0, stopped.stderr

    # The readable output: slider sentences, changes with reason and risk, knobs left alone.
    text = live.stdout
    assert "1. What may a crash cost?" in text
    assert "about the last 1 second of commits (the flush once per interval" in text
    assert "innodb_flush_log_at_trx_commit: 1 -> 2" in text
    assert "why:" in text and "risk:" in text
    assert "left alone: sync_binlog: The binary log is off" in text

    # The same facts from the file give the same plan, byte for byte.
    offline = innotune(
        xdg, "plan", "--facts", str(facts_file), *SLIDERS, "--json", "--out", str(file_plan)
    )
    assert offline.returncode == 0, offline.stderr
    assert file_plan.read_bytes() == live_plan.read_bytes()
    assert offline.stdout.strip() == live_plan.read_text().strip()

    # --out round-trips, and records the facts it came from.
    plan = Plan.from_json(live_plan.read_text())
    facts = HostFacts.from_json(facts_file.read_text())
    assert plan.to_json() + "\n" == live_plan.read_text()
    assert plan.facts.target == facts.target and plan.facts.version == facts.server.version  # type: ignore[union-attr]
    assert plan == make_plan(facts, plan.positions, default_catalogue())
    assert plan.positions.crash_loss == "os" and plan.positions.memory_share == 20
    assert plan.positions.redo_minutes == 60 and plan.positions.myisam is True
    change = plan.change("innodb_flush_log_at_trx_commit")
    assert change is not None and change.live and change.target == "dynamic"
    assert json.loads(live_plan.read_text())["format"] == "innotune-plan/1"


def test_plan_needs_a_source(tmp_path: Path) -> None:
    neither = innotune(tmp_path, "plan")
    assert neither.returncode == 2 and "give TARGET, --facts FILE, or both" in neither.stderr
    # Both: the plan comes from the file (here missing), TARGET only checks for a restart.
    both = innotune(tmp_path, "plan", "local", "--facts", str(tmp_path / "x.json"))
    assert both.returncode == 1 and "Cannot read" in both.stderr
    missing = innotune(tmp_path, "plan", "--facts", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "Cannot read" in missing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    wrong = innotune(tmp_path, "plan", "--facts", str(bad))
    assert wrong.returncode == 1 and "not an InnoTune facts file" in wrong.stderr
    share = innotune(tmp_path, "plan", "--facts", str(bad), "--memory-share", "95")
    assert share.returncode == 2 and "between 1 and 90" in share.stderr


def test_help_lists_one_option_per_slider(tmp_path: Path) -> None:
    shown = innotune(tmp_path, "plan", "--help")
    assert shown.returncode == 0
    for option in (
        "--crash-loss",
        "--memory-share",
        "--redo",
        "--doublewrite",
        "--fit-disks",
        "--fit-os",
        "--myisam",
        "--reject",
    ):
        assert option in shown.stdout


def test_plan_without_slider_options_starts_where_the_wizard_starts(tmp_path: Path) -> None:
    """No slider option: the wizard's starting plan (InnoTune's recommendation), said so."""
    from app.planner import default_positions

    facts_file = REPO / "tests/fixtures/hosts/practice-debian12/facts.json"
    facts = HostFacts.from_json(facts_file.read_text())
    out = tmp_path / "plan.json"
    shown = innotune(tmp_path, "plan", "--facts", str(facts_file), "--out", str(out))
    assert shown.returncode == 0, shown.stderr
    plan = Plan.from_json(out.read_text())
    assert plan.positions == default_positions(facts)
    assert plan == make_plan(facts, default_positions(facts), default_catalogue())
    assert plan.positions.redo_minutes == 60  # the recommendation, not "keep"
    assert "  start: recommended for this host: The host has" in shown.stdout
    assert "  start: where the server is: InnoTune never lowers durability" in shown.stdout
    pool = plan.change("innodb_buffer_pool_size")
    current = facts.server.variable("innodb_buffer_pool_size")  # type: ignore[union-attr]
    assert pool is not None and int(pool.proposed) > int(current or 0)


def test_plan_from_facts_says_how_old_and_whether_the_server_restarted(
    tmp_path: Path, private_server: PrivateServer
) -> None:
    """`plan --facts FILE` dates the facts; with TARGET too, a restart since is found."""
    facts_file = tmp_path / "facts.json"
    where = ["local", "--instance", str(private_server.socket_path)]
    read = innotune(tmp_path, "inspect", *where, "--sample", "0", "--out", str(facts_file))
    assert read.returncode == 0, read.stderr
    facts = HostFacts.from_json(facts_file.read_text())
    assert facts.server is not None and facts.server.instance.pid == private_server.running_pid()

    offline = innotune(tmp_path, "plan", "--facts", str(facts_file))
    assert offline.returncode == 0, offline.stderr
    assert re.search(
        rf"The facts in {re.escape(str(facts_file))}, of this computer, were read at "
        r"\d\d:\d\d:\d\d, (just now|\d+ seconds? ago)\.",
        offline.stderr,
    ), offline.stderr
    assert "Warning" not in offline.stderr
    same = innotune(tmp_path, "plan", *where, "--facts", str(facts_file))
    assert same.returncode == 0 and "Warning" not in same.stderr, same.stderr
    assert same.stdout == offline.stdout  # the plan is the file's

    private_server.restart()
    assert private_server.running_pid() != facts.server.instance.pid
    checked = innotune(tmp_path, "plan", *where, "--facts", str(facts_file))
    assert checked.returncode == 0, checked.stderr
    assert "Warning: the server restarted since these facts were read (" in checked.stderr
    assert "its values may differ now" in checked.stderr
    assert checked.stdout == offline.stdout
