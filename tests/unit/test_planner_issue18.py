"""Issue 18: advice that is right on every server line and host, and sentences that are true.

One test (or a few) per item of the issue; each failed on the code before the fix.
"""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.facts import DiskProbe
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.domain.serverfacts import Variable
from app.inspect.rates import compute_rates
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.budget import memory_budget
from app.planner.report import human_value, plan_text, titles
from app.targetjob.values import ordered_settings
from tests.unit.planner_profiles import GIB, MIB, PROFILES, server_facts
from tests.unit.planner_truth import LINES, Line
from tests.unit.test_planner_matrix import Host, facts_for, hosts

CAT = default_catalogue()


def line(version: str) -> Line:
    return next(x for x in LINES if x.version == version)


def host(name: str) -> Host:
    return next(h for h in hosts() if h.name == name)


def plan(facts: HostFacts, **moves: object) -> Plan:
    return make_plan(facts, dataclasses.replace(default_positions(facts), **moves), CAT)


def with_vars(facts: HostFacts, **values: str) -> HostFacts:
    assert facts.server is not None
    kept = [v for v in facts.server.variables if v.name not in values]
    added = [Variable(k, v, "CONFIG") for k, v in values.items()]
    server = dataclasses.replace(facts.server, variables=tuple(kept + added))
    return dataclasses.replace(facts, server=server)


# -- 1. order of dependent changes ------------------------------------------------------------


def test_raising_io_capacity_puts_the_max_first_lowering_puts_it_last() -> None:
    raised = plan(facts_for(host("nvme"), line("8.0.36")))  # 200/2000 -> 20000/40000
    ids = [c.id for c in raised.changes]
    assert ids.index("innodb_io_capacity_max") < ids.index("innodb_io_capacity")
    fast = with_vars(
        facts_for(host("hdd-write-cache"), line("8.0.36")),
        innodb_io_capacity="20000",
        innodb_io_capacity_max="40000",
    )
    lowered = plan(fast)  # 140 page writes/s: 140 / 280
    ids = [c.id for c in lowered.changes]
    assert ids.index("innodb_io_capacity") < ids.index("innodb_io_capacity_max")


def test_the_job_orders_settings_from_the_values_now() -> None:
    def key(kv: tuple[str, str]) -> str:
        return kv[0]

    def value(kv: tuple[str, str]) -> str:
        return kv[1]

    raise_ = [("innodb_io_capacity", "20000"), ("innodb_io_capacity_max", "40000")]
    now = {"innodb_io_capacity": "200", "innodb_io_capacity_max": "2000"}
    assert ordered_settings(raise_, key, value, now) == raise_[::-1]
    lower = [("innodb_io_capacity_max", "300"), ("innodb_io_capacity", "150")]
    now = {"innodb_io_capacity": "20000", "innodb_io_capacity_max": "40000"}
    assert ordered_settings(lower, key, value, now) == lower[::-1]
    other = [("sync_binlog", "1"), *raise_]
    now = {"innodb_io_capacity": "200"}
    assert ordered_settings(other, key, value, now)[0] == ("sync_binlog", "1")


# -- 2. a pool below 1 GiB with several instances ---------------------------------------------


def test_mysql_pool_below_1_gib_with_instances_is_a_restart() -> None:
    vm = PROFILES["mariadb1011-2gb-vm"].facts
    srv = server_facts(
        "mysql",
        "8.0.36",
        overrides={"innodb_buffer_pool_instances": "4", "innodb_buffer_pool_size": str(2 * GIB)},
    )
    machine = dataclasses.replace(vm.os.machine, mem_total_bytes=4 * GIB)
    os = dataclasses.replace(vm.os, machine=machine)
    facts = dataclasses.replace(vm, os=os, server=srv, instances=(srv.instance,))
    pool = plan(facts, memory_share=20).change("innodb_buffer_pool_size")
    assert pool is not None and int(pool.proposed) < GIB
    assert not pool.live and pool.restart_needed and pool.target == "option_file"
    assert "refuses to resize the pool live below 1 GiB" in pool.reason
    assert int(pool.proposed) % (128 * MIB) == 0  # one instance at the restart: chunk only


# -- 3. redo log sizing -----------------------------------------------------------------------


def test_a_trickle_of_redo_never_shrinks_the_log_below_the_default() -> None:
    trickle = facts_for(dataclasses.replace(host("nvme"), redo_rate=1024.0), line("8.4.3"))
    change = plan(trickle, redo_minutes=120).change("innodb_redo_log_capacity")
    assert change is not None and int(change.proposed) >= 100 * MIB
    assert "too little to show the peak" in change.reason and "assumed 1 GiB" in change.reason


def test_an_idle_sample_never_shrinks_a_big_log() -> None:
    idle = with_vars(
        facts_for(dataclasses.replace(host("nvme"), redo_rate=None), line("8.4.3")),
        innodb_redo_log_capacity=str(8 * GIB),
    )
    p = plan(idle, redo_minutes=30)
    assert p.change("innodb_redo_log_capacity") is None
    why = {x.knob: x.why for x in p.left_alone}["innodb_redo_log_capacity"]
    assert "no reason to shrink it" in why
    # Fast recovery is the person asking for a shorter recovery: that shrinks it (issue 26).
    fast = plan(idle, redo_minutes=15).change("innodb_redo_log_capacity")
    assert fast is not None and int(fast.proposed) == 256 * MIB  # 15 min at 1 GiB per hour


# -- 4. io_capacity from page writes ----------------------------------------------------------


def test_io_capacity_is_capped_at_20000_and_explains_a_value_below_the_default() -> None:
    fast = plan(facts_for(host("nvme"), line("8.4.3")))  # 60000 page writes/s
    cap = fast.change("innodb_io_capacity")
    assert cap is not None and cap.proposed == "20000" and "20000" in cap.reason
    slow = facts_for(dataclasses.replace(host("sata-ssd"), page_rate=900.0), line("8.4.3"))
    low = plan(slow).change("innodb_io_capacity")
    assert low is not None and low.proposed == "900"
    assert "default of 10000 because" in low.reason and "below" in low.reason


def test_an_fsync_latency_probe_does_not_size_io_capacity() -> None:
    facts = facts_for(host("nvme"), line("8.4.3"))
    assert facts.disk_probe is not None
    old = DiskProbe("/home/mysql/", "python3", 900.0, 500.0)
    p = plan(dataclasses.replace(facts, disk_probe=old))
    assert p.change("innodb_io_capacity") is None
    why = {x.knob: x.why for x in p.left_alone}["innodb_io_capacity"]
    assert "measured only synced single writes" in why


# -- 5. texts that claim what the code does not do ----------------------------------------------


def test_log_waits_are_sampled_and_grow_the_log_buffer() -> None:
    rates = compute_rates({"Innodb_log_waits": "10"}, {"Innodb_log_waits": "22"}, 10.0)
    assert rates.log_waits == 12
    waited = facts_for(dataclasses.replace(host("nvme"), log_waits=12), line("10.11.19"))
    change = plan(waited).change("innodb_log_buffer_size")
    assert change is not None and change.proposed == str(32 * MIB)
    assert "Innodb_log_waits grew by 12" in change.reason
    calm = plan(facts_for(host("nvme"), line("10.11.19")))
    assert "did not grow" in {x.knob: x.why for x in calm.left_alone}["innodb_log_buffer_size"]


def test_switches_that_are_only_reported_are_reported() -> None:
    off = with_vars(facts_for(host("nvme"), line("10.11.19")), innodb_adaptive_flushing="OFF")
    p = plan(off)
    assert any(w.startswith("innodb_adaptive_flushing is OFF") for w in p.warnings)
    why = {x.knob: x.why for x in p.left_alone}["innodb_adaptive_flushing"]
    assert "reported in the warnings" in why and "keeps it ON" not in why


def test_no_text_flags_anything_for_removal() -> None:
    for line_ in LINES:
        text = plan_text(plan(facts_for(host("nvme"), line_)), CAT)
        assert "flags it" not in text and "for removal" not in text


# -- 6. memory budget and headroom ------------------------------------------------------------


def test_the_budget_counts_temporary_tables_and_arias_cache() -> None:
    mysql = memory_budget(facts_for(host("vm-2g"), line("8.0.36")))
    assert mysql is not None and dict(mysql.other_parts)["temptable_max_ram"] == GIB
    maria = memory_budget(facts_for(host("vm-2g"), line("10.11.19")))
    assert maria is not None and dict(maria.other_parts)["Aria page cache"] == 128 * MIB
    assert dict(maria.other_parts)["one in-memory temporary table"] == 16 * MIB


@pytest.mark.parametrize("version", ["8.0.36", "10.11.19"])
def test_thin_headroom_is_called_thin(version: str) -> None:
    p = plan(facts_for(host("vm-2g"), line(version)), memory_share=60)
    sentence = dict(p.sentences)["memory"]
    assert "should not need to end the server" not in sentence
    assert "thin" in sentence or "more than the RAM" in sentence or "stays" in sentence


# -- 7. smaller truths ------------------------------------------------------------------------


def test_the_dirty_ratio_reason_names_what_the_kernel_applies_it_to() -> None:
    change = plan(facts_for(host("nvme"), line("8.4.3"))).change("vm.dirty_ratio")
    assert change is not None and "free plus reclaimable" in change.reason


def test_o_direct_is_not_called_done_on_data_journal() -> None:
    p = plan(facts_for(host("ext4-data-journal"), line("8.4.3")))  # 8.4's default: O_DIRECT
    why = {x.knob: x.why for x in p.left_alone}["innodb_flush_method"]
    assert "already" not in why and "data=journal disables O_DIRECT" in why


def test_the_cfq_result_is_cited_only_for_cfq() -> None:
    perc = facts_for(host("hwraid-perc"), line("8.0.36"))
    path = perc.os.write_paths[0]
    sda = dataclasses.replace(
        path.devices[0],
        write_cache="write back",
        scheduler="mq-deadline",
        schedulers_available=("mq-deadline", "none"),
    )
    os = dataclasses.replace(
        perc.os,
        machine=dataclasses.replace(perc.os.machine, kernel="6.1.0-28-amd64"),
        write_paths=(dataclasses.replace(path, devices=(sda, *path.devices[1:])),),
    )
    change = plan(dataclasses.replace(perc, os=os)).change("queue/scheduler@sda")
    assert change is not None and change.proposed == "none" and "cfq" not in change.reason


def test_the_flush_interval_is_not_promised() -> None:
    p = plan(facts_for(host("nvme"), line("8.4.3")), crash_loss="os")
    text = " ".join(
        [dict(p.sentences)["crash_loss"], p.change("innodb_flush_log_at_trx_commit").reason]  # type: ignore[union-attr]
    )
    assert "up to" not in text and "not guaranteed" in text


def test_the_o_direct_no_fsync_note_follows_8_0_14() -> None:
    risks = CAT.knob("innodb_flush_method").risks
    assert "8.0.14" in risks and "can lose metadata updates on XFS" not in risks


def test_mariadb_10_10_resizes_the_redo_log_live() -> None:
    assert CAT.is_dynamic("innodb_log_file_size", "mariadb", "10.10.7") is True
    assert CAT.is_dynamic("innodb_log_file_size", "mariadb", "10.6.16") is False


def test_sizes_read_as_sizes_and_sections_are_numbered_once() -> None:
    assert human_value("134217728", "size") == "128 MiB"
    assert human_value("5055184896", "size") == "4.7 GiB"
    numbers = [t.split(" ", 1)[0] for t in titles().values() if t[0].isdigit()]
    assert len(numbers) == len(set(numbers))
