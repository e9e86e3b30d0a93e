"""The connection shell's framing, on the real bootstrap run by this machine's sh.

The shell's two output streams are replayed to the parser in chunks of every size from one
byte up, so a trailer or the pid line cut anywhere between two SSH packets is still found.
"""

from __future__ import annotations

import queue
import subprocess
import threading

import pytest

from app.domain.errors import CommandError
from app.remote.shell import BOOTSTRAP, RemoteShell, Request

READY = "innotune-rtest"


class _Replay:
    """A channel that hands out recorded output in fixed-size chunks (the parser's input)."""

    def __init__(self, out: bytes, err: bytes, size: int) -> None:
        self._out: queue.Queue[bytes] = queue.Queue()
        self._err: queue.Queue[bytes] = queue.Queue()
        for data, into in ((out, self._out), (err, self._err)):
            for at in range(0, len(data), size):
                into.put(data[at : at + size])
        self.sent = bytearray()
        self._go = threading.Event()

    def release(self) -> None:
        """Let the output flow (after the requests were queued)."""
        self._out.put(b"")
        self._err.put(b"")
        self._go.set()

    def recv(self, _n: int) -> bytes:
        self._go.wait()
        return self._out.get()

    def recv_stderr(self, _n: int) -> bytes:
        self._go.wait()
        return self._err.get()

    def settimeout(self, _t: float | None) -> None:
        pass

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def close(self) -> None:
        pass


def _commands() -> list[Request]:
    return [
        Request(["printf", "%s|", "a'b", "new\nline", "$(id)", ""], False, 10),
        Request(["sh", "-c", "printf out; printf err >&2; exit 3"], False, 10),
        Request(["cat"], False, 10),  # stdin is /dev/null, never the requests
        Request(["sh", "-c", "echo before >&2; echo x; echo after >&2"], False, 10),
        Request(["sh", "-c", "echo $LC_ALL"], False, 10),
    ]


def _record(requests: list[Request]) -> tuple[bytes, bytes]:
    """Run the bootstrap here, with a noisy start like a chatty .bashrc, and record it."""
    script = f"echo noise; echo noise >&2; exec sh -c {_quote(BOOTSTRAP)} {READY}"
    done = subprocess.run(
        ["sh", "-c", script],
        input=b"".join(r.line for r in requests),
        capture_output=True,
        timeout=30,
        check=True,
    )
    return done.stdout, done.stderr


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 65536])
def test_results_come_apart_whatever_the_chunks(size: int) -> None:
    requests = _commands()
    channel = _Replay(*_record(requests), size)
    shell = RemoteShell(channel, READY, lambda: CommandError("ended"))  # type: ignore[arg-type]
    for request in requests:
        shell.queue(request)
    assert shell.flush() and shell.flights == 1
    assert bytes(channel.sent) == b"".join(r.line for r in requests)  # one write for all
    channel.release()
    for request in requests:
        assert request.done.wait(10)
    assert shell.sysname == "Linux" and shell.uid.isdigit()
    results = [r.result() for r in requests]
    assert results[0].stdout == b"a'b|new\nline|$(id)||" and results[0].stderr == b""
    assert (results[1].stdout, results[1].stderr, results[1].exit_status) == (b"out", b"err", 3)
    assert results[2].stdout == b"" and results[2].ok
    assert (results[3].stdout, results[3].stderr) == (b"x\n", b"before\nafter\n")
    assert results[4].stdout == b"C\n"
    assert all(r.pid.isdigit() for r in requests)


def test_a_shell_that_ends_fails_what_waits_and_says_what_never_ran() -> None:
    channel = _Replay(b"", b"", 1)
    shell = RemoteShell(channel, READY, lambda: CommandError("ended"))  # type: ignore[arg-type]
    sent, queued = Request(["true"], False, 10), Request(["true"], False, 10)
    shell.queue(sent)
    shell.flush()
    shell.queue(queued)
    channel.release()  # the channel ends before the shell said a word
    assert sent.done.wait(10) and queued.done.wait(10)
    assert isinstance(sent.failure, CommandError) and not sent.ran  # never ready: never ran
    assert isinstance(queued.failure, CommandError) and not queued.ran
    late = Request(["true"], False, 10)
    shell.queue(late)
    assert late.done.is_set() and not late.ran
