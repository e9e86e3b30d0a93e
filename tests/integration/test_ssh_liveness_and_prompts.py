"""SshTransport against real sshds: a frozen host is noticed, and login questions are asked.

- A host that stops answering (its per-connection sshd SIGSTOPped: the TCP connection stays
  up, nothing comes back) fails the running command within seconds, not at its deadline.
- Keyboard-interactive login (PAM's "Password:" through a second sshd with only that
  method) passes each prompt to the caller's callback and sends the answers.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pty
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.domain.errors import AuthError, CommandTimeout, ConnectError, InnoTuneError
from app.domain.target import ConnectOptions, parse_target
from app.remote.local import LocalTransport
from app.remote.ssh import SshTransport
from app.remote.transport import atomic_write_argv
from tests.hosts.pam_sshd import start_pam_sshd
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import read_until


@pytest.fixture(autouse=True)
def _users_as_expected(ssh_users: SshUsers) -> None:
    """Re-assert the test accounts (another pytest run may have reset them)."""
    ssh_users.create()


@pytest.fixture
def no_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private HOME: no ~/.ssh keys and no agent that could log in instead of a prompt."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def _start(sshd_factory: list[SshServer], workdir: Path, **settings: bool) -> SshServer:
    server = SshServer(workdir)
    for name, value in settings.items():
        setattr(server, name, value)
    sshd_factory.append(server)
    server.start()
    (workdir / "known_hosts").write_text(server.known_hosts_line())
    return server


def _pids_running(cmdline: bytes) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == cmdline:
                found.append(int(proc.name))
        except OSError:
            continue
    return found


# -- liveness -----------------------------------------------------------------------------


def test_a_frozen_host_fails_the_running_command_within_seconds(
    sshd_factory: list[SshServer], tmp_path: Path
) -> None:
    server = _start(sshd_factory, tmp_path / "frozen")
    target = parse_target(
        f"root@{server.host}:{server.port}", ConnectOptions(identity=str(server.client_key))
    )
    transport = SshTransport(
        target,
        own_known_hosts=tmp_path / "frozen" / "known_hosts",
        keepalive_interval=1,
        # Long enough for a live sshd on a loaded machine to answer, short for the test.
        keepalive_timeout=8,
    )
    # A sleep no other test runs, so it can be found (and ended) by its exact command line.
    seconds = f"300.{secrets.randbelow(10**6):06d}"
    cmdline = b"sleep\x00" + seconds.encode() + b"\x00"
    outcome: list[BaseException | None] = []
    ended = threading.Event()

    def command() -> None:
        try:
            transport.run(["sleep", seconds], timeout=120)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - examined by the test
            outcome.append(exc)
        ended.set()

    frozen: list[int] = []
    worker = threading.Thread(target=command, daemon=True)
    try:
        # Live and idle for a few keepalive rounds first: an answering host is never dropped.
        time.sleep(3)
        assert transport.run(["true"], timeout=30).ok
        worker.start()
        deadline = time.monotonic() + 30
        while not _pids_running(cmdline) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _pids_running(cmdline), "the remote sleep started"
        frozen = server.session_pids()
        assert frozen
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        began = time.monotonic()
        # Interval 1 s + 8 s without a reply, nominally; 60 s leaves room for a loaded
        # machine and is still half the command's own 120 s deadline.
        assert ended.wait(60), "the command still waits on a frozen host"
        noticed = time.monotonic() - began
        print(f"\nfrozen host noticed after {noticed:.1f} s (nominal 1 s + 8 s)")
        (error,) = outcome
        assert isinstance(error, ConnectError) and not isinstance(error, CommandTimeout)
        assert "no reply to SSH keepalives for 8 s" in error.problem
        assert f"`sleep {seconds}`" in error.problem
        assert "Check the network" in error.fix
        with pytest.raises(ConnectError, match="no reply to SSH keepalives"):
            transport.run(["true"], timeout=30)  # at once: the connection is closed
    finally:
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        transport.close()
        worker.join(10)
        for pid in _pids_running(cmdline):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_cut_off_input_is_never_renamed_into_place(tmp_path: Path) -> None:
    """The atomic write refuses fewer bytes than announced: whatever cut stdin short (a
    timed-out SSH command whose channel close sent EOF) leaves the old file as it was."""
    path = tmp_path / "my.cnf"
    path.write_text("[mysqld]\nold = 1\n")
    local = LocalTransport()
    result = local.run(atomic_write_argv(str(path), "0644", "", 1000), input=b"[mysqld]\n")
    assert not result.ok and "got 9 of 1000 bytes" in result.err
    assert path.read_text() == "[mysqld]\nold = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["my.cnf"]  # no temp file left
    local.write_file_atomic(str(path), b"[mysqld]\nnew = 2\n")
    assert path.read_text() == "[mysqld]\nnew = 2\n"


# -- keyboard-interactive -----------------------------------------------------------------


@pytest.fixture
def pam_sshd(sshd_factory: list[SshServer], tmp_path: Path) -> Iterator[SshServer]:
    """A second sshd that allows keys and keyboard-interactive (PAM), not plain passwords."""
    yield start_pam_sshd(sshd_factory, tmp_path / "pam")


def _pw_target(server: SshServer, ssh_users: SshUsers) -> tuple[object, Path]:
    target = parse_target(f"{ssh_users.pw_user}@{server.host}:{server.port}", ConnectOptions())
    return target, server.workdir / "known_hosts"


@pytest.mark.usefixtures("no_agent")
def test_keyboard_interactive_prompts_go_to_the_callback_and_answers_are_not_logged(
    pam_sshd: SshServer, ssh_users: SshUsers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # paramiko's DEBUG too: the answer must not be in it
    target, known = _pw_target(pam_sshd, ssh_users)
    asked: list[tuple[str, bool]] = []

    def answer(text: str, echo: bool) -> str:
        asked.append((text, echo))
        return ssh_users.pw_password

    # No key, no agent, no prompt: no way in, and the error says what the server takes.
    with pytest.raises(AuthError, match="it accepts: publickey, keyboard-interactive"):
        SshTransport(target, own_known_hosts=known)  # type: ignore[arg-type]
    transport = SshTransport(target, own_known_hosts=known, prompt=answer)  # type: ignore[arg-type]
    try:
        assert transport.run(["id", "-un"], timeout=30).out.strip() == ssh_users.pw_user
    finally:
        transport.close()
    assert asked == [("Password: ", False)]  # PAM's pam_unix question, not echoed
    assert ssh_users.pw_password not in caplog.text
    assert ssh_users.pw_password not in pam_sshd.log.read_text(errors="replace")
    assert "Accepted keyboard-interactive/pam" in pam_sshd.log.read_text(errors="replace")


@pytest.mark.usefixtures("no_agent")
def _all_connections_closed(server: SshServer) -> str:
    """sshd's log once it has noted the end of every connection it saw (waits up to 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        log = server.log.read_text(errors="replace")
        opened = set(re.findall(r"Connection from \S+ port (\d+)", log))
        closed = set(
            re.findall(
                r"(?:Connection (?:closed|reset) by|Disconnected from)[^\n]* port (\d+)", log
            )
        )
        if opened <= closed or time.monotonic() > deadline:
            return log
        time.sleep(0.05)


@pytest.mark.usefixtures("no_agent")
def test_keyboard_interactive_wrong_answer_and_a_refusing_callback(
    pam_sshd: SshServer, ssh_users: SshUsers
) -> None:
    target, known = _pw_target(pam_sshd, ssh_users)
    with pytest.raises(AuthError, match=r"refused the login \(tried: keyboard-interactive\)"):
        SshTransport(target, own_known_hosts=known, prompt=lambda text, echo: "wrong-answer")  # type: ignore[arg-type]

    class Declined(InnoTuneError):
        pass

    def decline(text: str, echo: bool) -> str:
        raise Declined("The user cancelled the login question.", "Connect again.")

    with pytest.raises(Declined):
        SshTransport(target, own_known_hosts=known, prompt=decline)  # type: ignore[arg-type]
    # Nothing was answered the second time, so only the wrong answer counts as a failed
    # attempt against the account.
    log = _all_connections_closed(pam_sshd)
    assert log.count("Failed keyboard-interactive") == 1, log


def _cli_run(
    tmp_path: Path, server: SshServer, users: SshUsers, command: str
) -> tuple[dict[str, str], list[str]]:
    """The environment and argv of `innotune COMMAND` as the password-sudo user, with no key
    and no agent: only the server's login question can let it in."""
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("SSH_AUTH_SOCK", None)
    (tmp_path / "home").mkdir()
    target = f"{users.pw_user}@{server.host}:{server.port}"
    argv = [sys.executable, "-m", "app", command, target]
    return env, argv + ["--accept-host-key", server.host_key_fingerprint()]


def test_cli_asks_login_questions_at_a_terminal_and_fails_clearly_without_one(
    pam_sshd: SshServer, ssh_users: SshUsers, tmp_path: Path
) -> None:
    """`innotune inspect` against a keyboard-interactive-only login: on a terminal, PAM's
    question is asked with getpass and answered; with stdin not a terminal, a clear error
    instead of a hang."""
    env, argv = _cli_run(tmp_path, pam_sshd, ssh_users, "inspect")

    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        start_new_session=True,  # no controlling terminal: getpass could not reach one
    )
    assert done.returncode != 0
    text = done.stdout + done.stderr
    assert "asks a login question ('Password:')" in text and "terminal" in text, text

    # On a terminal (a pty as the child's controlling terminal), the question is asked.
    pid, fd = pty.fork()
    if pid == 0:  # the child: become the CLI, and never run on as a copy of pytest
        try:
            os.chdir(Path(__file__).resolve().parents[2])
            os.execve(sys.executable, argv, env)  # noqa: S606 - our own argv, no shell
        finally:
            os._exit(127)
    seen = bytearray()
    try:
        assert read_until(fd, b"Password: ", seen, 60), seen.decode(errors="replace")
        os.write(fd, ssh_users.pw_password.encode() + b"\n")
        read_until(fd, b"\0never", seen, 120)  # to EOF: the run goes on past the login
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # only if it is still running after 120 s
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    output = seen.decode(errors="replace")
    assert "sudo wants a password" in output, output  # logged in; stopped at the next step
    assert "refused the login" not in output and "login question" not in output, output
    assert "Accepted keyboard-interactive/pam for innotune-pw" in pam_sshd.log.read_text()
    answer_after_prompt = output.split("Password: ", 1)[1]
    assert ssh_users.pw_password not in answer_after_prompt  # getpass: not echoed
    for path in tmp_path.rglob("*"):  # nor written to InnoTune's logs or any file
        if path.is_file():
            assert ssh_users.pw_password.encode() not in path.read_bytes(), path
    del status


@pytest.mark.parametrize("command", ["doctor", "bench", "apply"])
def test_every_connecting_command_asks_login_questions_the_same_way(
    command: str, pam_sshd: SshServer, ssh_users: SshUsers, tmp_path: Path
) -> None:
    """doctor, bench and apply connect through the same opener as inspect: without a terminal
    the login question is a clear error, not a hang or a bare 'authentication failed'."""
    env, argv = _cli_run(tmp_path, pam_sshd, ssh_users, command)
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        start_new_session=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode != 0
    text = done.stdout + done.stderr
    assert "asks a login question ('Password:')" in text and "terminal" in text, text
