"""The benchmark's clients as ``mariadb-slap`` / ``mysqlslap`` on the target.

The last resort before InnoTune's own client over the link: the client packages ship it on
nearly every MySQL and MariaDB host, so a host with only the server and its client still gets
a benchmark measured next to the server. It runs a file of the benchmark's statements
(:mod:`app.bench.workloads`) in a loop, one connection per client, until the row cap or until
the runner ends its connections at the time budget.

mysqlslap times no single transaction, so a run reports no latency percentiles: its figures
come from the server (the committed rows in the scratch table, counted afterwards) and from
the target's clock around the program, and the mean latency from Little's law (clients ×
seconds / commits). The password travels in an option file read from standard input.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.bench.cpu import cpu_between
from app.bench.figures import rate
from app.bench.program import TargetLogin, TargetRoute, run_program
from app.bench.workloads import BULK_INSERTS_PER_TX, PREFILL_ROWS, ROWS_PER_TX, Statements
from app.domain.bench import Latency, WorkloadResult
from app.domain.errors import InnoTuneError
from app.mysql.session import Session
from app.remote.transport import Transport

if TYPE_CHECKING:
    from app.bench.runner import Benchmark

_FINISHED = re.compile(r"Average number of seconds to run all queries")

#: Rows each transaction inserts (what the count of the table finds), by workload.
INSERTS_PER_TX = {**ROWS_PER_TX, "small_tx": 3}

#: A run ended at its time budget that lasted less than this share of it measured nothing.
SHORTEST_SHARE = 0.5


@dataclass(frozen=True)
class SlapRoute(TargetRoute):
    """How to run mysqlslap on the target and log in from it.

    Attributes:
        program: the program's path on the target (mariadb-slap or mysqlslap).
    """

    program: str = "mysqlslap"

    @property
    def spreads_writes(self) -> bool:
        """No: every client runs one fixed list of statements, so no row is picked at random."""
        return False

    def run(
        self, bench: Benchmark, control: Session, workload: str, threads: int
    ) -> WorkloadResult:
        """One workload at one client count, as mysqlslap on the target."""
        return run_slap(bench, control, workload, threads)


def find_slap(
    transport: Transport, login: TargetLogin, server_pid: int | None = None
) -> SlapRoute | None:
    """A route to run mariadb-slap (or mysqlslap) on the target; None when it has neither."""
    probe = 'p=$(command -v mariadb-slap || command -v mysqlslap) && echo "$p" && "$p" --version'
    found = transport.run(["sh", "-c", probe], timeout=20)
    lines = found.out.strip().splitlines() if found.ok else []
    if len(lines) < 2 or not lines[0].startswith("/"):
        return None
    program = lines[0].strip()
    # "Ver 1.0 Distrib 10.11.19-MariaDB", "from 11.8.9-MariaDB", "Ver 9.7.4-2": the server's.
    release = re.search(r"\d+\.\d+\.\d+", lines[1])
    version = f" {release.group(0)}" if release else ""
    engine = f"{program.rsplit('/', 1)[-1]}{version} on the target"
    return SlapRoute.found(transport, login, engine, server_pid, program=program)


def statements(workload: str) -> list[str]:
    """The statements one client runs in a loop: the benchmark's own, as in its other engines.

    Every client runs the same list from its start, so the small transaction's UPDATE picks
    its row on the server (a user variable), else the clients would queue on the same rows.
    """
    source = Statements(workload, seed=1)
    if workload == "autocommit":
        return source.singles
    if workload == "bulk":
        return ["BEGIN", *([source.bulk] * BULK_INSERTS_PER_TX), "COMMIT"]
    out = []
    for i in range(0, 96, 3):
        out += ["BEGIN", *source.singles[i : i + 3]]
        out.append(f"SET @innotune_row = FLOOR(1 + RAND() * {PREFILL_ROWS})")
        out.append(f"UPDATE {source.table} SET k = k + 1 WHERE id = @innotune_row")  # noqa: S608
        out.append("COMMIT")
    return out


def transactions_in(workload: str, listed: list[str]) -> int:
    """How many transactions one pass over ``listed`` commits."""
    if workload == "autocommit":
        return len(listed)
    return listed.count("COMMIT")


def _argv(
    route: SlapRoute, queries: str, schema: str, threads: int, count: int
) -> tuple[list[str], bytes | None]:
    argv = [route.program]
    stdin = None
    if route.password is not None:
        argv.append("--defaults-extra-file=/dev/stdin")
        stdin = f"[client]\npassword={route.password}\n".encode()
    argv.append(f"--user={route.user}")
    if route.socket:
        argv.append(f"--socket={route.socket}")
    else:
        argv += ["--protocol=TCP", "--host=127.0.0.1", f"--port={route.port or 3306}"]
    argv += [
        f"--create-schema={schema}",
        "--no-drop",
        f"--query={queries}",
        "--delimiter=;",
        f"--concurrency={threads}",
        "--iterations=1",
        f"--number-of-queries={count}",
    ]
    return argv, stdin


def run_slap(bench: Benchmark, control: Session, workload: str, threads: int) -> WorkloadResult:
    """One workload at one client count, as mysqlslap on the target.

    Raises:
        InnoTuneError: mysqlslap failed (not when the run was cancelled or timed out).
    """
    route = bench.route
    assert isinstance(route, SlapRoute)
    per_tx = ROWS_PER_TX[workload]
    listed = statements(workload)
    per_pass = transactions_in(workload, listed)
    max_tx = max(threads, bench.options.row_cap // per_tx)
    # mysqlslap counts statements, shared out among the clients: whole passes per client.
    passes = max(1, max_tx // (per_pass * threads))
    count = passes * len(listed) * threads
    before = _rows(control, bench.schema, workload)
    command: list[str] = []

    def argv(queries: str) -> tuple[list[str], bytes | None]:
        made, stdin = _argv(route, queries, bench.schema, threads, count)
        command[:] = made
        return made, stdin

    # mysqlslap stops only at its statement count: at the time budget the watch ends it.
    text = (";\n".join(listed) + ";\n").encode()
    run = run_program(bench, control, route, ("queries.sql", text), argv, bench.run_seconds)
    if _FINISHED.search(run.result.out):
        why = "rows" if max_tx * per_tx >= bench.options.max_rows else "bytes"
    elif run.stopped:
        why = run.stopped
    else:
        out = (run.result.err or run.result.out).strip()
        raise InnoTuneError(
            f"{route.program} on the target failed: {out[-400:]}",
            f"Try it by hand on the target: {shlex.join(command)}",
        )
    commits = (_rows(control, bench.schema, workload) - before) // INSERTS_PER_TX[workload]
    seconds = run.seconds or (run.cpu_after.at - run.cpu_before.at)
    if why == "time" and seconds < bench.run_seconds * SHORTEST_SHARE:
        # Ended at the budget, yet it ran a fraction of it (it started late): what it did is
        # its start, not the server's rate, so the run shows as too short to measure.
        commits = 0
    rows = commits * per_tx
    return WorkloadResult(
        workload=workload,
        threads=threads,
        seconds=round(seconds, 3),
        commits=commits,
        rows=rows,
        commits_per_s=rate(commits, seconds),
        rows_per_s=rate(rows, seconds),
        latency=_mean_only(commits, seconds, threads),
        counters=run.track.counters(),
        stopped=why,
        cpu=cpu_between(
            run.cpu_before,
            run.cpu_after,
            client_cpu_s=run.client_cpu_s,
            seconds=seconds,
            threads=threads,
            where="target",
        ),
    )


def _rows(control: Session, schema: str, workload: str) -> int:
    """Committed rows in the workload's table (the prefill included)."""
    found = control.query(f"SELECT COUNT(*) FROM `{schema}`.bench_{workload}")  # noqa: S608
    return int(found[0][0] or 0) if found else 0


def _mean_only(commits: int, seconds: float, threads: int) -> Latency:
    """Little's law: each client always has one transaction in flight."""
    if not commits:
        return Latency(percentiles=False)
    return Latency(mean_ms=threads * seconds / commits * 1000.0, percentiles=False)
