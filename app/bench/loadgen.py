"""The benchmark's clients as InnoTune's load generator, run on the target by its own python3.

Over SSH, a client on this computer waits for the link on every statement, so it measures
the link, not the server. The load generator (``resources/bench/loadgen.py``, standard
library only) runs next to the server instead: one process per client, speaking the MySQL
protocol over the server's Unix socket. Nothing is installed: its text goes to
``python3 -I -c <bootstrap>`` on standard input, followed by one line with the run's
settings (the password, when there is one, travels only there), and is run from memory.

The stream stays open for the run: ``stop`` on it cancels (the clients get SIGTERM), and
closing it kills every client at once, so a lost link leaves nothing running. The scratch
schema, tables and counters stay with the runner, as for sysbench.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.bench.figures import CounterTrack, latency_from_histogram, rate
from app.bench.program import TargetLogin, TargetRoute
from app.bench.workloads import (
    BULK_INSERTS_PER_TX,
    BULK_ROWS_PER_INSERT,
    PREFILL_ROWS,
    ROWS_PER_TX,
)
from app.domain.bench import CpuUse, WorkloadResult
from app.domain.errors import InnoTuneError
from app.mysql.session import Session
from app.remote.transport import Transport
from app.resources import resource_path

if TYPE_CHECKING:
    from app.bench.runner import Benchmark

#: Reads exactly the program's text from stdin and runs it; the rest of stdin is the program's.
BOOTSTRAP = (
    "import sys;n=int(sys.argv[1]);"
    "exec(compile(sys.stdin.buffer.read(n),'innotune-loadgen','exec'))"
)

#: The oldest python3 the load generator runs on.
MIN_PYTHON = (3, 6)


class Stream(Protocol):
    """What a transport's ``open_stream`` gives: a socket, or an SSH channel."""

    def sendall(self, data: bytes) -> Any: ...  # noqa: D102
    def recv(self, size: int) -> bytes: ...  # noqa: D102
    def settimeout(self, timeout: float | None) -> Any: ...  # noqa: D102
    def close(self) -> Any: ...  # noqa: D102


def program() -> bytes:
    """The load generator's text."""
    return resource_path("bench", "loadgen.py").read_bytes()


@dataclass(frozen=True)
class LoadgenRoute(TargetRoute):
    """How to start the load generator on the target and log in from it."""

    def run(
        self, bench: Benchmark, control: Session, workload: str, threads: int
    ) -> WorkloadResult:
        """One workload at one client count, as these clients on the target."""
        return run_loadgen(bench, control, workload, threads)


def find_loadgen(
    transport: Transport, login: TargetLogin, server_pid: int | None = None
) -> LoadgenRoute | None:
    """A route to run the load generator on the target, or None without python3 ≥ 3.6."""
    probe = 'command -v python3 >/dev/null && python3 -I -c "import sys;print(sys.version)"'
    found = transport.run(["sh", "-c", probe], timeout=20)
    version = found.out.split()[0] if found.ok and found.out.strip() else ""
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None or (int(m.group(1)), int(m.group(2))) < MIN_PYTHON:
        return None
    engine = f"innotune-loadgen (python {version} on the target)"
    return LoadgenRoute.found(transport, login, engine, server_pid)


class _Lines:
    """JSON lines read from a stream, with a deadline."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.buf = b""

    def next(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON object, or None at the end of the stream."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.stream.settimeout(min(left, 1.0))
            try:
                data = self.stream.recv(65536)
            except TimeoutError:
                continue
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            value = json.loads(line)
        except ValueError:
            return {"event": "noise", "text": line.decode("utf-8", "replace")}
        return value if isinstance(value, dict) else {"event": "noise", "text": str(value)}


def settings_line(
    route: LoadgenRoute,
    schema: str,
    workload: str,
    threads: int,
    seconds: float,
    max_tx: int,
    data_rows: int = 0,
) -> bytes:
    """The run's settings, as the load generator reads them (the password included)."""
    cfg = {
        "socket": route.socket,
        "port": route.port,
        "user": route.user,
        "password": route.password,
        "schema": schema,
        "workload": workload,
        "threads": threads,
        "seconds": round(seconds, 3),
        "max_tx": max_tx,
        "prefill_rows": PREFILL_ROWS,
        "data_rows": data_rows,
        "bulk_rows": BULK_ROWS_PER_INSERT,
        "bulk_inserts": BULK_INSERTS_PER_TX,
        "server_pid": route.server_pid,
    }
    return json.dumps(cfg).encode() + b"\n"


def run_loadgen(bench: Benchmark, control: Session, workload: str, threads: int) -> WorkloadResult:
    """One workload at one client count, as the load generator on the target.

    Raises:
        InnoTuneError: the load generator could not start or log in, or failed.
    """
    route = bench.route
    assert isinstance(route, LoadgenRoute)
    per_tx = ROWS_PER_TX[workload]
    max_tx = max(1, bench.options.row_cap // per_tx)
    seconds = bench.run_seconds
    track = CounterTrack()
    outcome: dict[str, Any] = {}
    settings = settings_line(
        route, bench.schema, workload, threads, seconds, max_tx, bench.data_rows
    )
    with bench.times.within("start"):
        agent = bench.kept.pop("loadgen", None)
        if agent is None:
            # Started once a benchmark: later rounds send only their settings line.
            text = program()
            argv = ["python3", "-I", "-c", BOOTSTRAP, str(len(text))]
            opener = getattr(route.transport, "open_stream")  # noqa: B009 - both transports
            stream: Stream = opener(argv, sudo=route.sudo)
            agent = _Agent(stream, _Lines(stream))
            bench.closers.append(lambda: _close(bench))
            first = text + settings
        else:
            first = settings
        stream = agent.stream
    kept = False
    try:
        stream.sendall(first)
        lines = agent.lines
        noise: list[str] = []
        ready = threading.Event()
        finished = threading.Event()

        def read() -> None:
            # Logins take a moment; the run itself keeps its own time (plus a margin).
            try:
                deadline = time.monotonic() + 60
                while True:
                    msg = lines.next(deadline)
                    if msg is None:
                        outcome.setdefault("event", "gone")
                        return
                    event = msg.get("event")
                    if event == "ready":
                        bench.sample(control, track)
                        ready.set()
                        deadline = time.monotonic() + seconds + 60
                    elif event in ("result", "error"):
                        outcome.update(msg)
                        return
                    else:
                        noise.append(str(msg.get("text", msg)))
            except TimeoutError:
                outcome.setdefault("event", "timeout")
            except (OSError, EOFError) as exc:
                outcome.setdefault("event", "gone")
                outcome.setdefault("message", str(exc))
            finally:
                finished.set()

        reader = threading.Thread(target=read, name=f"loadgen-{workload}", daemon=True)
        reader.start()

        def stop(_why: str) -> None:
            try:
                stream.sendall(b"stop\n")
            except OSError:
                pass

        # Wait for every client to log in; the run's clock starts then.
        with bench.times.within("start"):
            while not ready.is_set() and not finished.is_set():
                if bench.cancel.is_set():
                    stop("cancelled")
                finished.wait(0.05)
        why = bench.watch(
            control,
            done=finished.is_set,
            rows=lambda: 0,
            stop=stop,
            seconds=seconds + 60,
            track=track,
        )
        reader.join(30)
        bench.sample(control, track)
        if outcome.get("event") == "result" and not bench.cancel.is_set():
            # It waits for the next round's settings (closed at the benchmark's end).
            bench.kept["loadgen"] = agent
            kept = True
    finally:
        if not kept:
            stream.close()  # an agent still running sees its input end and kills its clients
    if bench.cancel.is_set():
        why = "cancelled"
    event = outcome.get("event")
    if event != "result":
        if why == "cancelled":
            return _empty(workload, threads, track)
        detail = outcome.get("message") or " ".join(noise)[-400:] or f"it ended ({event})"
        raise InnoTuneError(
            f"The load generator on the target failed: {detail}",
            "Check that the server still runs and that this login works from the target; "
            "the scratch schema was dropped. `--engine innotune` runs the clients here instead.",
        )
    if outcome.get("stopped") == "cancelled":
        why = "cancelled"
    commits = int(outcome.get("commits", 0))
    took = float(outcome.get("seconds", 0.0))
    if why != "cancelled":
        why = (
            ("rows" if max_tx * per_tx >= bench.options.max_rows else "bytes")
            if commits >= max_tx
            else "time"
        )
    histogram = tuple((float(ms), int(n)) for ms, n in outcome.get("histogram", []))
    rows = commits * per_tx
    return WorkloadResult(
        workload=workload,
        threads=threads,
        seconds=round(took, 3),
        commits=commits,
        rows=rows,
        commits_per_s=rate(commits, took),
        rows_per_s=rate(rows, took),
        latency=latency_from_histogram(histogram),
        counters=track.counters(),
        stopped=why,
        errors=int(outcome.get("errors", 0)),
        cpu=cpu_use(outcome, took, threads),
    )


@dataclass(frozen=True)
class _Agent:
    """The load generator kept running between the rounds of a benchmark."""

    stream: Stream
    lines: _Lines


def _close(bench: Benchmark) -> None:
    """End the kept load generator (its input ends: it exits)."""
    agent = bench.kept.pop("loadgen", None)
    if agent is not None:
        agent.stream.close()


def cpu_use(outcome: dict[str, Any], seconds: float, threads: int) -> CpuUse:
    """The CPU figures the load generator sent, judged (see :func:`app.bench.figures.judge_cpu`)."""
    from app.bench.figures import judge_cpu

    host = outcome.get("host")
    busy = None
    if isinstance(host, list) and len(host) == 2 and host[1]:
        busy = host[0] / host[1]
    server = outcome.get("server_cpu")
    wait = outcome.get("server_wait")
    return judge_cpu(
        client_cpu_s=float(outcome.get("client_cpu", 0.0)),
        server_cpu_s=None if server is None else float(server),
        host_busy=busy,
        cpus=outcome.get("cpus"),
        seconds=seconds,
        threads=threads,
        where="target",
        server_wait_s=None if wait is None else float(wait),
    )


def _empty(workload: str, threads: int, track: CounterTrack) -> WorkloadResult:
    from app.domain.bench import Latency

    return WorkloadResult(
        workload=workload,
        threads=threads,
        seconds=0.0,
        commits=0,
        rows=0,
        commits_per_s=0.0,
        rows_per_s=0.0,
        latency=Latency(),
        counters=track.counters(),
        stopped="cancelled",
    )
