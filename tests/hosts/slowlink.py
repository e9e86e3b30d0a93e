"""A slow network link for tests and benchmarks: a TCP relay that delays every byte.

netem is not available in this kernel, so the latency of a WAN link is made in user space:
:class:`SlowLink` listens on 127.0.0.1 and forwards each connection to a real server,
holding every chunk for half the round trip in each direction (bandwidth is not limited).
Put it in front of the test sshd and connect to its port to see what 50 ms round trips
do to a command.
"""

from __future__ import annotations

import contextlib
import heapq
import socket
import threading
import time


class _Pipe:
    """One direction of one connection: chunks leave ``delay`` seconds after they came."""

    def __init__(self, src: socket.socket, dst: socket.socket, delay: float) -> None:
        self.src, self.dst, self.delay = src, dst, delay
        self._queue: list[tuple[float, int, bytes]] = []
        self._seq = 0
        self._cond = threading.Condition()
        self._eof = False
        threading.Thread(target=self._read, name="slowlink-read", daemon=True).start()
        threading.Thread(target=self._write, name="slowlink-write", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = self.src.recv(65536)
            except OSError:
                chunk = b""
            with self._cond:
                if chunk:
                    heapq.heappush(self._queue, (time.monotonic() + self.delay, self._seq, chunk))
                    self._seq += 1
                else:
                    self._eof = True
                self._cond.notify()
            if not chunk:
                return

    def _write(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._eof:
                    self._cond.wait()
                if not self._queue:  # end of stream, everything delivered
                    break
                due, _, chunk = self._queue[0]
                left = due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._queue)
            try:
                self.dst.sendall(chunk)
            except OSError:
                break
        with contextlib.suppress(OSError):
            self.dst.shutdown(socket.SHUT_WR)


class SlowLink:
    """A delaying relay on 127.0.0.1: ``port`` reaches ``target`` with ``rtt`` added."""

    def __init__(self, target_host: str, target_port: int, rtt: float = 0.05) -> None:
        self.target = (target_host, target_port)
        self.rtt = rtt
        self.host = "127.0.0.1"
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((self.host, 0))
        self.port: int = self._listener.getsockname()[1]
        self.connections = 0
        self._sockets: list[socket.socket] = []
        self._stopped = False

    def start(self) -> SlowLink:
        """Listen and relay in the background."""
        self._listener.listen(16)
        threading.Thread(target=self._accept, name="slowlink-accept", daemon=True).start()
        return self

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [client, server]
            self.connections += 1
            _Pipe(client, server, self.rtt / 2)
            _Pipe(server, client, self.rtt / 2)

    def stop(self) -> None:
        """Stop listening and cut every relayed connection."""
        self._stopped = True
        with contextlib.suppress(OSError):
            self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        self._sockets.clear()

    def __enter__(self) -> SlowLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
