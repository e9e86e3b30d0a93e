"""Run a command with the test caches empty, as on a new machine (``make test-cold``).

    python -m tests.cold_caches [--dry-run] [--force] -- make test

The booted hosts' images (tests/hosts/debian_hosts.py ``CACHE``) and the container image
archives (tests/containers/engines.py ``CACHE``) are moved aside (a rename: instant, on the
same file system), the command runs and builds them again, and afterwards the caches are put
back as they were and the ones the run built are removed: also when the command fails, is
interrupted (Ctrl-C) or terminated. Another live test run would lose its caches under it, so
the caches stay where they are while one runs (``--force`` moves them all the same).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from tests.containers.engines import CACHE as CONTAINERS_CACHE
from tests.hosts.debian_hosts import CACHE as HOSTS_CACHE
from tests.hosts.reaper import other_live_runs

#: The caches a cold run starts without.
CACHES = (HOSTS_CACHE, CONTAINERS_CACHE)


def aside(cache: Path) -> Path:
    """Where ``cache`` waits while a cold run goes (beside it, so the move is a rename)."""
    return cache.with_name(f"{cache.name}.warm-{os.getpid()}")


class Stopped(Exception):
    """A signal asked the run to stop."""


def _stop(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signal.Signals(signum).name)


@contextmanager
def caches_aside(
    caches: Sequence[Path], say: Callable[[str], None] = print, dry_run: bool = False
) -> Iterator[None]:
    """Move ``caches`` aside for the body, then put them back (the body's own are removed).

    A cache that a killed cold run left aside is put back first.

    Raises:
        RuntimeError: a cache is aside for another cold run that still goes.
    """
    moved: list[tuple[Path, Path]] = []
    for cache in caches:
        left = sorted(cache.parent.glob(f"{cache.name}.warm-*")) if cache.parent.exists() else []
        for warm in left:
            if _cold_run_alive(warm):
                raise RuntimeError(f"{warm} is aside for a cold run that still goes; wait for it")
        for warm in left:
            say(f"{cache}: put back from {warm}, left aside by a cold run that was killed")
            if not dry_run:
                _put_back(cache, warm)
    try:
        for cache in caches:
            if not cache.exists():
                say(f"{cache}: empty already")
                continue
            say(f"{cache}: moved aside to {aside(cache)}")
            if not dry_run:
                cache.rename(aside(cache))
            moved.append((cache, aside(cache)))
        yield
    finally:
        # Signals wait until everything is back where it was.
        held = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for cache, warm in moved:
                say(f"{cache}: put back")
                if not dry_run:
                    _put_back(cache, warm)
        finally:
            for s, handler in held.items():
                signal.signal(s, handler)


def _put_back(cache: Path, warm: Path) -> None:
    """``warm`` becomes ``cache`` again; what a cold run built there is removed."""
    if cache.exists():
        shutil.rmtree(cache, ignore_errors=True)
    warm.rename(cache)


def _cold_run_alive(warm: Path) -> bool:
    """True while the cold run that moved ``warm`` aside still runs (a pid reused since by
    another program does not count). A run killed outright (SIGKILL, a power cut) could not
    put its caches back; the next one does."""
    pid = warm.name.rsplit("-", 1)[-1]
    try:
        return b"tests.cold_caches" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command after ``--`` with the caches aside; its exit status is ours."""
    parser = argparse.ArgumentParser(prog="python -m tests.cold_caches", description=__doc__)
    parser.add_argument("--dry-run", action="store_true", help="say what would move; run nothing")
    parser.add_argument("--force", action="store_true", help="even while another run goes")
    parser.add_argument("command", nargs="+", help="the command (after --), e.g. make test")
    args = parser.parse_args(argv)
    others = [] if args.force else other_live_runs()
    if others:
        print(f"other test runs are going (pids {', '.join(map(str, others))}): their caches")
        print("would go from under them. Run again when they end, or with --force.")
        return 2
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _stop)
    try:
        with caches_aside(CACHES, dry_run=args.dry_run):
            if args.dry_run:
                print(f"would run: {' '.join(args.command)}")
                return 0
            return _run(args.command)
    except (Stopped, KeyboardInterrupt) as why:
        print(f"stopped ({why or 'interrupted'}); the caches are back")
        return 130


def _run(command: list[str]) -> int:
    """Run ``command``; when stopped, end it and wait for it before the caches move back.

    It runs in a process group of its own, which is ended whole: a shell or make would
    otherwise wait for its own children before it heeds the signal.
    """
    child = subprocess.Popen(command, process_group=0)
    try:
        return child.wait()
    except (Stopped, KeyboardInterrupt):
        _signal_group(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=STOP_WAIT)
        except subprocess.TimeoutExpired:
            _signal_group(child.pid, signal.SIGKILL)
            child.wait()
        raise


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass  # ended meanwhile


#: How long a stopped command has to end (a test run tears its hosts down) before it is killed.
STOP_WAIT = 120.0


if __name__ == "__main__":
    sys.exit(main())
