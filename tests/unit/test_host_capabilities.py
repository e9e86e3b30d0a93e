"""What a host can take, as facts, and a plan that holds only that (issue 36, items 1-2).

The sid test host's recorded facts: MySQL 9.7 booted with systemd in a container whose
/proc/sys and /sys are read-only and where no udev runs (as in LXC or Proxmox).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.describe.actions import Host
from app.describe.preview import build_preview
from app.domain.facts import BlockDevice, Capabilities
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.inspect.host_parse import parse_host_output
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan

SID = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7"


def sid(caps: Capabilities | None = None, device: BlockDevice | None = None) -> HostFacts:
    """sid's recorded facts; ``caps`` in place of its own, ``device`` under its datadir."""
    facts = HostFacts.from_json((SID / "facts.json").read_text())
    machine = facts.os.machine
    if caps is not None:
        machine = dataclasses.replace(machine, capabilities=caps)
    paths = facts.os.write_paths
    if device is not None:  # the datadir on a disk the container shows (the vda)
        paths = (dataclasses.replace(paths[0], device=device.name, devices=(device,)), *paths[1:])
    return dataclasses.replace(
        facts, os=dataclasses.replace(facts.os, machine=machine, write_paths=paths)
    )


def plan_of(facts: HostFacts) -> Plan:
    return make_plan(facts, default_positions(facts), default_catalogue())


def test_the_recorded_host_script_output_gives_the_recorded_capabilities() -> None:
    text = (SID / "host-script.txt").read_text()
    caps = parse_host_output(text, ["/var/lib/mysql", "/tmp"]).machine.capabilities
    assert caps == sid().os.machine.capabilities
    assert caps.kernel_settings is False and caps.sysfs_read_only is True
    assert caps.kernel_settings_seen == "/proc/sys is mounted read-only"
    assert caps.udev is False and "/run/udev/control is missing" in caps.udev_seen
    assert "/etc/udev/rules.d does not exist" in caps.udev_seen


def test_not_root_a_refused_write_test_says_nothing_but_a_read_only_mount_does() -> None:
    text = (SID / "host-script.txt").read_text().replace("uid=0", "uid=1000")
    caps = parse_host_output(text, ["/var/lib/mysql"]).machine.capabilities
    assert (caps.as_root, caps.kernel_settings) == (False, False)  # the ro mount still shows
    rw = text.replace(" /proc/sys ro,", " /proc/sys rw,")
    assert parse_host_output(rw, ["/var/lib/mysql"]).machine.capabilities.kernel_settings is None


def test_kernel_settings_of_a_read_only_proc_sys_are_left_alone_with_why() -> None:
    plan = plan_of(sid())
    assert not [c for c in plan.changes if c.target in ("sysctl", "sysfs")]
    why = {x.knob: x.why for x in plan.left_alone}
    for key in ("vm.dirty_ratio", "vm.dirty_background_ratio"):
        assert why[key].startswith(
            "This host's kernel settings are read-only (/proc/sys is mounted read-only; the "
            "host is a container (container-other)): set them on the machine that hosts it."
        ), why[key]
    assert "It would be 10 (now 20)" in why["vm.dirty_ratio"]
    assert any("kernel settings are read-only" in w for w in plan.warnings)
    # Facts saved before InnoTune looked: the plan proposes them, as it did.
    unknown = plan_of(sid(Capabilities()))
    assert {c.id for c in unknown.changes if c.target == "sysctl"} == {
        "vm.dirty_ratio",
        "vm.dirty_background_ratio",
    }


VDA = BlockDevice(
    "vda",
    "disk",
    transport="virtio",
    read_ahead_kb=8192,
    stable_id="overlayblk",
    stable_id_source="serial",
)


def test_a_read_only_queue_is_left_alone_and_without_udev_a_value_is_set_live_only() -> None:
    caps = sid().os.machine.capabilities
    read_only = plan_of(sid(device=dataclasses.replace(VDA, queue_writable=False)))
    assert read_only.change("queue/read_ahead_kb@vda") is None
    why = {(x.knob, x.device): x.why for x in read_only.left_alone}
    assert why["queue/read_ahead_kb", "vda"].startswith(
        "vda's queue files are read-only here (/sys is mounted read-only; the host is a "
        "container (container-other)): its queue belongs to the machine that hosts it."
    )
    # The case: the queue takes the value, but no udev would read a rule.
    facts = sid(device=dataclasses.replace(VDA, queue_writable=True))
    plan = plan_of(facts)
    change = plan.change("queue/read_ahead_kb@vda")
    assert change is not None and not change.kept
    assert change.persist == f"not kept: it lasts until the next reboot ({caps.udev_seen})"
    why = {(x.knob, x.device): x.why for x in plan.left_alone}
    assert "nothing would read it" in why["udev rule", "vda"]
    preview = build_preview(plan, Host(facts))
    assert not [f for f in preview.persistence_files if f.purpose == "udev"]
    assert any("set live only and last until the next reboot" in w for w in preview.all_warnings)
    (value,) = [v for v in preview.values if v.kind == "sysfs"]
    assert value.persistent.startswith("not kept")
    # Where udev runs, the rule is written as before.
    udev = dataclasses.replace(caps, udev_running=True, udev_rules_dir=True)
    kept = plan_of(sid(udev, dataclasses.replace(VDA, queue_writable=True)))
    assert kept.change("queue/read_ahead_kb@vda").kept  # type: ignore[union-attr]
    assert "udev rule" not in {x.knob for x in kept.left_alone}


def test_the_preview_never_says_no_warnings_when_something_was_left_out() -> None:
    facts = sid()
    preview = build_preview(plan_of(facts), Host(facts))
    assert any("kernel settings are read-only" in w for w in preview.all_warnings)
