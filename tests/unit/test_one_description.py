"""One description (issue 29): one describe per kind in one registry; Preview, the job's bundle
and the export hold the same Actions; the plan's persistence text names what the job writes."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
from pathlib import Path

import pytest
import yaml

from app.describe import registry, udev
from app.describe.actions import Host
from app.describe.preview import build_preview
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export.ansible import ROLE, render_playbook
from app.export.disks import FIND_DISKS, disk_kind
from app.export.model import digest
from app.export.script import render_script
from app.jobs import runner
from app.jobs import snapshot as snap
from app.planner import default_positions, make_plan
from app.targetjob.values import set_global
from tests.unit.planner_truth import LINES
from tests.unit.test_planner_matrix import CAT, facts_for, hosts
from tests.unit.test_restart_anyway import job_statements

LINE = next(x for x in LINES if x.version == "10.11.19")


def every_kind() -> tuple[HostFacts, Plan]:
    """The LVM host on spinning disks: option-file, dynamic, sysfs and sysctl changes."""
    facts = facts_for(next(h for h in hosts() if h.name == "lvm-hdd"), LINE)
    positions = dataclasses.replace(default_positions(facts), crash_loss="os")
    plan = make_plan(facts, positions, CAT)
    targets = {c.target for c in plan.changes}
    assert {"option_file", "dynamic", "sysfs", "sysctl"} <= targets, targets
    return facts, plan


def test_every_kind_has_one_describer_of_one_shape() -> None:
    assert list(registry.DESCRIBERS) == ["option_file", "dynamic", "sysfs", "udev", "sysctl"]
    for kind, entry in registry.DESCRIBERS.items():
        assert entry.kind == kind
        params = list(inspect.signature(entry.describe).parameters)
        assert params == ["changes", "host"], (kind, params)
        assert inspect.signature(entry.describe).return_annotation == "list[Action]", kind
    facts, plan = every_kind()
    errors: list[str] = []
    described = registry.describe_all(plan.changes, Host(facts), errors)
    assert not errors
    assert tuple(described) == build_preview(plan, Host(facts)).actions


def test_preview_the_bundle_and_the_export_hold_the_same_actions() -> None:
    """The must-show: a plan with every kind of change, three renderings, one set of Actions."""
    facts, plan = every_kind()
    preview = build_preview(plan, Host(facts))
    assert not preview.errors
    export = digest(plan, facts)
    assert export.actions == preview.actions  # the same describers, the same Actions

    typed = [(v.kind, v.key, v.new) for a in preview.actions for v in a.values]
    assert {k for k, _, _ in typed} == {"dynamic", "sysfs", "sysctl"}
    saved = snap.Snapshot(
        "id",
        "now",
        "test",
        {},
        tuple(snap.SavedFile(w.path, False, None) for a in preview.actions for w in a.files),
        (),
    )
    bundle = runner.build_bundle("id", saved, preview.actions, validate=None, expected={})
    # The bundle: the same typed values, no SQL text; the job's SQL is the preview's.
    assert [(v.kind, v.key, v.value) for v in bundle.values] == typed
    assert "SET GLOBAL" not in bundle.to_json().decode()
    assert job_statements(bundle) == list(preview.statements)
    # The export: every value but the per-host pool, typed as the Actions hold it.
    pooled = {s.key for s in export.settings if s.per_host}
    assert sorted(export.typed_values()) == sorted(t for t in typed if t[1] not in pooled)
    lines = {kv for a in preview.actions for kv in a.option_lines}
    assert {(s.key, s.value) for s in export.settings} == lines
    # ... and the files say so: the script sets each live value with the job's spelling.
    script = render_script(export)
    for setting in export.settings:
        if setting.live and not setting.per_host:
            assert set_global(setting.key, setting.value).removeprefix("SET GLOBAL ") in script
    for kind, key, value in typed:
        if kind == "sysctl":
            assert f"{key}={value}" in script
        if kind == "sysfs":
            assert f"{key}={value}" in script
    files = render_playbook(export)
    defaults = yaml.safe_load(files[f"{ROLE}/defaults/main.yml"])
    assert defaults["innotune_sysctl"] == {k: v for kind, k, v in typed if kind == "sysctl"}
    planned = disk_kind(next(d for p in facts.os.write_paths for d in p.devices if d.name == "sda"))
    assert planned == "hdd"
    assert defaults["innotune_queue_by_kind"] == {
        "hdd": [{"attr": k, "value": v} for kind, k, v in typed if kind == "sysfs"]
    }


def test_a_saved_plan_alone_exports_no_queue_settings_and_says_why() -> None:
    _, plan = every_kind()
    export = digest(plan)
    assert not export.queue and export.notes
    assert "does not say what kind of disk" in render_script(export)


def with_wwid(facts: HostFacts) -> HostFacts:
    """The facts with the disks given a WWID (the recorded LVM host's have none)."""
    paths = tuple(
        dataclasses.replace(
            path,
            devices=tuple(
                dataclasses.replace(d, stable_id=f"naa.5000c500{d.name}", stable_id_source="wwid")
                if d.kind == "disk"
                else d
                for d in path.devices
            ),
        )
        for path in facts.os.write_paths
    )
    return dataclasses.replace(facts, os=dataclasses.replace(facts.os, write_paths=paths))


def test_the_plans_persistence_text_names_the_files_the_job_writes() -> None:
    facts, plan = every_kind()
    preview = build_preview(plan, Host(with_wwid(facts)))
    rules = [f.path for f in preview.persistence_files if f.purpose == "udev"]
    sysctl_files = [f.path for f in preview.persistence_files if f.purpose == "sysctl"]
    assert rules and sysctl_files
    for change in plan.changes:
        if change.target == "sysfs":
            assert change.persist is not None and "KERNEL==" not in change.persist
            prefix, _, rest = change.persist.partition(f"{udev.RULES_DIR}/99-innotune-")
            assert rest.startswith("<identifier>.rules"), change.persist
            assert all(r.startswith(f"{udev.RULES_DIR}/99-innotune-") for r in rules)
            assert "stable identifier" in change.persist
        if change.target == "sysctl":
            assert change.persist is not None and sysctl_files[0] in change.persist


@pytest.mark.skipif(not Path("/sys/block").is_dir(), reason="no /sys/block")
def test_find_disks_names_the_rule_as_the_job_does() -> None:
    """FIND_DISKS on this machine's root filesystem: each rule file is udev.rule_path's."""
    out = subprocess.run(
        ["sh", "-c", FIND_DISKS, "sh", "/"], capture_output=True, text=True, check=True
    ).stdout
    lines = [line.split("|") for line in out.splitlines()]
    assert lines and all(f[0] in ("disk", "none") for f in lines), out
    for f in lines:
        if f[0] == "disk" and f[3]:
            ident = f[4].split('=="', 1)[1].rstrip('"')
            device = BlockDevice(name=f[1], kind="disk", stable_id=ident)
            assert f"{udev.RULES_DIR}/{f[3]}" == udev.rule_path(device)
            assert f[2] in ("loop", "nvme", "ssd", "hdd", "unknown")


def test_the_disk_tasks_pass_the_syntax_checks_and_say_which_disk_gets_what(
    tmp_path: Path,
) -> None:
    import json

    import jinja2

    from tests.unit.test_export import ANSIBLE_PLAYBOOK

    facts, plan = every_kind()
    export = digest(plan, facts)
    files = render_playbook(export)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "hosts.ini").write_text("[innotune]\nh1\n")
    checked = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", str(tmp_path / "hosts.ini"), "--syntax-check", "site.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (tmp_path / "plan.sh").write_text(render_script(export))
    subprocess.run(["sh", "-n", str(tmp_path / "plan.sh")], check=True)
    defaults = yaml.safe_load(files[f"{ROLE}/defaults/main.yml"])
    found = [
        'disk|sda|hdd|99-innotune-x-12345678.rules|ATTR{wwid}=="naa.1"|',
        "disk|sdb|ssd|||no stable identifier (WWID, serial or backing file)",
        "disk|sdc|hdd|||no stable identifier (WWID, serial or backing file)",
        "none|the datadir /var/lib/mysql/ lies on overlay, not on a block device",
    ]
    env = jinja2.Environment()  # noqa: S701 - JSON, not HTML
    disks = json.loads(
        env.from_string(files[f"{ROLE}/templates/disks.j2"]).render(
            innotune_found_disks={"stdout_lines": found}, **defaults
        )
    )
    says = [d["says"] for d in disks]
    assert says[0].startswith("sda is a spinning disk: it gets queue/scheduler=deadline, kept in")
    assert says[1] == (
        "sdb is an SSD; the plan's queue settings are for a spinning disk: none set on this host"
    )
    assert "no udev rule: the live values last until the next reboot" in says[2]
    assert says[3].startswith("no disk queue settings on this host: the datadir")
    assert [bool(d["settings"]) for d in disks] == [True, False, True, False]
