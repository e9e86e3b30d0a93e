"""The default plan, as a new user applies it, on the booted test hosts (issue 36).

sid (MySQL 9.7), trixie (MariaDB 11.8) and bullseye (MariaDB 10.5) run under systemd in a
container whose /proc/sys and /sys are read-only and where no udev runs, as in LXC or Proxmox.
`innotune plan` with no slider options gives the starting plan; `innotune apply --plan …
--restart --yes` applies it with the real job. Every change the job reports applied must be in
force afterwards, read back from the server, /proc/sys and /sys inside the host; the host must
refuse none of them (the plan left out what it cannot take, and says why).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.domain.plan import Change, Plan
from app.knobs import default_catalogue
from app.targetjob.values import active_value, same_value, sysctl_path
from tests.hosts.debian_hosts import DebianHost, put_back_if_changed
from tests.integration.test_lifecycle import (
    booted,
    innotune,
    job,
    ok,
    on_every_host,
    rollback_args,
    snapshot_of,
)


def in_force(host: DebianHost, change: Change) -> str | None:
    """What ``host`` has now for ``change``, when it is not the planned value (None: it is)."""
    if change.target in ("dynamic", "option_file"):
        now = host.sql(f"SELECT @@GLOBAL.{change.key}")
        kind = default_catalogue().knob(change.key).type
        same = same_value(now, change.proposed, kind, change.key, rounded=True)
    elif change.target == "sysctl":
        now = host.run("cat", sysctl_path(change.key)).strip()
        same = now == change.proposed
    elif change.target == "sysfs":
        now = active_value(host.run("cat", str(change.path)))
        same = now == change.proposed
    else:  # option_remove: the line is gone from its file
        now = host.run("grep", "-c", f"^{change.key}", str(change.path), check=False).strip()
        same = now == "0"
    return None if same else f"{change.id} is {now}, not {change.proposed}"


def test_the_default_plan_applies_and_every_change_is_in_force(
    debian_hosts: dict[str, DebianHost], tmp_path: Path
) -> None:
    """On sid, trixie and bullseye at once: each waits for its own server's restarts."""
    hosts = booted(debian_hosts, "sid", "trixie", "bullseye")
    on_every_host(_default_plan_in_force, hosts, tmp_path)


def _default_plan_in_force(host: DebianHost, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    saved = tmp_path / "plan.json"
    said = ok(cli("plan", *target, "--sample", "0", "--out", str(saved)))
    plan = Plan.from_json(saved.read_text())
    changes = [c for c in plan.changes if c.target != "advice"]
    assert changes, said
    # The host's kernel and queue settings are read-only: left alone, each with why.
    assert not [c.id for c in changes if c.target in ("sysctl", "sysfs")], said
    why = {x.knob: x.why for x in plan.left_alone}
    assert why["vm.dirty_ratio"].startswith("This host's kernel settings are read-only"), said
    done = cli("apply", *target, "--plan", str(saved), "--restart", "--yes", "--watch", "2")
    out = job(done)
    try:
        assert re.search(r"^Job \S+: applied$", done.stdout, re.MULTILINE), out
        assert "not applied" not in out and "not supported on this host" not in out, out
        wrong = [w for w in (in_force(host, c) for c in changes) if w]
        assert not wrong, "\n".join(wrong) + "\n" + out
    finally:
        back = cli("rollback", *rollback_args(target, snapshot_of(done.stdout)))
        assert back.returncode == 0, back.stdout + back.stderr


def test_kernel_settings_planned_from_older_facts_are_refused_and_not_kept(
    debian_hosts: dict[str, DebianHost], tmp_path: Path
) -> None:
    """Facts saved before InnoTune recorded what a host can take: the plan still sets kernel
    settings; the apply names them not applied, writes no sysctl.d file for them, and counts
    only the change in force."""
    if "sid" not in debian_hosts:
        pytest.skip("sid is not booted (INNOTUNE_TEST_HOSTS)")
    host = debian_hosts["sid"]
    cli, target = innotune(host, tmp_path)
    facts = tmp_path / "facts.json"
    ok(cli("inspect", *target, "--sample", "0", "--out", str(facts)))
    doc = json.loads(facts.read_text())
    del doc["os"]["machine"]["capabilities"]
    facts.write_text(json.dumps(doc))
    saved = tmp_path / "plan.json"
    slider = ("--memory-share", "10", "--redo", "keep")
    ok(cli("plan", "--facts", str(facts), *slider, "--out", str(saved)))
    plan = Plan.from_json(saved.read_text())
    kernel = sorted(c.id for c in plan.changes if c.target == "sysctl")
    assert kernel == ["vm.dirty_background_ratio", "vm.dirty_ratio"]
    assert plan.change("innodb_buffer_pool_size") is not None
    dirty = host.run("cat", "/proc/sys/vm/dirty_ratio").strip()
    done = cli("apply", *target, "--plan", str(saved), "--yes")
    out = job(done)
    try:
        assert re.search(
            r"^Job \S+: applied 1 of 3 changes; not applied: vm.dirty_background_ratio, "
            r"vm.dirty_ratio$",
            done.stdout,
            re.MULTILINE,
        ), out
        for key in kernel:
            assert re.search(rf"^  not applied  {key}: /proc/sys/\S+ is read-only", out, re.M)
        assert "(none)" not in out.split("== Warnings ==")[1].split("==")[0], out
        assert not (host.root / "etc/sysctl.d/99-innotune.conf").exists()
        assert host.run("cat", "/proc/sys/vm/dirty_ratio").strip() == dirty
        assert in_force(host, plan.changes[0]) is None
    finally:
        back = cli("rollback", *rollback_args(target, snapshot_of(done.stdout)))
        assert back.returncode == 0, back.stdout + back.stderr
        assert not put_back_if_changed(host)
