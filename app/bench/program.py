"""A benchmark client program on the target (sysbench, mysqlslap): its login, one watched run.

The program gets a temporary directory on the target for its input file (removed after), runs
under a shell that prints the target's clock around it and its CPU time (the shell's
``times``), while the runner samples the server's counters and stops it at the budget or a
cancel by ending its connections.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from app.bench.cpu import CpuProbe, CpuSample
from app.bench.figures import CounterTrack
from app.domain.errors import InnoTuneError
from app.mysql.session import Session
from app.remote.transport import CommandResult, Transport

if TYPE_CHECKING:
    from app.bench.runner import Benchmark

#: The target's clock before and after the program, then the shell's `times` (its children's
#: CPU on the second line); the program's exit status is the shell's.
TIMED = 'date +%s.%N >&2; "$0" "$@"; s=$?; date +%s.%N >&2; times >&2; exit $s'
_CLOCK = re.compile(r"^(\d+\.\d+)$", re.M)
# The shell's `times`: its own user/system time, then its children's.
_TIMES = re.compile(r"^(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s\s*$", re.M)
#: How long the program may take to connect its first client before the watch starts anyway.
CLIENTS_START_LIMIT = 60.0


@dataclass(frozen=True)
class TargetLogin:
    """How a client started on the target logs in, as InnoTune's own sessions do."""

    socket: str | None
    port: int | None
    user: str
    password: str | None = None
    sudo: bool = False


@dataclass(frozen=True)
class TargetRoute:
    """How clients started on the target log in, and which server process they measure.

    Attributes:
        sudo: run them under sudo (the root socket login needs the root account).
        engine: what the report names as the clients.
        server_pid: the server's process, whose CPU each run reports.
    """

    transport: Transport
    socket: str | None
    port: int | None
    user: str
    password: str | None = None
    sudo: bool = False
    engine: str = ""
    server_pid: int | None = None

    @property
    def spreads_writes(self) -> bool:
        """The clients can write at random across a data set (BenchOptions.data_bytes)."""
        return True

    @classmethod
    def found(
        cls,
        transport: Transport,
        login: TargetLogin,
        engine: str,
        server_pid: int | None = None,
        **more: Any,
    ) -> Self:
        """The route to a program found on the target, logging in as ``login`` says."""
        return cls(
            transport,
            login.socket,
            login.port,
            login.user,
            login.password,
            login.sudo,
            engine=engine,
            server_pid=server_pid,
            **more,
        )


@dataclass(frozen=True)
class ProgramRun:
    """One finished run of the program.

    Attributes:
        stopped: why the runner ended it (``time``, ``cancelled``); None when it ended itself.
    """

    result: CommandResult
    track: CounterTrack
    cpu_before: CpuSample
    cpu_after: CpuSample
    stopped: str | None

    @property
    def seconds(self) -> float | None:
        """The program's run time by the target's clock."""
        stamps = [float(s) for s in _CLOCK.findall(self.result.err)]
        return stamps[1] - stamps[0] if len(stamps) >= 2 else None

    @property
    def client_cpu_s(self) -> float | None:
        """The program's CPU seconds (user + system), from the shell's ``times``."""
        return children_cpu(self.result.err)


def children_cpu(stderr: str) -> float | None:
    """The CPU seconds (user + system) of the children, from the shell's ``times`` output."""
    found = _TIMES.findall(stderr)
    if len(found) < 2:
        return None
    um, us, sm, ss = found[-1]
    return int(um) * 60 + float(us) + int(sm) * 60 + float(ss)


def run_program(
    bench: Benchmark,
    control: Session,
    route: TargetRoute,
    input_file: tuple[str, bytes],
    argv: Callable[[str], tuple[list[str], bytes | None]],
    watch_seconds: float,
) -> ProgramRun:
    """Run ``argv(path of the input file)`` on the target, watched; return what it printed.

    Raises:
        InnoTuneError: the target refused the temporary directory or the file.
    """
    transport = route.transport
    with bench.times.within("start"):
        path = _input_on_target(bench, transport, input_file)
    outcome: list[CommandResult | BaseException] = []
    stopped: list[str] = []
    command, stdin = argv(path)
    timed = ["sh", "-c", TIMED, *command]

    def go() -> None:
        try:
            timeout = bench.run_seconds + 120
            outcome.append(transport.run(timed, sudo=route.sudo, input=stdin, timeout=timeout))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome.append(exc)

    def stop(why: str) -> None:
        # Ending the program's connections makes it stop at once.
        stopped.append(why)
        kill_clients(control, bench.schema)

    track = CounterTrack()
    probe = CpuProbe(transport, route.server_pid, "target")
    runner = threading.Thread(target=go, name=f"bench-{command[0].rsplit('/', 1)[-1]}")
    # A client of the last run may linger after its kill (rolling back a bulk transaction):
    # only a connection made after this point is this run's.
    earlier = set(_clients(control, bench.schema))
    # Readings before the launch too, for a program that ends before its clients are seen.
    with bench.times.within("reads"):
        launch_cpu, launch_track = probe.sample(), CounterTrack()
        bench.sample(control, launch_track)
    runner.start()
    # The budget counts from the clients' first connection, not from the command: on a
    # busy host the login and the program's start took two seconds, and a watch started
    # with the command ended a 2-second run after 39 ms.
    with bench.times.within("start"):
        wait_for_clients(
            control, bench.schema, lambda: not runner.is_alive(), bench.cancel, earlier=earlier
        )
    with bench.times.within("reads"):
        cpu_before = probe.sample()
        bench.sample(control, track)
    if not runner.is_alive():
        # It ended before those readings (a poll slowed by a busy host saw its clients
        # late, or never): they span none of its work, the launch's span all of it. Its
        # server CPU read 0.0 for 1,320 commits beside the suite's other sessions.
        cpu_before, track = launch_cpu, launch_track
    bench.watch(
        control,
        done=lambda: not runner.is_alive(),
        rows=lambda: 0,
        stop=stop,
        seconds=watch_seconds,
        track=track,
    )
    while runner.is_alive():
        if stopped or bench.cancel.is_set():
            # A client that connects after the stop (a slow start on a busy host) is
            # ended too; else it would run its whole query list.
            kill_clients(control, bench.schema)
        runner.join(0.05)
    with bench.times.within("reads"):
        bench.sample(control, track)
        cpu_after = probe.sample()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    why = "cancelled" if bench.cancel.is_set() else (stopped[0] if stopped else None)
    return ProgramRun(result, track, cpu_before, cpu_after, why)


def _input_on_target(bench: Benchmark, transport: Transport, input_file: tuple[str, bytes]) -> str:
    """The program's input file in a temporary directory on the target.

    Made once a benchmark (each round of it uses the same file), removed at its end.

    Raises:
        InnoTuneError: the target refused the temporary directory or the file.
    """
    key = f"input:{input_file[0]}:{hash(input_file[1])}"
    path = bench.kept.get(key)
    if isinstance(path, str):
        return path
    made = transport.run(["mktemp", "-d", "/tmp/innotune-bench.XXXXXX"], timeout=20)  # noqa: S108
    if not made.ok:
        raise InnoTuneError(f"Could not make a temporary directory on the target: {made.err}")
    tmp = made.out.strip()
    bench.closers.append(lambda: _remove(transport, tmp))
    path = f"{tmp}/{input_file[0]}"
    transport.write_file_atomic(path, input_file[1], mode="0644")
    bench.kept[key] = path
    return path


def _remove(transport: Transport, tmp: str) -> None:
    """Remove the temporary directory of the program's input files."""
    transport.run(["rm", "-rf", "--", tmp], timeout=20)


def wait_for_clients(
    control: Session,
    schema: str,
    ended: Callable[[], bool],
    cancel: threading.Event,
    limit: float = CLIENTS_START_LIMIT,
    earlier: set[str] | None = None,
) -> bool:
    """Wait until the program has a connection in the scratch schema.

    ``earlier``: connections there before the program started, which are not its own.

    Returns:
        True once a client is connected; False when the program ended first, the run was
        cancelled, or none came within ``limit`` seconds (the watch then starts all the same).
    """
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not ended() and not cancel.is_set():
        if set(_clients(control, schema)) - (earlier or set()):
            return True
        cancel.wait(0.05)
    return False


def _clients(control: Session, schema: str) -> list[str]:
    """The ids of the other connections working in the scratch schema."""
    rows = control.query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = %s AND ID <> CONNECTION_ID()",
        (schema,),
    )
    return [str(ident) for (ident,) in rows if ident and str(ident).isdigit()]


def kill_clients(control: Session, schema: str) -> None:
    """End every other connection working in the scratch schema (the program's clients)."""
    for ident in _clients(control, schema):
        try:
            control.query(f"KILL CONNECTION {int(ident)}")
        except InnoTuneError:
            pass  # it ended by itself meanwhile
