"""CPU use on the target during a run: the server process's and the whole host's.

Read from ``/proc`` with one short command before and after a run (``/proc/PID/stat`` and
its threads' ``schedstat``, the time each waited for a CPU, are readable by everyone, so no
sudo). A probe that fails gives empty figures; it never stops a benchmark.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.bench.figures import judge_cpu, parse_host_cpu, parse_proc_cpu
from app.domain.bench import CpuUse
from app.domain.errors import InnoTuneError
from app.domain.pace import parse_schedstat
from app.remote.transport import Transport

#: The line that starts the threads' schedstat lines in the probe's output.
_WAITS = "--waits--"

_SCRIPT = (
    'getconf CLK_TCK; nproc; head -n 1 /proc/stat; cat "/proc/$1/stat" 2>/dev/null; '
    f'echo {_WAITS}; cat "/proc/$1"/task/*/schedstat 2>/dev/null || true'
)

#: The server's process now: the one its pid file names, else the pid given (found at login)
#: while it still is a server, else the host's only mysqld/mariadbd. A pid found at login goes
#: stale when the server restarts (an apply that restarts it), and /proc/OLD/stat is then gone.
_PID_SCRIPT = r"""
is_server() {
    case "$(cat "/proc/$1/comm" 2>/dev/null)" in mysqld|mariadbd) return 0 ;; esac
    return 1
}
if [ -n "$2" ] && [ -r "$2" ]; then
    read -r q < "$2" 2>/dev/null
    case "$q" in ''|*[!0-9]*) ;; *) is_server "$q" && { echo "$q"; exit 0; } ;; esac
fi
[ "$1" != 0 ] && is_server "$1" && { echo "$1"; exit 0; }
found= n=0
for p in /proc/[0-9]*; do
    is_server "${p#/proc/}" && { found=${p#/proc/}; n=$((n + 1)); }
done
[ "$n" = 1 ] && echo "$found"
exit 0
"""


def live_server_pid(transport: Transport, pid: int | None, pid_file: str | None) -> int | None:
    """The server's process id now (see :data:`_PID_SCRIPT`); None when it cannot be told.

    Args:
        transport: the way to the server's host.
        pid: the pid found when logging in (it may be stale).
        pid_file: the server's ``@@pid_file``, read without sudo where it is readable.
    """
    try:
        result = transport.run(
            ["sh", "-c", _PID_SCRIPT, "sh", str(pid or 0), pid_file or ""], timeout=20
        )
    except InnoTuneError:
        return pid
    text = result.out.strip()
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class CpuSample:
    """One reading of the server's and the host's CPU counters.

    ``server_s`` is the server's CPU seconds so far, ``server_wait_s`` the seconds its threads
    have waited for a CPU so far, ``host`` the host's (busy, total) jiffies.
    """

    at: float
    server_s: float | None = None
    host: tuple[int, int] | None = None
    cpus: int | None = None
    server_wait_s: float | None = None


class CpuProbe:
    """Reads the server's and the host's CPU counters on the target."""

    def __init__(self, transport: Transport, server_pid: int | None, where: str) -> None:
        self.transport = transport
        self.server_pid = server_pid
        self.where = where

    def sample(self) -> CpuSample:
        """A reading now (empty figures when /proc could not be read)."""
        at = time.monotonic()
        try:
            result = self.transport.run(
                ["sh", "-c", _SCRIPT, "sh", str(self.server_pid or 0)], timeout=20
            )
        except InnoTuneError:
            return CpuSample(at)
        head, _, waits = result.out.partition(f"\n{_WAITS}\n")
        lines = head.splitlines()
        if len(lines) < 3 or not lines[0].strip().isdigit():
            return CpuSample(at)
        ticks = int(lines[0]) or 100
        cpus = int(lines[1]) if lines[1].strip().isdigit() else None
        server = parse_proc_cpu(lines[3], ticks) if len(lines) > 3 and self.server_pid else None
        threads = parse_schedstat(waits) if server is not None else {}
        wait = threads["wait_ns"] / 1e9 if threads else None
        return CpuSample(at, server, parse_host_cpu(lines[2]), cpus, wait)


def cpu_between(
    before: CpuSample,
    after: CpuSample,
    *,
    client_cpu_s: float | None,
    seconds: float,
    threads: int,
    where: str,
) -> CpuUse:
    """The judged CPU figures of a run between two readings."""
    server = None
    if before.server_s is not None and after.server_s is not None:
        server = max(0.0, after.server_s - before.server_s)
    wait = None
    if before.server_wait_s is not None and after.server_wait_s is not None:
        # A thread that ended between the readings takes its wait with it: never below 0.
        wait = max(0.0, after.server_wait_s - before.server_wait_s)
    busy = None
    if before.host is not None and after.host is not None:
        total = after.host[1] - before.host[1]
        busy = (after.host[0] - before.host[0]) / total if total > 0 else None
    return judge_cpu(
        client_cpu_s=client_cpu_s,
        server_cpu_s=server,
        host_busy=busy,
        cpus=after.cpus,
        seconds=seconds,
        threads=threads,
        where=where,
        server_wait_s=wait,
    )


#: How long the machine is watched with the benchmark paused (:func:`machine_busy`).
PAUSE_SECONDS = 1.0


def machine_busy(probe: CpuProbe | None, seconds: float = PAUSE_SECONDS) -> float | None:
    """The share (0-1) of the target's CPUs other work keeps busy while the benchmark waits.

    The machine's busy share over ``seconds``, less the server's own (its background work,
    such as flushing what the benchmark left, belongs to the change being measured). None
    when /proc could not be read or the server's process is not known.
    """
    if probe is None:
        return None
    first = probe.sample()
    time.sleep(seconds)
    second = probe.sample()
    if first.host is None or second.host is None or not second.cpus:
        return None
    if first.server_s is None or second.server_s is None:
        return None
    busy = second.host[0] - first.host[0]
    total = second.host[1] - first.host[1]
    elapsed = second.at - first.at
    if total <= 0 or elapsed <= 0:
        return None
    server = max(0.0, second.server_s - first.server_s) / (elapsed * second.cpus)
    return max(0.0, busy / total - server)
