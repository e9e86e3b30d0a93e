"""Time the OS-facts gathering: median of N runs, locally and over SSH on loopback.

Run as root from the project directory:

    .venv/bin/python -m tests.benchmarks.bench_inspect_os [--runs 21] [--no-ssh]

Prints one line per case: median, min and max wall time, and the command runs used.
The SSH case starts a private sshd on 127.0.0.1 (the test suite's own) and times only
the gathering over an open connection, not the connection itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from app.domain.facts import OsFacts
from app.domain.target import ConnectOptions, parse_target
from app.inspect.host import gather_host
from app.remote.local import LocalTransport
from app.remote.transport import Transport

DIRECTORIES = ["/var/lib/mysql", "/tmp", "/var/log"]


def timed(runs: int, fn: Callable[[], OsFacts]) -> tuple[list[float], OsFacts]:
    """Run ``fn`` ``runs`` times (after one warm-up); return the wall times and a result."""
    result = fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def report(label: str, times: list[float], facts: OsFacts) -> None:
    """One line of figures."""
    print(
        f"{label:<28} median {statistics.median(times) * 1000:7.1f} ms   "
        f"min {min(times) * 1000:7.1f} ms   max {max(times) * 1000:7.1f} ms   "
        f"runs {len(times)}   command runs per gathering {facts.commands_run}   "
        f"devices {sum(len(p.devices) for p in facts.write_paths)}"
    )


def bench(transport: Transport, label: str, runs: int) -> None:
    """Time gather_host through ``transport``."""
    times, facts = timed(runs, lambda: gather_host(transport, DIRECTORIES))
    report(label, times, facts)


def main() -> None:
    """Parse the options and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--no-ssh", action="store_true", help="skip the SSH case")
    args = parser.parse_args()
    bench(LocalTransport(), "local (LocalTransport)", args.runs)
    if args.no_ssh or os.geteuid() != 0:
        print("ssh: skipped (needs root to start a private sshd, or --no-ssh given)")
        return
    from app.remote.ssh import SshTransport
    from tests.hosts.sshd import SshServer

    with tempfile.TemporaryDirectory(prefix="innotune-bench-") as tmp:
        server = SshServer(Path(tmp) / "sshd")
        server.start()
        try:
            known = Path(tmp) / "known_hosts"
            known.write_text(server.known_hosts_line())
            target = parse_target(
                f"root@{server.host}:{server.port}",
                ConnectOptions(identity=str(server.client_key)),
            )
            transport = SshTransport(target, own_known_hosts=known)
            try:
                bench(transport, "ssh root@127.0.0.1", args.runs)
            finally:
                transport.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
