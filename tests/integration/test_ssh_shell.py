"""The connection's long-lived shell, round trips counted for real, and a 50 ms link.

Round trips are counted twice over: by the transport (each flight of requests to its
shell, each command or stream on a channel of its own) and by sshd, whose log has one
"Starting session" line per session channel it started.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.domain.errors import CommandTimeout
from app.domain.target import ConnectOptions, Target, parse_target
from app.inspect.inspection import inspect
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from app.remote.ssh import SshTransport
from app.remote.transport import submit
from tests.hosts.slowlink import SlowLink
from tests.hosts.sshd import SshServer, SshUsers
from tests.integration.test_ssh_transport import _running, shell_users  # noqa: F401

RTT = 0.05


def _sessions(sshd: SshServer) -> int:
    return sshd.log.read_text(errors="replace").count("Starting session:")


def _settled_sessions(sshd: SshServer, before: int, at_least: int) -> int:
    """Sessions started since ``before`` (sshd may log a moment after the channel opens)."""
    deadline = time.monotonic() + 5
    while _sessions(sshd) - before < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    return _sessions(sshd) - before


@pytest.fixture
def link(sshd: SshServer) -> Iterator[SlowLink]:
    """The test sshd behind a relay that adds 50 ms to every round trip."""
    with SlowLink(sshd.host, sshd.port, rtt=RTT) as slow:
        yield slow


def _target(
    sshd: SshServer, tmp_path: Path, user: str, port: int, instance: str | None = None
) -> tuple[Target, str]:
    known = tmp_path / f"known_hosts_{port}"
    known.write_text(sshd.known_hosts_line().replace(f"]:{sshd.port} ", f"]:{port} "))
    options = ConnectOptions(
        identity=str(sshd.client_key), known_hosts=str(known), instance=instance
    )
    return parse_target(f"{user}@127.0.0.1:{port}", options), str(known)


def _open(sshd: SshServer, tmp_path: Path, user: str, port: int | None = None) -> SshTransport:
    target, known = _target(sshd, tmp_path, user, port or sshd.port)
    transport = open_transport(target, own_known_hosts=known)
    assert isinstance(transport, SshTransport)
    return transport


@pytest.mark.parametrize("user", ["root", "innotune-np"])
def test_many_commands_one_session_one_round_trip(
    sshd: SshServer, ssh_users: SshUsers, tmp_path: Path, user: str
) -> None:
    before = _sessions(sshd)
    transport = _open(sshd, tmp_path, user)
    try:
        values = ["a'b\"c", "$(id)", "`id`;x", "back\\slash", "bang!", "new\nline", "", "%s", "*"]
        pending = [
            submit(transport, ["printf", "%s\\0", *values]),
            submit(transport, ["sh", "-c", "printf out; printf err >&2; exit 3"]),
            submit(transport, ["id", "-u"], sudo=True),
            submit(transport, ["cat"]),  # stdin is empty: it cannot eat the requests after it
            submit(transport, ["sh", "-c", "echo $LC_ALL"]),
            submit(transport, ["echo", "last"]),
        ]
        results = [p.result() for p in pending]
        assert results[0].stdout.split(b"\0")[:-1] == [v.encode() for v in values]
        assert (results[1].stdout, results[1].stderr, results[1].exit_status) == (
            b"out",
            b"err",
            3,
        )
        assert results[2].out == "0\n" and results[2].stderr == b""
        assert results[3].stdout == b"" and results[3].ok
        assert results[4].out == "C\n"
        assert results[5].out == "last\n"
        assert transport.is_root == (user == "root")
        assert transport.round_trips == 1  # six commands, one flight
        # The count is real: a command on a channel of its own is one more, and so is a
        # second flight; sshd saw exactly the shell's session and that channel's.
        assert transport.run(["true"]).ok
        assert submit(transport, ["true"]).result().ok
        assert transport.round_trips == 3
        assert _settled_sessions(sshd, before, 2) == 2
    finally:
        transport.close()


def test_a_command_past_its_deadline_is_killed_and_the_shell_goes_on(
    sshd: SshServer, ssh_users: SshUsers, tmp_path: Path
) -> None:
    transport = _open(sshd, tmp_path, ssh_users.np_user)
    seconds = f"300.{secrets.randbelow(10**6):06d}"
    try:
        for sudo in (False, True):
            with pytest.raises(CommandTimeout, match="ran longer than 1 s"):
                submit(transport, ["sleep", seconds], sudo=sudo, timeout=1).result()
            deadline = time.monotonic() + 10
            while _running(b"sleep\x00" + seconds.encode() + b"\x00"):
                assert time.monotonic() < deadline, "the timed-out command was killed"
                time.sleep(0.05)
            assert submit(transport, ["echo", "after"]).result().out == "after\n"
    finally:
        transport.close()


def test_login_shells_that_are_not_sh_change_nothing_in_the_shell(
    sshd: SshServer,
    shell_users: list[str],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    values = ["a'b\"c", "$(id)", "back\\slash", "bang!", "new\nline", "", "~", "$HOME"]
    for user in shell_users:
        transport = _open(sshd, tmp_path, user)
        try:
            assert submit(transport, ["echo", "plain"]).result().out == "plain\n", user
            got = submit(transport, ["printf", "%s\\0", *values]).result()
            assert got.stdout.split(b"\0")[:-1] == [v.encode() for v in values], user
            assert got.stderr == b"", user  # the login shell's noise is gone
            # A stream on a channel prepared ahead: its login shell becomes the command.
            transport.prepare_stream()
            stream = transport.open_stream(["sh", "-c", "printf '%s|' \"$@\"; cat", "sh", *values])
            stream.sendall(b"ping\n")
            echoed = b""
            while not echoed.endswith(b"ping\n"):
                chunk = stream.recv(4096)
                assert chunk, (user, echoed)
                echoed += chunk
            assert echoed == "|".join(values).encode() + b"|ping\n", user
            stream.close()
        finally:
            transport.close()


def _round_trip(transport: SshTransport) -> float:
    """The best of five command round trips through the shell, once it is up."""
    submit(transport, ["true"]).result()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        submit(transport, ["true"]).result()
        times.append(time.perf_counter() - t0)
    return min(times)


def test_connect_doctor_and_inspect_take_three_round_trips_over_a_50_ms_link(
    sshd: SshServer,
    ssh_users: SshUsers,
    link: SlowLink,
    private_server: PrivateServer,
    tmp_path: Path,
) -> None:
    # The relay adds latency: a bare command's round trip takes 50 ms more through it.
    near = _open(sshd, tmp_path, ssh_users.np_user)
    far = _open(sshd, tmp_path, ssh_users.np_user, link.port)
    try:
        fast, slow = _round_trip(near), _round_trip(far)
    finally:
        near.close()
        far.close()
    print(f"\ncommand round trip: {fast * 1000:.1f} ms on loopback, {slow * 1000:.1f} ms slow")
    assert slow >= fast + RTT * 0.9

    # Connect, every doctor step and a whole inspection over the slow link.
    target, known = _target(
        sshd, tmp_path, ssh_users.np_user, link.port, str(private_server.socket_path)
    )
    before = _sessions(sshd)
    started = time.perf_counter()
    result = DoctorResult()
    steps = list(
        run_doctor(target, Secrets(), result, opener=open_transport, own_known_hosts=known)
    )
    assert result.ok, [s.line() for s in steps]
    assert result.transport and result.instance and result.session
    try:
        facts = inspect(
            result.transport,
            result.instances,
            result.instance,
            result.session,
            sample_seconds=0,
        )
        elapsed = time.perf_counter() - started
        transport = result.transport
        assert isinstance(transport, SshTransport)
        trips = transport.round_trips
    finally:
        result.close()
    print(f"connect + doctor + inspect over the slow link: {elapsed:.2f} s, {trips} round trips")
    assert facts.server is not None and facts.os.write_paths
    assert facts.server.datadir and facts.server.datadir.rstrip("/") == str(private_server.datadir)
    assert trips <= 3
    # sshd started two sessions: the shell, and the relay to the database's socket.
    assert _settled_sessions(sshd, before, 2) == 2


def test_a_status_sample_adds_no_ssh_round_trip(
    sshd: SshServer, ssh_users: SshUsers, private_server: PrivateServer, tmp_path: Path
) -> None:
    """A status sample adds database round trips, never SSH ones."""
    target, known = _target(sshd, tmp_path, "root", sshd.port, str(private_server.socket_path))
    result = DoctorResult()
    steps = list(
        run_doctor(target, Secrets(), result, opener=open_transport, own_known_hosts=known)
    )
    assert result.ok, [s.line() for s in steps]
    assert result.transport and result.instance and result.session
    try:
        facts = inspect(
            result.transport,
            result.instances,
            result.instance,
            result.session,
            sample_seconds=1,
        )
        transport = result.transport
        assert isinstance(transport, SshTransport)
        assert transport.round_trips <= 3
    finally:
        result.close()
    assert facts.server is not None and facts.server.rates is not None
