"""The watch's figures and verdicts, from counter rounds recorded on the live servers.

The recordings (tests/fixtures/watch/SOURCE.md) were taken while a client wrote one row per
commit at a known rate; the figures below are checked against that workload, not against
numbers copied from the files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.domain.pace import parse_schedstat
from app.domain.watch import (
    COSTS,
    Sample,
    Traffic,
    Watch,
    compare_watches,
    round_figures,
    round_plan,
    rounds_of,
    series,
    traffic,
    traffic_alike,
)
from app.flows.watching import comparison_json, comparison_text, watch_text
from app.inspect.watchread import choose_disk, parse_diskstats

FIXTURES = Path(__file__).parent.parent / "fixtures" / "watch"


def load(name: str) -> Watch:
    return Watch.from_json((FIXTURES / name).read_text())


@pytest.mark.parametrize(
    ("name", "rate", "counter"),
    [
        ("trixie-trx1.json", 100, "Innodb_max_trx_id ÷ 2"),
        ("trixie-rate200.json", 200, "Innodb_max_trx_id ÷ 2"),
        ("sid-trx1.json", 100, "Binlog_cache_use + Binlog_stmt_cache_use"),
    ],
)
def test_commits_and_rows_match_the_workload(name: str, rate: int, counter: str) -> None:
    watch = load(name)
    assert watch.commit_counter == counter
    seen = traffic(watch)
    # The client paced its commits against the clock: every round's rate is near it.
    assert seen.commits_per_s == pytest.approx(rate, rel=0.05)
    assert seen.rows_per_commit == pytest.approx(1.0, rel=0.05)
    assert seen.rounds == watch.rounds >= 8


def test_one_fsync_per_commit_at_trx_commit_1_on_mariadb() -> None:
    # Without a binary log, InnoDB syncs its redo log once per commit of a lone client.
    fsyncs = series(load("trixie-trx1.json"), "fsyncs_per_commit")
    assert all(0.95 < f < 1.2 for f in fsyncs)
    assert all(f < 0.1 for f in series(load("trixie-trx2.json"), "fsyncs_per_commit"))


@pytest.mark.parametrize("server", ["trixie", "sid"])
def test_trx_commit_2_makes_fsyncs_per_commit_better(server: str) -> None:
    before, after = load(f"{server}-trx1.json"), load(f"{server}-trx2.json")
    found = compare_watches(before, after)
    assert found.why_not == ""
    assert found.settings_changed["innodb_flush_log_at_trx_commit"] == ("1", "2")
    verdicts = {f.key: f.verdict for f in found.figures}
    assert verdicts["fsyncs_per_commit"] == "better"
    assert "worse" not in verdicts.values()


@pytest.mark.parametrize("server", ["trixie", "sid"])
def test_unchanged_server_is_neither_better_nor_worse(server: str) -> None:
    found = compare_watches(load(f"{server}-same-a.json"), load(f"{server}-same-b.json"))
    assert found.why_not == ""
    assert found.settings_changed == {}
    for fig in found.figures:
        assert fig.verdict not in ("better", "worse"), fig
    fsyncs = next(f for f in found.figures if f.key == "fsyncs_per_commit")
    assert fsyncs.verdict in ("no_change", "undecided")


def test_disk_of_an_overlay_is_shown_not_judged() -> None:
    before, after = load("sid-trx1.json"), load("sid-trx2.json")
    assert not before.disk_own
    found = compare_watches(before, after)
    disk = [f for f in found.figures if f.key.startswith("disk_")]
    assert disk and all(f.verdict == "not_compared" and "shared" in f.note for f in disk)
    assert all(f.before is not None for f in disk)


def test_traffic_that_doubled_gets_no_verdict() -> None:
    found = compare_watches(load("trixie-rate100.json"), load("trixie-rate200.json"))
    assert "traffic changed too much" in found.why_not
    assert all(f.verdict in ("not_compared", "not_measured") for f in found.figures)
    assert "No verdicts: the traffic changed too much" in comparison_text(
        load("trixie-rate100.json"), load("trixie-rate200.json"), found
    )


def test_traffic_rule() -> None:
    base = Traffic(100.0, 1.0, 10)
    assert traffic_alike(base, Traffic(149.0, 1.0, 10)) == ""
    assert traffic_alike(base, Traffic(151.0, 1.0, 10)) != ""
    assert traffic_alike(base, Traffic(100.0, 1.19, 10)) == ""
    assert "kind of traffic" in traffic_alike(base, Traffic(100.0, 1.21, 10))
    assert traffic_alike(base, Traffic(0.0, None, 0)) != ""


def test_latency_only_where_performance_schema_is_on() -> None:
    mysql, mariadb = load("sid-trx1.json"), load("trixie-trx1.json")
    assert series(mysql, "commit_latency_ms") and series(mysql, "statement_latency_ms")
    assert not series(mariadb, "commit_latency_ms")
    assert "performance_schema is off" in mariadb.timers_note
    assert "performance_schema is off" in watch_text(mariadb)


def test_round_without_commits_has_no_per_commit_figures() -> None:
    a = Sample(0.0, {"Innodb_max_trx_id": 10, "Innodb_data_fsyncs": 5})
    b = Sample(1.0, {"Innodb_max_trx_id": 10, "Innodb_data_fsyncs": 7})
    figures = round_figures(a, b, "Innodb_max_trx_id ÷ 2")
    assert figures["commits_per_s"] == 0.0
    assert figures["fsyncs_per_commit"] is None


def test_a_restart_between_readings_counts_no_negative_work() -> None:
    a = Sample(0.0, {"Binlog_commits": 500, "Innodb_data_fsyncs": 900})
    b = Sample(2.0, {"Binlog_commits": 40, "Innodb_data_fsyncs": 20})
    assert round_figures(a, b, "Binlog_commits")["commits_per_s"] == 0.0


def test_round_plan() -> None:
    assert round_plan(10) == (10, 1.0)
    assert round_plan(60) == (20, 3.0)
    rounds, length = round_plan(1)
    assert rounds == 3 and length == 1.0


def test_json_round_trip_and_compare_json() -> None:
    before, after = load("trixie-trx1.json"), load("trixie-trx2.json")
    assert Watch.from_json(after.to_json()) == after
    data = comparison_json("trixie-trx1.json", before, after, compare_watches(before, after))
    text = json.dumps(data)
    fsyncs = json.loads(text)["figures"]["fsyncs_per_commit"]
    assert fsyncs["verdict"] == "better"
    assert fsyncs["before"] > fsyncs["after"]
    assert "commits/s" in fsyncs["traffic_before"] and "commits/s" in fsyncs["traffic_after"]
    assert data["traffic"]["before"]["commits_per_s"] > 0
    assert set(data["figures"]) == {f.key for f in COSTS}
    with pytest.raises(ValueError):
        Watch.from_json(json.dumps({**json.loads(after.to_json()), "format": "other/1"}))


def test_every_round_has_every_counter_figure() -> None:
    for name in ("sid-trx1.json", "trixie-trx1.json"):
        for figures in rounds_of(load(name)):
            assert figures["fsyncs_per_commit"] is not None
            assert figures["redo_bytes_per_commit"] is not None


def test_disk_found_by_device_number() -> None:
    here = choose_disk((FIXTURES / "disk-here-ext4.txt").read_text(), "/work")
    assert (here.device, here.own) == ("vda", True)


def test_disk_of_an_overlay_is_the_only_disk_and_shared() -> None:
    found = choose_disk((FIXTURES / "disk-sid-overlay.txt").read_text(), "/var/lib/mysql")
    assert found.device == "vda" and not found.own
    assert "overlay" in found.note and "only disk" in found.note


def test_overlay_with_two_disks_gives_none() -> None:
    text = (FIXTURES / "disk-sid-overlay.txt").read_text()
    stat, mounts, disks, stats = text.split("---\n")
    two = "---\n".join([stat, mounts, disks + "vdb\n", stats + " 254 16 vdb" + " 0" * 17 + "\n"])
    found = choose_disk(two, "/var/lib/mysql")
    assert found.device == "" and "2 disks" in found.note


def test_diskstats_fields() -> None:
    line = "254 0 vda 1 2 3 4 10 20 30 40 0 50 60 7 8 9 10 11 12\n"
    assert parse_diskstats(line, "vda") == {
        "writes": 10,
        "sectors_written": 30,
        "write_ms": 40,
        "io_ms": 50,
        "flushes": 11,
        "flush_ms": 12,
    }
    old = "8 0 sda 1 2 3 4 10 20 30 40 0 50 60\n"  # a kernel before 4.18: no flushes
    assert "flushes" not in parse_diskstats(old, "sda")
    assert parse_diskstats(line, "sdb") == {}


def test_the_command_is_registered_and_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    from app.cli import build_parser
    from app.commands.watch import saved_watch
    from app.domain.errors import InnoTuneError

    parser, handlers = build_parser()
    args = parser.parse_args(["watch", "local", "--seconds", "12", "--compare", "a.json"])
    assert args.command == "watch" and args.seconds == 12.0 and "watch" in handlers
    bench = tmp_path / "bench.json"
    bench.write_text('{"format": "innotune-bench/1"}')
    with pytest.raises(InnoTuneError, match="not a watch"):
        saved_watch(bench)
    assert saved_watch(FIXTURES / "sid-trx1.json").flavour == "mysql"


def test_disk_figures_of_a_round() -> None:
    disk_a = {"writes": 100, "write_ms": 50, "io_ms": 1000, "flushes": 10}
    disk_b = {"writes": 300, "write_ms": 250, "io_ms": 1500, "flushes": 60}
    a = Sample(0.0, {"Binlog_commits": 0}, disk_a)
    b = Sample(2.0, {"Binlog_commits": 50}, disk_b)
    figures = round_figures(a, b, "Binlog_commits")
    assert figures["disk_utilisation_pct"] == pytest.approx(25.0)  # 500 ms busy of 2 s
    assert figures["disk_write_ms"] == pytest.approx(1.0)  # 200 ms over 200 writes
    assert figures["disk_flushes_per_commit"] == pytest.approx(1.0)
    assert figures["disk_busy_ms_per_commit"] == pytest.approx(10.0)


def test_the_servers_cpu_and_its_wait_for_one_per_commit() -> None:
    # Two seconds, 600 commits: 66 ms on a CPU and 1,950 ms waiting for one, all threads.
    a = Sample(0.0, {"Binlog_commits": 0}, cpu={"run_ns": 10_000_000, "wait_ns": 50_000_000})
    b = Sample(2.0, {"Binlog_commits": 600}, cpu={"run_ns": 76_000_000, "wait_ns": 2_000_000_000})
    figures = round_figures(a, b, "Binlog_commits")
    assert figures["cpu_ms_per_commit"] == pytest.approx(0.11)
    assert figures["cpu_wait_ms_per_commit"] == pytest.approx(3.25)
    # Not readable (another kernel, the process gone): no figure, never a zero.
    bare = round_figures(Sample(0.0, {"Binlog_commits": 0}), b, "Binlog_commits")
    assert bare["cpu_ms_per_commit"] is None and bare["cpu_wait_ms_per_commit"] is None
    assert parse_schedstat("100 2000 5\n300 500 7\n") == {"run_ns": 400, "wait_ns": 2500}
    assert parse_schedstat("") == {}


def test_the_servers_cpu_figures_are_shown_not_judged() -> None:
    """Background work and the machine's other work move them as much as a setting does."""
    before, after = load("trixie-same-a.json"), load("trixie-same-b.json")

    def with_cpu(w: Watch, wait_ms: float) -> Watch:
        samples = []
        for i, s in enumerate(w.samples):
            commits = s.status.get("Innodb_max_trx_id", 0) // 2
            cpu = {"run_ns": int(commits * 0.1e6 + i), "wait_ns": int(commits * wait_ms * 1e6)}
            samples.append(Sample(s.elapsed, s.status, s.disk, s.timers, cpu))
        return Watch(**{**w.__dict__, "samples": tuple(samples)})

    found = compare_watches(with_cpu(before, 0.01), with_cpu(after, 3.0))
    by_key = {f.key: f for f in found.figures}
    wait = by_key["cpu_wait_ms_per_commit"]
    assert wait.verdict == "not_compared" and "other work" in wait.note
    assert wait.before == pytest.approx(0.01, rel=0.01)
    assert wait.after == pytest.approx(3.0, rel=0.01)
    assert by_key["cpu_ms_per_commit"].verdict == "not_compared"
    assert by_key["cpu_ms_per_commit"].before == pytest.approx(0.1, rel=0.01)
    text = comparison_text(before, after, found)
    assert "the server's wait for a CPU per commit: 0.010 ms → 3.000 ms  not compared" in text
    assert "Not judged: the server's CPU time and its wait for a CPU follow" in text
