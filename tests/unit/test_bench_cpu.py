"""Where a run's CPU went and when the clients, not the server, were the limit."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from app.bench.cpu import CpuSample, cpu_between
from app.bench.figures import judge_cpu, parse_host_cpu, parse_proc_cpu
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
    return WorkloadResult(
        workload="autocommit",
        threads=4,
        seconds=10.0,
        commits=int(rate * 10),
        rows=int(rate * 10),
        commits_per_s=rate,
        rows_per_s=rate,
        latency=Latency(1.0, 2.0, 3.0, 4.0, 1.5),
        counters=Counters(redo_bytes=1 << 20, pages_written=10, data_fsyncs=5),
        cpu=CpuUse(
            0.9, 0.4, 0.95, 2, "link", bound, "the clients ran on this computer" if bound else ""
        ),
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
