"""The benchmark's clients as sysbench on the target, when it has sysbench.

sysbench is C + LuaJIT: its clients cost far less CPU than Python ones, so on a fast
server it measures the server rather than the client. It runs a Lua script of ours with
the very statements of :mod:`app.bench.workloads`, and prints a latency histogram, from
which the same percentiles are read. The scratch schema, the tables and the counters stay
with the runner; sysbench only runs the transactions.

A password never reaches sysbench's command line: it goes in an option file read from
standard input (``--config-file=/dev/stdin``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.bench.cpu import cpu_between
from app.bench.figures import latency_from_histogram, rate
from app.bench.program import TargetLogin, TargetRoute, run_program
from app.bench.workloads import (
    BULK_INSERTS_PER_TX,
    BULK_ROWS_PER_INSERT,
    PREFILL_ROWS,
    ROWS_PER_TX,
)
from app.domain.bench import WorkloadResult
from app.domain.errors import InnoTuneError
from app.mysql.session import Session
from app.remote.transport import Transport

if TYPE_CHECKING:
    from app.bench.runner import Benchmark

SCRIPT = f"""\
-- InnoTune's write workloads for sysbench: the statements of app/bench/workloads.py.
sysbench.cmdline.options = {{
  workload = {{"autocommit, small_tx or bulk", "autocommit"}},
  data_rows = {{"rows of bench_data the one-row writes spread over (0: none)", 0}},
}}

local function row()
  return string.format("(%d, '%s', '%s')", sysbench.rand.default(1, 999999),
    sysbench.rand.string(string.rep("@", 120)), sysbench.rand.string(string.rep("@", 60)))
end

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  wl = sysbench.opt.workload
  tbl = "bench_" .. wl
  ins = "INSERT INTO " .. tbl .. " (k, c, pad) VALUES "
  singles = {{}}
  for i = 1, 256 do singles[i] = ins .. row() end
  if wl == "bulk" then
    local rows = {{}}
    for i = 1, {BULK_ROWS_PER_INSERT} do rows[i] = row() end
    bulk = ins .. table.concat(rows, ", ")
  end
  data_rows = sysbench.opt.data_rows
  n = 0
end

local function spread()
  return "UPDATE bench_data SET k = k + 1 WHERE id = " .. sysbench.rand.uniform(1, data_rows)
end

function event()
  n = n + 1
  if wl == "autocommit" then
    if data_rows > 0 then con:query(spread()) else con:query(singles[n % 256 + 1]) end
  elseif wl == "small_tx" then
    con:query("BEGIN")
    for i = 0, 2 do con:query(singles[(n * 3 + i) % 256 + 1]) end
    if data_rows > 0 then
      con:query(spread())
    else
      con:query("UPDATE " .. tbl .. " SET k = k + 1 WHERE id = " ..
        sysbench.rand.default(1, {PREFILL_ROWS}))
    end
    con:query("COMMIT")
  else
    con:query("BEGIN")
    for i = 1, {BULK_INSERTS_PER_TX} do con:query(bulk) end
    con:query("COMMIT")
  end
end

function thread_done()
  con:disconnect()
end
"""  # noqa: S608 - Lua, with our own constants

_TRANSACTIONS = re.compile(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec")
_TOTAL_TIME = re.compile(r"total time:\s+([\d.]+)s")
_IGNORED = re.compile(r"ignored errors:\s+(\d+)")
_BUCKET = re.compile(r"^\s*([\d.]+)\s+\|\**\s+(\d+)\s*$")


@dataclass(frozen=True)
class SysbenchRoute(TargetRoute):
    """How to run sysbench on the target and log in from it."""

    def run(
        self, bench: Benchmark, control: Session, workload: str, threads: int
    ) -> WorkloadResult:
        """One workload at one client count, as these clients on the target."""
        return run_sysbench(bench, control, workload, threads)


@dataclass(frozen=True)
class SysbenchOutput:
    """What one sysbench run printed, parsed."""

    transactions: int
    seconds: float
    ignored_errors: int
    histogram: tuple[tuple[float, int], ...]


def parse_output(text: str) -> SysbenchOutput:
    """Parse sysbench's summary and its latency histogram (``--histogram=on``).

    Raises:
        ValueError: the text is not a finished sysbench run.
    """
    tx = _TRANSACTIONS.search(text)
    total = _TOTAL_TIME.search(text)
    if tx is None or total is None:
        raise ValueError("no sysbench summary in the output")
    ignored = _IGNORED.search(text)
    buckets = []
    in_histogram = False
    for line in text.splitlines():
        if line.startswith("Latency histogram"):
            in_histogram = True
            continue
        if in_histogram:
            m = _BUCKET.match(line)
            if m:
                buckets.append((float(m.group(1)), int(m.group(2))))
            elif buckets and not line.strip():
                break
    return SysbenchOutput(
        transactions=int(tx.group(1)),
        seconds=float(total.group(1)),
        ignored_errors=int(ignored.group(1)) if ignored else 0,
        histogram=tuple(buckets),
    )


def find_sysbench(
    transport: Transport, login: TargetLogin, server_pid: int | None = None
) -> SysbenchRoute | None:
    """A route to run sysbench on the target, or None when it has no sysbench 1.x."""
    found = transport.run(["sh", "-c", "command -v sysbench && sysbench --version"], timeout=20)
    version = found.out.strip().splitlines()[-1] if found.ok and found.out.strip() else ""
    if not re.match(r"sysbench 1\.", version):
        return None
    return SysbenchRoute.found(transport, login, version, server_pid)


def _argv(
    route: SysbenchRoute,
    script: str,
    schema: str,
    workload: str,
    threads: int,
    seconds: float,
    data_rows: int = 0,
) -> tuple[list[str], bytes | None]:
    argv = ["sysbench", script, "--db-driver=mysql", f"--mysql-user={route.user}"]
    stdin = None
    if route.password is not None:
        argv.insert(1, "--config-file=/dev/stdin")
        stdin = f"mysql-password={route.password}\n".encode()
    if route.socket:
        argv.append(f"--mysql-socket={route.socket}")
    else:
        argv += ["--mysql-host=127.0.0.1", f"--mysql-port={route.port or 3306}"]
    argv += [
        f"--mysql-db={schema}",
        f"--threads={threads}",
        f"--time={max(1, round(seconds))}",
        "--histogram=on",
        "--report-interval=0",
        "--mysql-ignore-errors=1213,1205",
        f"--workload={workload}",
        f"--data_rows={data_rows}",
        "run",
    ]
    return argv, stdin


def run_sysbench(bench: Benchmark, control: Session, workload: str, threads: int) -> WorkloadResult:
    """One workload at one client count, as sysbench on the target.

    Raises:
        InnoTuneError: sysbench failed (not when the run was cancelled).
    """
    route = bench.route
    assert isinstance(route, SysbenchRoute)
    per_tx = ROWS_PER_TX[workload]
    events = max(1, bench.options.row_cap // per_tx)
    command: list[str] = []

    def argv(script: str) -> tuple[list[str], bytes | None]:
        made, stdin = _argv(
            route, script, bench.schema, workload, threads, bench.run_seconds, bench.data_rows
        )
        # The row cap, as a number of transactions sysbench stops at.
        made.insert(-1, f"--events={events}")
        command[:] = made
        return made, stdin

    # sysbench keeps its own time; the watch only samples and cancels.
    run = run_program(
        bench, control, route, ("innotune.lua", SCRIPT.encode()), argv, bench.run_seconds + 60
    )
    why = run.stopped
    try:
        parsed = parse_output(run.result.out)
    except ValueError:
        if why == "cancelled":
            parsed = SysbenchOutput(0, 0.0, 0, ())
        else:
            raise InnoTuneError(
                f"sysbench failed (exit {run.result.exit_status}): "
                f"{(run.result.err or run.result.out).strip()[-400:]}",
                f"Try it by hand: {shlex.join(command)}",
            ) from None
    if why != "cancelled":
        why = "rows" if parsed.transactions >= events else "time"
    rows = parsed.transactions * per_tx
    return WorkloadResult(
        workload=workload,
        threads=threads,
        seconds=parsed.seconds,
        commits=parsed.transactions,
        rows=rows,
        commits_per_s=rate(parsed.transactions, parsed.seconds),
        rows_per_s=rate(rows, parsed.seconds),
        latency=latency_from_histogram(parsed.histogram),
        counters=run.track.counters(),
        stopped=why,
        errors=parsed.ignored_errors,
        cpu=cpu_between(
            run.cpu_before,
            run.cpu_after,
            client_cpu_s=run.client_cpu_s,
            # sysbench's own time: the readings around it also span its start and stop.
            seconds=parsed.seconds or (run.cpu_after.at - run.cpu_before.at),
            threads=threads,
            where="target",
        ),
    )
