"""Commands run side by side on one SSH connection to a server that limits its sessions.

OpenSSH allows 10 session channels per connection (MaxSessions). A run of the suite lost a
rollback on the booted sid system with "The SSH connection ... was lost (Unable to open
channel.)": its sshd had refused a channel while others were still closing, and paramiko
gives that message, not the refusal, when two refusals come at once (one thread's wait takes
the other's reason). The connection was up all along. A refused channel is asked for again
after a moment; a connection really gone still says so.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.domain.errors import ConnectError
from app.domain.target import ConnectOptions, parse_target
from app.remote.connect import open_transport
from app.remote.ssh import SshTransport
from tests.hosts.sshd import SshServer, SshUsers


@pytest.fixture
def limited(
    sshd_factory: list[SshServer],
    ssh_users: SshUsers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[SshTransport]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    server = SshServer(tmp_path / "limited")
    server.extra_config = "MaxSessions 3\n"
    sshd_factory.append(server)
    server.start()
    known = tmp_path / "known_hosts"
    known.write_text(server.known_hosts_line())
    target = parse_target(
        f"root@{server.host}:{server.port}", ConnectOptions(identity=str(server.client_key))
    )
    transport = open_transport(target, own_known_hosts=known)
    assert isinstance(transport, SshTransport)
    yield transport
    transport.close()


def test_commands_side_by_side_beyond_max_sessions_all_run(limited: SshTransport) -> None:
    outcomes: dict[int, str] = {}

    def worker(n: int) -> None:
        for k in range(6):
            try:
                result = limited.run(["sh", "-c", f"sleep 0.05; echo {n}-{k}"], timeout=60)
                outcomes[n * 10 + k] = result.out.strip()
            except Exception as exc:  # noqa: BLE001 - each one is reported below
                outcomes[n * 10 + k] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = {k: v for k, v in outcomes.items() if v != f"{k // 10}-{k % 10}"}
    assert not failed, failed
    assert len(outcomes) == 48


def test_a_connection_really_gone_is_still_called_lost(limited: SshTransport) -> None:
    assert limited.run(["true"]).ok
    limited._t.close()  # noqa: SLF001 - the connection drops under the transport
    with pytest.raises(ConnectError, match="was lost"):
        limited.run(["true"])
