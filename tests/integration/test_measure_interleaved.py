"""A change that applies live is measured interleaved: old and new values in turn, round by round.

The flow both faces run (:func:`app.flows.measured.measured_apply`), on a private MariaDB:
innodb_flush_log_at_trx_commit 1 → 0 set live by the job, then the benchmark alternates the
old and the new value between its rounds, adding rounds until every verdict is decided (or
the budget runs out), and ends with the new value in force.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from app.cli import build_parser
from app.commands.common import login
from app.flows.apply import ApplyOptions, apply_preview
from app.flows.inspecting import inspect_connected
from app.flows.measure import MeasureOptions, comparison_text
from app.flows.measured import Measuring, measured_apply, method_for
from app.flows.planning import plan_for
from app.flows.preview import preview_plan
from app.practice.server import PrivateServer
from tests.hosts.util import need_root
from tests.integration.test_apply import remove_jobs_and_snapshots, variable


def test_a_live_change_is_measured_interleaved_and_ends_on_the_new_value(
    private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    parser, _ = build_parser()
    args = parser.parse_args(
        ["apply", "local", "--instance", str(server.socket_path), "--crash-loss", "any"]
        + ["--fit-os", "off", "--fit-disks", "off", "--memory-share", "keep", "--redo", "keep"]
    )
    from app.commands.sliders import positions_from_args

    conn, target, secrets = login(args)
    ids: list[str] = []
    try:
        facts = inspect_connected(conn, sample_seconds=0.0, say=lambda _t: None)
        plan = plan_for(facts, positions_from_args(args, facts))
        preview = preview_plan(plan, facts, conn, "reset")
        method = method_for(preview)
        assert method.interleaved, method.why
        assert method.values == (("innodb_flush_log_at_trx_commit", "1", "0"),)
        assert facts.server is not None and conn.transport is not None
        transport, server_facts = conn.transport, facts.server

        def apply() -> object:
            status = apply_preview(
                transport, preview, server_facts, plan, ApplyOptions(), on_step=lambda _s: None
            )
            ids.append(status.job_id)
            return status

        # What each round of each run ran under, seen by the server as the rounds go: the
        # value is read at the start of each step (the benchmark's own lines announce them).
        seen: list[tuple[str, str]] = []

        def say(label: str, text: str) -> None:
            if text.startswith("Run "):
                seen.append((text, variable(server, "innodb_flush_log_at_trx_commit")))

        # One workload at 1 and 4 clients, half-second rounds: seconds, not minutes.
        options = MeasureOptions(
            seconds=3.0, workloads=("autocommit",), engine="innotune", budget=40.0
        )
        cancel = threading.Event()
        measuring = Measuring(
            conn, target, secrets, options, cancel=cancel, say=say, progress=lambda _f: None
        )
        started = time.monotonic()
        done = measured_apply(measuring, apply, method, cancel=cancel)  # type: ignore[arg-type]
        took = time.monotonic() - started
    finally:
        conn.close()
        remove_jobs_and_snapshots(ids)
    assert done.status is not None and done.status.state == "applied", done
    assert done.before is not None and done.after is not None, done.no_after
    found = done.measurement
    assert found is not None and found.method == "interleaved"
    assert found.before_rounds == found.after_rounds > 3  # 3 a side never decide
    # Alternating: each run's round taken on the old value, then on the new one.
    assert [v for _, v in seen] == ["1", "0"] * (len(seen) // 2), seen
    assert done.before.settings["innodb_flush_log_at_trx_commit"] == "1"
    assert done.after.settings["innodb_flush_log_at_trx_commit"] == "0"
    # Ends on the new value, which the snapshot's rollback can still undo.
    assert variable(server, "innodb_flush_log_at_trx_commit") == "0"
    verdicts = {(v.workload, v.threads): v for v in done.after.verdicts(done.before)}
    single = verdicts[("autocommit", 1)]
    table = comparison_text(done.before, done.after)
    if found.stopped == "decided":
        assert single.verdict == "faster", table
    else:
        # Beside the suite's other sessions a half-second round can stall (the clients are
        # the limit here): the budget may run out first. Then the verdict waits ("undecided",
        # and says why) and never claims the opposite; whether it decides under load is
        # tests/benchmarks/bench_measured.py's (a), over trials.
        assert found.stopped == "budget", found
        assert single.verdict in ("faster", "undecided"), table
        assert (single.change_percent or 0) > 0, table
        assert "the time budget ran out before every verdict was decided" in table, table
    # Rounds were added until decided or the budget ran out, as many on each side of a run.
    assert single.before_rounds == single.after_rounds > 3
    assert all(v.before_rounds == v.after_rounds for v in verdicts.values())
    assert found.seconds_used <= found.budget_seconds + 5 and took < 90
    text = comparison_text(done.before, done.after)
    assert f"Method: {found.method_text()} (the old and the new values set in turn" in text
    assert "Time budget 40 s" in text, text


def test_a_resize_set_live_is_switched_once_a_round_with_each_pool_read_full(
    private_server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The buffer pool and the redo log resized live, as a plan that grows them is measured.

    MariaDB 10.11 resizes both with SET GLOBAL and returns once done. Each side takes whole
    rounds (A B, then B A, …), so a round costs one resize, not one per step; one data set
    three times the old pool is written first, and each side reads it in after its switch,
    so that the larger pool's rounds run on a pool holding it, as a running server's would.
    """
    need_root()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    server = private_server
    mib = 2**20
    log = variable(server, "innodb_log_file_size")
    values = (
        ("innodb_buffer_pool_size", str(8 * mib), str(64 * mib)),
        ("innodb_log_file_size", log, str(2 * int(log))),
    )
    parser, _ = build_parser()
    conn, target, secrets = login(
        parser.parse_args(["bench", "local", "--instance", str(server.socket_path)])
    )
    seen: list[tuple[str, int, int]] = []  # (pool size, its data pages, the log's size)
    rounds: dict[int, list[str]] = {}  # the sides each round's steps ran on, in order

    def say(_label: str, text: str) -> None:
        if text.startswith("Run "):
            pages = server.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_data'")
            pool = variable(server, "innodb_buffer_pool_size")
            seen.append(
                (pool, int(pages.split()[-1]), int(variable(server, "innodb_log_file_size")))
            )
            found = re.search(r", round (\d+) of", text)
            side = "old" if pool == str(8 * mib) else "new"
            rounds.setdefault(int(found[1]) if found else 1, []).append(side)

    options = MeasureOptions(seconds=3.0, workloads=("autocommit",), engine="innotune", budget=30.0)
    measuring = Measuring(
        conn, target, secrets, options, cancel=threading.Event(), say=say, progress=lambda _f: None
    )
    try:
        before, after, found = measuring.interleaved(values, "", "")
        assert measuring.restore_new(values, "") == ""
        assert variable(server, "innodb_buffer_pool_size") == str(64 * mib)
    finally:
        conn.close()
        server.query(f"SET GLOBAL innodb_buffer_pool_size = {128 * mib}")
        server.query(f"SET GLOBAL innodb_log_file_size = {log}")
    assert found.method == "interleaved" and found.before_rounds == found.after_rounds >= 3
    # One data set for both sides: three times the old pool, said once.
    assert before.data_bytes == after.data_bytes > 2.5 * 8 * mib
    assert "writing it took" in found.data_set and "once for both sides" in found.data_set
    # Whole rounds in turn, the order turning each round: round 1 old then new, round 2 new
    # then old, … Each run (1 and 4 clients) takes a round on both sides; a run decided gets
    # no more rounds, so a later round may have one run.
    assert sorted(rounds) == list(range(1, len(rounds) + 1)) and len(rounds) >= 3, rounds
    for n, sides in rounds.items():
        first, second = ("old", "new") if n % 2 else ("new", "old")
        half = len(sides) // 2
        assert sides == [first] * half + [second] * half, rounds
    # The redo log switched with the pool, each side on its own size.
    assert {(p, size) for p, _, size in seen} == {
        (str(8 * mib), int(log)),
        (str(64 * mib), 2 * int(log)),
    }, seen
    # The larger pool's rounds began with the data set read in: more pages than the whole
    # old pool holds (512 of 16 KiB).
    assert all(pages > 8 * mib // 16384 for pool, pages, _ in seen if pool == str(64 * mib)), seen
    assert before.settings["innodb_buffer_pool_size"] == str(8 * mib)
    assert after.settings["innodb_buffer_pool_size"] == str(64 * mib)
