"""Every process's command line (and environment) while a test runs, to find a secret in one.

The kernel names each program as it starts (the netlink process connector's exec events), and
the watcher reads that process's command line at once: a short-lived ``sudo`` or ``docker
exec`` is read while it runs, at a small cost. Reading every process over and over, as
these tests once did, took a whole CPU of the 2-core machine for as long as they ran, and
still read each process only every few tens of milliseconds. A sweep of every process at the
start, then each second (and whenever the kernel dropped events), covers those already
running. Without the connector (no CAP_NET_ADMIN) the sweeps run every 20 ms instead.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable

_NETLINK_CONNECTOR = 11
_CN_IDX_PROC = 1
_CN_VAL_PROC = 1
_PROC_CN_MCAST_LISTEN = 1
_PROC_EVENT_EXEC = 2
_NLMSG_DONE = 3
_NLMSG_HDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_CN_MSG = struct.Struct("=IIIIHH")  # idx, val, seq, ack, len, flags
_EVENT = struct.Struct("=IIQ")  # what, cpu, timestamp_ns; then the event's own fields


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


class ProcWatch:
    """Reads each process's command line as it starts; notes every needle found in one.

    ``needles``: label -> bytes looked for in every command line, and in the environment too
    for the labels in ``in_environ``. ``marks``: label -> a test on a command line, to show
    that the watcher saw the commands it had to see (``seen``). Use it as a context manager.
    """

    def __init__(
        self,
        needles: dict[str, bytes],
        in_environ: frozenset[str] = frozenset(),
        marks: dict[str, Callable[[bytes], bool]] | None = None,
        sweep_every: float = 1.0,
    ) -> None:
        self.needles = needles
        self.in_environ = in_environ
        self.marks = marks or {}
        self.sweep_every = sweep_every
        self.hits: list[tuple[str, str, str]] = []  # (label, "cmdline" or "environ", the command)
        self.seen: set[str] = set()
        self.execs = 0  # programs read as they started
        self.sweeps = 0
        self.events = False  # the kernel's exec events were used (else sweeps alone)
        self._me = os.getpid()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._sock: socket.socket | None = None

    def __enter__(self) -> ProcWatch:
        self._sock = self._listen()
        self.events = self._sock is not None
        if not self.events:
            self.sweep_every = 0.02
        self._sweep()  # before the test's first command
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._sock is not None:
            self._sock.close()
        self._sweep()

    @staticmethod
    def _listen() -> socket.socket | None:
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_CONNECTOR)
        except OSError:
            return None
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            sock.bind((0, _CN_IDX_PROC))
            op = struct.pack("=I", _PROC_CN_MCAST_LISTEN)
            cn = _CN_MSG.pack(_CN_IDX_PROC, _CN_VAL_PROC, 0, 0, len(op), 0) + op
            sock.send(_NLMSG_HDR.pack(_NLMSG_HDR.size + len(cn), _NLMSG_DONE, 0, 0, 0) + cn)
        except OSError:
            sock.close()
            return None
        return sock

    def _check(self, pid: int) -> None:
        if pid == self._me:
            return
        cmdline = _read(f"/proc/{pid}/cmdline")
        if not cmdline:
            return
        shown = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
        for label, test in self.marks.items():
            if label not in self.seen and test(cmdline):
                self.seen.add(label)
        environ = _read(f"/proc/{pid}/environ") if self.in_environ else None
        for label, needle in self.needles.items():
            if needle in cmdline:
                self.hits.append((label, "cmdline", shown))
            if environ and label in self.in_environ and needle in environ:
                self.hits.append((label, "environ", shown))

    def _sweep(self) -> None:
        for name in os.listdir("/proc"):
            if name.isdigit():
                self._check(int(name))
        self.sweeps += 1

    def _run(self) -> None:
        sock = self._sock
        next_sweep = 0.0
        while not self._stop.is_set():
            if sock is None:
                self._stop.wait(self.sweep_every)
                self._sweep()
                continue
            ready, _, _ = select.select([sock], [], [], 0.1)
            if ready:
                try:
                    data = sock.recv(1 << 16)
                except OSError:  # ENOBUFS: events were dropped; the sweep reads everyone
                    next_sweep = 0.0
                    data = b""
                self._events(data)
            now = time.monotonic()
            if now >= next_sweep:
                self._sweep()
                next_sweep = now + self.sweep_every

    def _events(self, data: bytes) -> None:
        offset = 0
        while offset + _NLMSG_HDR.size <= len(data):
            length = _NLMSG_HDR.unpack_from(data, offset)[0]
            if length < _NLMSG_HDR.size:
                break
            at = offset + _NLMSG_HDR.size + _CN_MSG.size
            if at + _EVENT.size + 8 <= offset + length:
                what = _EVENT.unpack_from(data, at)[0]
                if what == _PROC_EVENT_EXEC:
                    _pid, tgid = struct.unpack_from("=II", data, at + _EVENT.size)
                    self.execs += 1
                    self._check(tgid)
            offset += (length + 3) & ~3
