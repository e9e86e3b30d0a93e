"""`innotune watch` on the packaged servers while a steady client of the host's own writes.

A real change set live (innodb_flush_log_at_trx_commit 1 → 2) must read as fewer fsyncs per
commit; the same server watched twice must read as neither better nor worse. The commits the
watch counts must be the client's (a known rate): that checks each line's commit counter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.debian_hosts import DebianHost
from tests.hosts.workload import SteadyWrites
from tests.integration.test_lifecycle import innotune, ok

RATE = 100.0  # commits per second of the host's own client
SECONDS = "7"  # each watch: 7 rounds of 1 s
SMALL_POOL = 24 << 20  # the buffer pool sizes of the pool test
LARGE_POOL = 256 << 20


def _watch(host: DebianHost, tmp_path: Path, change: str | None) -> dict[str, Any]:
    cli, target = innotune(host, tmp_path)
    before = tmp_path / "before.json"
    host.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    try:
        with SteadyWrites(host, RATE) as client:
            ok(cli("watch", *target, "--seconds", SECONDS, "--out", str(before)))
            if change:
                host.sql(change)
            out = ok(
                cli("watch", *target, "--seconds", SECONDS, "--compare", str(before), "--json")
            )
            assert client.running(), "the client stopped during the watches"
    finally:
        host.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    found: dict[str, Any] = json.loads(out)
    for side in ("before", "after"):
        # The commits counted are the client's: each line's counter is the right one.
        assert found["traffic"][side]["commits_per_s"] == pytest.approx(RATE, rel=0.1), found
        assert found["traffic"][side]["rows_per_commit"] == pytest.approx(1.0, rel=0.1), found
    assert found["traffic_alike"], found["why_not"]
    return found


@pytest.mark.parametrize("server_host", ["trixie", "sid", "bullseye"], indirect=True)
def test_trx_commit_2_reads_as_fewer_fsyncs_per_commit(
    server_host: DebianHost, tmp_path: Path
) -> None:
    found = _watch(server_host, tmp_path, "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    fsyncs = found["figures"]["fsyncs_per_commit"]
    assert fsyncs["verdict"] == "better", fsyncs
    assert fsyncs["after"] < fsyncs["before"]
    assert "commits/s" in fsyncs["traffic_before"] and "commits/s" in fsyncs["traffic_after"]
    assert found["settings_changed"]["innodb_flush_log_at_trx_commit"] == {
        "before": "1",
        "after": "2",
    }
    # The server's threads' CPU and wait for one, from their schedstat: shown, not judged.
    for key in ("cpu_ms_per_commit", "cpu_wait_ms_per_commit"):
        cpu = found["figures"][key]
        assert cpu["verdict"] == "not_compared" and "shown, not judged" in cpu["note"], cpu
        assert cpu["before"] is not None and cpu["after"] is not None, cpu
        assert cpu["before_rounds"] >= 5 and cpu["after_rounds"] >= 5, cpu
    assert 0 < found["figures"]["cpu_ms_per_commit"]["before"] < 50
    latency = found["figures"]["commit_latency_ms"]
    if server_host.flavour == "mysql":  # performance_schema is on by default there
        # Lower, or undecided: the other sessions' tests write to the same disk beside this
        # one (a measured apply's data set, hundreds of MiB), and a burst of their writes in
        # one window can hide the fsync saved (fresh36: 3.5 → 5.6 ms, undecided). Never
        # called worse; the benchmark (tests/benchmarks/bench_watch.py) shows the saving.
        assert latency["verdict"] in ("better", "undecided"), latency
        if latency["verdict"] == "better":
            assert latency["after"] < latency["before"], latency
    else:
        assert latency["verdict"] == "not_measured"


@pytest.mark.parametrize("server_host", ["trixie"], indirect=True)
def test_an_unchanged_server_reads_neither_better_nor_worse(
    server_host: DebianHost, tmp_path: Path
) -> None:
    found = _watch(server_host, tmp_path, None)
    assert found["settings_changed"] == {}
    for key, fig in found["figures"].items():
        assert fig["verdict"] not in ("better", "worse"), (key, fig)
    assert found["figures"]["fsyncs_per_commit"]["verdict"] in ("no_change", "undecided")


@pytest.mark.parametrize("server_host", ["trixie"], indirect=True)
def test_a_larger_buffer_pool_reads_as_fewer_pages_read_per_commit(
    server_host: DebianHost, tmp_path: Path
) -> None:
    """Updates at random in a table three times the pool, then the pool grown live past it."""
    host = server_host
    cli, target = innotune(host, tmp_path)
    before = tmp_path / "before.json"
    pool = host.sql("SELECT @@GLOBAL.innodb_buffer_pool_size")
    host.sql(f"SET GLOBAL innodb_buffer_pool_size = {SMALL_POOL}")
    try:
        # 2^18 rows of about 250 bytes: some 70 MiB, against a 24 MiB pool.
        with SteadyWrites(host, RATE, update_rows=1 << 18) as client:
            ok(cli("watch", *target, "--seconds", SECONDS, "--out", str(before)))
            host.sql(f"SET GLOBAL innodb_buffer_pool_size = {LARGE_POOL}")
            # The server has worked a while with its new pool: the table is in it.
            host.sql("SELECT COUNT(*) FROM steady.t WHERE pad <> ''")
            out = ok(
                cli("watch", *target, "--seconds", SECONDS, "--compare", str(before), "--json")
            )
            assert client.running(), "the client stopped during the watches"
    finally:
        host.sql(f"SET GLOBAL innodb_buffer_pool_size = {pool}")
    found: dict[str, Any] = json.loads(out)
    assert found["traffic_alike"], found["why_not"]
    reads = found["figures"]["pages_read_per_commit"]
    print(reads, found["traffic"])
    assert reads["before"] > 0.3, reads  # the small pool lacked most pages an update needed
    assert reads["verdict"] == "better" and reads["after"] < reads["before"] / 10, reads
    assert found["settings_changed"]["innodb_buffer_pool_size"] == {
        "before": str(SMALL_POOL),
        "after": str(LARGE_POOL),
    }
