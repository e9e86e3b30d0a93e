"""Where a run's CPU went, and when the clients or busy CPUs, not the server, set its pace."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

from app.bench.cpu import CpuProbe, CpuSample, cpu_between
from app.bench.figures import judge_cpu, merge_rounds, parse_host_cpu, parse_proc_cpu
from app.bench.loadgen import BOOTSTRAP, program, settings_line
from app.bench.program import TIMED, children_cpu
from app.bench.report import comparison_text, report_text
from app.domain.bench import (
    BenchReport,
    Counters,
    CpuUse,
    Latency,
    WorkloadResult,
    change_percent,
    change_text,
)
from app.domain.pace import (
    CPU_WAIT_NOTE,
    cpu_wait,
    cpu_wait_summary,
    cpu_wait_text,
    pace_text,
    parse_schedstat,
)
from app.remote.local import LocalTransport


def judge(**kw: object) -> CpuUse:
    args: dict[str, object] = dict(
        client_cpu_s=1.0,
        server_cpu_s=8.0,
        host_busy=0.5,
        cpus=4,
        seconds=10.0,
        threads=1,
        where="target",
    )
    args.update(kw)
    return judge_cpu(**args)  # type: ignore[arg-type]


def test_a_client_with_cpu_to_spare_is_not_the_limit() -> None:
    cpu = judge()
    assert cpu.client_cores == 0.1 and cpu.server_cores == 0.8 and cpu.host_busy == 0.5
    assert not cpu.client_bound and cpu.why == ""


def test_a_client_busy_most_of_the_run_is_the_limit() -> None:
    cpu = judge(client_cpu_s=8.0, threads=1)
    assert cpu.client_bound and "80% of a core busy per client" in cpu.why
    # The same CPU spread over four clients leaves each one idle most of the time.
    assert not judge(client_cpu_s=8.0, threads=4).client_bound


def test_a_full_host_with_a_greedy_client_is_client_bound() -> None:
    cpu = judge(client_cpu_s=5.0, server_cpu_s=9.0, host_busy=0.97, threads=4)
    assert cpu.client_bound and "97% busy" in cpu.why
    # A full host where the server takes nearly all of it: the server is the limit.
    assert not judge(client_cpu_s=2.0, server_cpu_s=15.0, host_busy=0.97, threads=4).client_bound


def test_clients_over_the_link_are_the_limit() -> None:
    cpu = judge(client_cpu_s=0.5, server_cpu_s=None, host_busy=None, where="link")
    assert cpu.client_bound and "SSH link" in cpu.why and cpu.server_cores is None


def test_unmeasured_figures_stay_empty() -> None:
    cpu = judge(client_cpu_s=None, server_cpu_s=None, host_busy=None)
    assert cpu.client_cores is None and cpu.server_cores is None and not cpu.client_bound


def test_proc_parsing() -> None:
    # comm may hold spaces and parentheses: fields count from the last ")".
    line = "1234 (my (odd) d) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 30 0 100 0"
    assert parse_proc_cpu(line, 100) == 4.0
    assert parse_proc_cpu("garbage") is None
    stat = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n"
    assert parse_host_cpu(stat) == (150, 1000)
    assert parse_host_cpu("nothing") is None


def test_cpu_between_two_readings() -> None:
    before = CpuSample(0.0, server_s=10.0, host=(100, 1000), cpus=2)
    after = CpuSample(5.0, server_s=14.0, host=(1000, 2000), cpus=2)
    cpu = cpu_between(before, after, client_cpu_s=1.0, seconds=5.0, threads=1, where="target")
    assert cpu.server_cores == 0.8 and cpu.client_cores == 0.2 and cpu.host_busy == 0.9
    empty = cpu_between(CpuSample(0.0), CpuSample(1.0), client_cpu_s=None, seconds=1.0,
                        threads=1, where="target")  # fmt: skip
    assert empty.server_cores is None and empty.host_busy is None


def test_sysbench_cpu_from_the_shells_times() -> None:
    # A real shell's `times` after a child that used CPU.
    done = subprocess.run(
        ["sh", "-c", TIMED, "python3", "-c", "sum(range(3000000))"],
        capture_output=True,
        text=True,
        check=True,
    )
    used = children_cpu(done.stderr)
    assert used is not None and 0.01 < used < 30
    assert children_cpu("no times here") is None


def result(bound: bool, rate: float) -> WorkloadResult:
    why = "the clients ran on this computer" if bound else ""
    return workload_run(CpuUse(0.9, 0.4, 0.95, 2, "link", bound, why), rate)


def workload_run(cpu: CpuUse, rate: float, threads: int = 4) -> WorkloadResult:
    """A 10 s autocommit run at ``rate`` commits/s with these CPU figures."""
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
        cpu=cpu,
        rounds=tuple(rate * f for f in (0.98, 0.99, 1.0, 1.01, 1.02)),
    )


def test_reports_say_which_runs_were_client_bound() -> None:
    before = BenchReport("t", "now", "innotune", 10.0, (result(True, 100.0),), label="before")
    after = BenchReport("t", "now", "innotune", 10.0, (result(False, 250.0),), label="after")
    text = report_text(before)
    assert "Client-bound" in text and "the clients ran on this computer" in text
    assert "0.90" in text and "0.40" in text  # the CPU columns
    assert "Client-bound" not in report_text(after)
    assert "client-bound" in comparison_text(before, after)
    assert before.client_bound == before.results and after.client_bound == ()
    assert BenchReport.from_json(before.to_json()) == before
    # A report saved before the CPU figures existed still reads.
    data = json.loads(after.to_json())
    for r in data["results"]:
        del r["cpu"]
    assert BenchReport.from_json(json.dumps(data)).results[0].cpu is None


def test_every_face_words_a_client_bound_change_the_same() -> None:
    before, after = result(False, 100.0), result(False, 250.0)
    # Five rounds a side, every one beaten: decided, with the change's interval.
    assert change_text(before, after) == "faster: +150% (+140% to +160%)"
    assert change_percent(before, after) == 150.0
    bound_faster = "faster: +150% (+140% to +160%) (client-bound)"
    assert change_text(result(True, 100.0), after) == bound_faster
    assert change_text(before, result(True, 40.0)) == "slower: -60% (-62% to -58%) (client-bound)"
    assert change_text(None, after) == change_text(before, None) == ""
    assert change_percent(result(False, 0.0), after) is None  # no rate to compare with
    reports = [
        BenchReport("t", "now", "innotune", 10.0, (r,), label=label)
        for r, label in ((result(False, 100.0), "before"), (result(True, 250.0), "after"))
    ]
    line = comparison_text(*reports).splitlines()[1]
    assert "+150%" in line and line.endswith("(client-bound)")
    assert "Not like for like" not in comparison_text(*reports)
    other = dataclasses.replace(reports[1], engine="sysbench 1.0.20")
    assert comparison_text(reports[0], other).splitlines()[-1] == (
        "Not like for like: before ran with innotune, after with sysbench 1.0.20; "
        "part of the change is the clients'."
    )


def test_the_load_generator_is_stdlib_python_that_compiles() -> None:
    text = program()
    compile(text, "innotune-loadgen", "exec")
    imports = {
        line.split()[1].split(".")[0]
        for line in text.decode().splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= set(sys.stdlib_module_names), imports - set(sys.stdlib_module_names)
    assert "innotune-loadgen" in BOOTSTRAP and "sys.argv[1]" in BOOTSTRAP


def test_the_password_goes_in_the_settings_line_only() -> None:
    from app.bench.loadgen import LoadgenRoute
    from app.remote.local import LocalTransport

    route = LoadgenRoute(LocalTransport(), "/run/s.sock", None, "bob", password="s3cret")
    line = settings_line(route, "innotune_bench_x", "autocommit", 2, 5.0, 100)
    cfg = json.loads(line)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert cfg["password"] == "s3cret" and cfg["user"] == "bob" and cfg["threads"] == 2


# -- busy CPUs: the server's threads' wait for one ----------------------------------------


def run(wait: float | None, *, threads: int = 1, rate: float = 285.0) -> WorkloadResult:
    """A 10 s run at ``rate`` commits/s whose server used 0.04 cores and waited ``wait``."""
    return workload_run(CpuUse(0.05, 0.04, 1.0, 2, "target", server_wait=wait), rate, threads)


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
