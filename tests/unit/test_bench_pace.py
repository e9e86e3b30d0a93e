"""When busy CPUs, not the server, set a run's pace: the server's threads' wait for a CPU."""

from __future__ import annotations

import json
import subprocess
import time

from app.bench.cpu import CpuProbe, CpuSample, cpu_between
from app.bench.figures import merge_rounds
from app.bench.report import comparison_text, report_text
from app.domain.bench import BenchReport, Counters, CpuUse, Latency, WorkloadResult
from app.domain.pace import (
    CPU_WAIT_NOTE,
    cpu_wait,
    cpu_wait_summary,
    cpu_wait_text,
    pace_text,
    parse_schedstat,
)
from app.remote.local import LocalTransport


def run(wait: float | None, *, threads: int = 1, rate: float = 285.0) -> WorkloadResult:
    """A 10 s run at ``rate`` commits/s whose server used 0.04 cores and waited ``wait``."""
    return WorkloadResult(
        workload="autocommit",
        threads=threads,
        seconds=10.0,
        commits=int(rate * 10),
        rows=int(rate * 10),
        commits_per_s=rate,
        rows_per_s=rate,
        latency=Latency(1.0, 2.0, 3.0, 4.0, 1.5),
        counters=Counters(redo_bytes=1 << 20, pages_written=10, data_fsyncs=5),
        cpu=CpuUse(0.05, 0.04, 1.0, 2, "target", server_wait=wait),
        rounds=(rate,) * 3,
    )


def test_schedstat_lines_sum_their_run_queue_wait() -> None:
    # /proc/PID/task/*/schedstat: ns on a CPU, ns waiting for one, slices.
    found = parse_schedstat("100 2000000000 5\n300 500000000 7\n")
    assert found == {"run_ns": 400, "wait_ns": 2_500_000_000}
    assert parse_schedstat("") == {} and parse_schedstat("garbage\n") == {}


def test_the_wait_between_two_readings_is_a_share_of_the_run() -> None:
    before = CpuSample(0.0, server_s=10.0, host=(100, 1000), cpus=2, server_wait_s=1.0)
    after = CpuSample(5.0, server_s=10.5, host=(1000, 2000), cpus=2, server_wait_s=5.5)
    cpu = cpu_between(before, after, client_cpu_s=0.2, seconds=5.0, threads=1, where="target")
    assert cpu.server_wait == 0.9 and cpu.server_cores == 0.1
    # A thread that ended between the readings takes its wait with it: never below 0.
    gone = CpuSample(5.0, server_s=10.5, host=(1000, 2000), cpus=2, server_wait_s=0.5)
    assert cpu_between(before, gone, client_cpu_s=None, seconds=5.0, threads=1,
                       where="target").server_wait == 0.0  # fmt: skip
    assert cpu_between(CpuSample(0.0), after, client_cpu_s=None, seconds=5.0, threads=1,
                       where="target").server_wait is None  # fmt: skip


def test_a_run_that_waited_most_of_each_commit_was_paced_by_the_cpus() -> None:
    # The trixie host beside two busy loops: 285 commits/s, 3.3 ms of waiting a commit.
    loaded = cpu_wait(run(0.94))
    assert loaded is not None and loaded.paced
    assert loaded.commit_ms == 3.509 and loaded.wait_ms == 3.298 and loaded.run_ms == 0.14
    text = cpu_wait_text(run(0.94))
    assert text == "waited 3.30 ms for a CPU and ran 0.14 ms per commit of 3.51 ms"
    # The quiet machine: 5 µs of waiting against 100 µs of work.
    quiet = cpu_wait(run(0.025, rate=5000.0))
    assert quiet is not None and not quiet.paced and cpu_wait_text(run(0.025, rate=5000.0)) == ""
    # Four clients share the commits: a commit takes each client four times as long.
    four = cpu_wait(run(0.94, threads=4))
    assert four is not None and four.commit_ms == 14.035 and not four.paced
    # Unmeasured, or nothing committed: no figure at all.
    assert cpu_wait(run(None)) is None
    assert cpu_wait(WorkloadResult(**{**run(0.9).__dict__, "commits": 0})) is None


def test_rounds_merge_their_waits_by_time() -> None:
    rounds = [run(0.9), run(0.1)]
    merged = merge_rounds(rounds)
    assert merged.cpu is not None and merged.cpu.server_wait == 0.5


def test_every_face_names_the_runs_that_waited_for_a_cpu() -> None:
    before = BenchReport("t", "now", "innotune", 10.0, (run(0.94),), label="before")
    after = BenchReport("t", "now", "innotune", 10.0, (run(0.01),), label="after")
    text = report_text(before)
    assert CPU_WAIT_NOTE in text and "autocommit × 1: waited 3.30 ms for a CPU" in text
    assert CPU_WAIT_NOTE not in report_text(after)
    note = pace_text([before, after])
    assert note.startswith(CPU_WAIT_NOTE)
    assert note.endswith(
        "Runs paced that way: before: autocommit ×1. For instance before, autocommit ×1: the "
        "server's threads waited 3.30 ms for a CPU and ran 0.14 ms per commit of 3.51 ms."
    )
    # The window names the runs by side and gives one run's figures, not a wall of numbers.
    four = run(2.0, threads=4, rate=71.0)  # 28 ms of waiting in a 56 ms commit
    both = BenchReport("t", "now", "innotune", 10.0, (run(0.94), four), label="before")
    slow = BenchReport("t", "now", "innotune", 10.0, (run(0.01), four), label="after")
    assert "Runs paced that way: before: autocommit ×1, autocommit ×4; after: autocommit ×4." \
        in pace_text([both, slow])  # fmt: skip
    assert pace_text([after]) == ""
    # The Done page's one sentence.
    assert cpu_wait_summary([both, slow]).startswith("The machine's CPUs were busy: in 3 runs ")
    assert "in one run " in cpu_wait_summary([before, after])
    assert cpu_wait_summary([after]) == ""
    # The command line's before/after table says it too (innotune apply --measure).
    compared = comparison_text(before, after)
    assert CPU_WAIT_NOTE in compared and "before: autocommit × 1: waited 3.30 ms" in compared
    assert CPU_WAIT_NOTE not in comparison_text(after, after)
    assert BenchReport.from_json(before.to_json()) == before
    # A report saved before the wait was measured still reads, without one.
    data = json.loads(after.to_json())
    del data["results"][0]["cpu"]["server_wait"]
    assert BenchReport.from_json(json.dumps(data)).results[0].cpu.server_wait is None  # type: ignore[union-attr]


def test_the_probe_reads_a_real_process_waiting_behind_busy_loops() -> None:
    """A process that wakes every millisecond, two busy loops in sessions of their own (as
    other services are): its threads' wait is read from /proc, no root needed."""
    sleeper = subprocess.Popen(["python3", "-c", "import time\nwhile True: time.sleep(0.001)"])
    loops = [
        subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
        for _ in range(2)
    ]
    try:
        probe = CpuProbe(LocalTransport(), sleeper.pid, "target")
        first = probe.sample()
        time.sleep(1.0)
        second = probe.sample()
    finally:
        for p in (*loops, sleeper):
            p.kill()
            p.wait()
    assert first.server_wait_s is not None and second.server_wait_s is not None
    assert second.server_wait_s > first.server_wait_s
