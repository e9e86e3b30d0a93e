"""The appliers' pure parts, and the preview built offline from real saved facts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.describe import dynamic, sysctl, udev
from app.describe.actions import ApplyError, Host, late_name
from app.describe.preview import build_preview, estimate_downtime, with_checksums
from app.domain.facts import BlockDevice
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, Plan
from app.inspect.host_block_devices import parse_block_devices
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.targetjob.values import same_value

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"
FACTS = HOSTS / "practice-mariadb-10.11" / "facts.json"


def change(key: str, proposed: str, target: str, **kw: object) -> Change:
    fields: dict[str, object] = dict(
        id=key,
        slider="fit_os",
        target=target,
        key=key,
        current=None,
        proposed=proposed,
        reason="test",
        risk="",
        live=target != "option_file",
        restart_needed=target == "option_file",
        link="",
        confidence="checked",
    )
    fields.update(kw)
    return Change(**fields)  # type: ignore[arg-type]


def test_late_name_sorts_after_every_file_setting_the_same_keys() -> None:
    assert late_name("innotune", ".cnf", []) == "99-innotune.cnf"
    assert late_name("innotune", ".cnf", ["50-server.cnf"]) == "99-innotune.cnf"
    assert late_name("innotune", ".cnf", ["zz-later.cnf"]) == "zzz-innotune.cnf"
    assert late_name("innotune", ".conf", ["99-sysctl.conf"]) == "zz-innotune.conf"
    # Nothing InnoTune-like sorts after "~x": the caller's override check reports it.
    assert late_name("innotune", ".cnf", ["~x.cnf"]) == "zzzzz-innotune.cnf"


def test_values_compare_as_the_server_prints_them() -> None:
    assert same_value("TRUE", "ON") and same_value("0", "OFF") and same_value("128M", "134217728")
    assert not same_value("300", "1000") and not same_value(None, "1")


def test_sysctl_file_keeps_other_lines_and_replaces_ours() -> None:
    before = b"# mine\nvm.swappiness = 1\nvm/dirty_ratio=30\n"
    after = sysctl.render_conf(before, {"vm.dirty_ratio": "10", "vm.dirty_background_ratio": "5"})
    assert after == (
        b"# mine\nvm.swappiness = 1\nvm.dirty_ratio = 10\nvm.dirty_background_ratio = 5\n"
    )
    assert sysctl.parse_conf(after)["vm.dirty_ratio"] == ("10", 3)
    order = sysctl.boot_order(
        {
            "/usr/lib/sysctl.d/99-zz.conf": b"",
            "/etc/sysctl.d/99-zz.conf": b"",  # hides the /usr/lib one of the same name
            "/etc/sysctl.d/10-a.conf": b"",
            "/etc/sysctl.conf": b"",
        }
    )
    assert order == ["/etc/sysctl.d/10-a.conf", "/etc/sysctl.d/99-zz.conf", "/etc/sysctl.conf"]


def test_dynamic_statement_is_exact_and_refuses_odd_names() -> None:
    host = Host(_practice_plan()[0])

    def sql(key: str, value: str) -> tuple[str, ...]:
        (action,) = dynamic.describe([change(key, value, "dynamic")], host)
        assert [(v.kind, v.key, v.new) for v in action.values] == [("dynamic", key, value)]
        return action.statements

    assert sql("innodb_io_capacity", "2000") == ("SET GLOBAL innodb_io_capacity = 2000",)
    assert sql("innodb_flush_method", "O_DIRECT") == (
        "SET GLOBAL innodb_flush_method = 'O_DIRECT'",
    )
    with pytest.raises(ApplyError):
        sql("x; DROP TABLE t", "1")
    with pytest.raises(ApplyError):
        sql("innodb_io_capacity", "1'; --")


def _device(fixture: str, name: str) -> BlockDevice:
    return parse_block_devices((HOSTS / fixture / "host.txt").read_text())[name]


def test_udev_rules_match_recorded_devices_by_stable_attributes() -> None:
    settings = {"queue/read_ahead_kb": "128", "queue/scheduler": "none"}
    vda = _device("vm-virtio-local", "vda")  # real: virtio serial
    text = udev.rule_text(vda, settings, "vda").decode()
    rule = text.splitlines()[-1]
    assert rule == (
        'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", '
        'ATTR{serial}=="overlayblk", ATTR{queue/scheduler}="none", '
        'ATTR{queue/read_ahead_kb}="128"'
    )
    assert 'KERNEL=="' not in text
    sda = _device("md-raid1-sata-ssd-synthetic", "sda")  # the WWID sits on the SCSI parent
    assert (
        'ATTRS{wwid}=="t10.ATA     KINGSTON SH103S3'
        in udev.rule_text(sda, settings, "sda").decode()
    )
    assert udev.rule_path(sda) != udev.rule_path(_device("md-raid1-sata-ssd-synthetic", "sdb"))
    loop = BlockDevice(
        "loop3", "loop", stable_id="/srv/img/db.img", stable_id_source="loop/backing_file"
    )
    assert (
        'ATTR{loop/backing_file}=="/srv/img/db.img"'
        in udev.rule_text(loop, settings, "loop3").decode()
    )
    dm = BlockDevice("dm-0", "dm", stable_id="LVM-abc", stable_id_source="dm/uuid")
    assert 'ENV{DM_UUID}=="LVM-abc"' in udev.rule_text(dm, settings, "dm-0").decode()


def test_no_rule_by_name_for_a_device_without_a_stable_id() -> None:
    perc = _device("hwraid-perc", "sda")  # real: no wwid or serial in /sys
    with pytest.raises(ApplyError, match="no stable identifier"):
        udev.match_clause(perc)
    odd = BlockDevice("sdz", "disk", stable_id='a"b*', stable_id_source="serial")
    with pytest.raises(ApplyError, match="cannot match literally"):
        udev.match_clause(odd)


def _practice_plan() -> tuple[HostFacts, Plan]:
    facts = HostFacts.from_json(FACTS.read_text())
    positions = dataclasses.replace(default_positions(facts), crash_loss="os", memory_share=20)
    return facts, make_plan(facts, positions, default_catalogue())


def test_offline_preview_says_what_it_could_not_read() -> None:
    facts, plan = _practice_plan()
    preview = build_preview(plan, Host(facts))
    text = preview.text()
    assert "option files could not be read" in text
    assert any("Give a TARGET" in u for u in preview.unsupported)
    assert not preview.option_files  # nothing is shown that apply would not write
    kinds = {v.kind for v in preview.values}
    assert {"sysfs", "sysctl", "dynamic"} <= kinds
    sysfs_row = next(v for v in preview.values if v.kind == "sysfs")
    assert sysfs_row.current == plan.change(sysfs_row.key + "@vda").current  # type: ignore[union-attr]
    rule = next(f for f in preview.persistence_files if f.purpose == "udev")
    assert b'ATTR{serial}=="overlayblk"' in rule.after
    # The job writes kernel values in /proc/sys itself; the preview says so, as it does it.
    assert "write 10 to /proc/sys/vm/dirty_ratio" in preview.live_writes
    assert not any(c.argv[0] == "sysctl" for c in preview.commands)
    checked = with_checksums(plan, preview)
    assert checked.file_checksums == ()  # nothing was read, so nothing to hold apply to
    assert Plan.from_json(checked.to_json()) == checked
    assert "cannot be previewed from saved facts" in text.split("== Settings")[0]


def test_downtime_estimate_grows_with_dirty_pages() -> None:
    facts, plan = _practice_plan()
    assert facts.server is not None
    clean = estimate_downtime(facts, plan)
    dirty_server = dataclasses.replace(facts.server, dirty_pages_share=0.75)
    dirty = estimate_downtime(dataclasses.replace(facts, server=dirty_server), plan)
    assert 2 <= clean.low_seconds < clean.high_seconds
    assert dirty.high_seconds > clean.high_seconds
    assert "MB/s" in dirty.text()
