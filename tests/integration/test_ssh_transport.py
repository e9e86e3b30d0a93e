"""SshTransport against the real sshd: host keys, logins, sudo, streams, and no leaked secret."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.domain.errors import (
    AuthError,
    CommandTimeout,
    ConnectError,
    HostKeyChanged,
    HostKeyRevoked,
    HostKeyUnknown,
    SudoError,
)
from app.domain.target import ConnectOptions, Target, parse_target
from app.practice.server import free_port
from app.remote.connect import open_transport, probe_sudo
from app.remote.local import LocalTransport
from app.remote.ssh import SshTransport, check_linux
from app.remote.transport import Transport
from tests.hosts.procwatch import ProcWatch
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import need, wait_port


@pytest.fixture(autouse=True)
def _users_as_expected(ssh_users: SshUsers) -> None:
    """Re-assert the test accounts (idempotent): another pytest run on this machine may
    have removed them or set other passwords since the session began."""
    ssh_users.create()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME: no real ~/.ssh, no agent, InnoTune's file under it."""
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return path


@pytest.fixture
def own(home: Path, sshd: SshServer) -> Path:
    """InnoTune's own known_hosts (the default path), already trusting the session sshd."""
    path = home / ".local" / "share" / "InnoTune" / "known_hosts"
    path.parent.mkdir(parents=True)
    path.write_text(sshd.known_hosts_line())
    return path


@pytest.fixture
def opened() -> Iterator[list[Transport]]:
    """Transports to close after the test."""
    items: list[Transport] = []
    yield items
    for item in items:
        item.close()


def _target(server: SshServer, user: str, *, key: bool = True, **options: str) -> Target:
    opts = ConnectOptions(identity=str(server.client_key) if key else None, **options)  # type: ignore[arg-type]
    return parse_target(f"{user}@{server.host}:{server.port}", opts)


def _open(opened: list[Transport], target: Target, **kwargs: object) -> SshTransport:
    transport = open_transport(target, **kwargs)  # type: ignore[arg-type]
    assert isinstance(transport, SshTransport)
    opened.append(transport)
    return transport


def _preauth_closes(server: SshServer) -> int:
    return server.log.read_text(errors="replace").count("[preauth]")


# -- host keys ----------------------------------------------------------------------------


def test_unknown_key_is_refused_until_accepted(
    sshd: SshServer, ssh_users: SshUsers, home: Path, opened: list[Transport]
) -> None:
    own = home / ".local" / "share" / "InnoTune" / "known_hosts"
    target = _target(sshd, ssh_users.pw_user, key=False)
    before = _preauth_closes(sshd)
    with pytest.raises(HostKeyUnknown) as question:
        open_transport(target, login_password=ssh_users.pw_password)
    assert question.value.fingerprint == sshd.host_key_fingerprint()  # as ssh-keygen -lf
    assert question.value.key_type == "ED25519"
    assert question.value.host == f"[127.0.0.1]:{sshd.port}"
    assert not own.exists()
    # Refused before authentication: sshd saw the client leave before any login attempt.
    deadline = time.monotonic() + 5
    while _preauth_closes(sshd) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _preauth_closes(sshd) > before
    assert f"password for {ssh_users.pw_user}" not in sshd.log.read_text(errors="replace")

    with pytest.raises(HostKeyUnknown):  # a different fingerprint is no acceptance
        open_transport(target, login_password=ssh_users.pw_password, accept_fingerprint="SHA256:x")

    fingerprint = question.value.fingerprint
    first = _open(
        opened, target, login_password=ssh_users.pw_password, accept_fingerprint=fingerprint
    )
    assert first.host_key_status == "accepted"
    assert first.run(["id", "-un"]).out.strip() == ssh_users.pw_user
    assert own.read_text() == question.value.key_line + "\n"
    assert not (home / ".ssh" / "known_hosts").exists()  # the user's file is never written
    again = _open(opened, _target(sshd, "root"))
    assert again.host_key_status == "known"


def test_changed_key_is_refused_naming_both(
    sshd: SshServer, sshd_factory: list[SshServer], tmp_path: Path, own: Path
) -> None:
    other = SshServer(tmp_path / "other")  # its own, new host key
    sshd_factory.append(other)
    other.start()
    # The old server's key on record for the new server's address: what a swapped key looks like.
    own.write_text(sshd.known_hosts_line().replace(f":{sshd.port} ", f":{other.port} "))
    new_fp = other.host_key_fingerprint()
    for accept in (None, new_fp):  # accepting the new fingerprint does not override a change
        with pytest.raises(HostKeyChanged) as changed:
            SshTransport(_target(other, "root"), own_known_hosts=own, accept_fingerprint=accept)
        assert sshd.host_key_fingerprint() in changed.value.known
        assert changed.value.offered == f"ED25519 {new_fp}"
        assert sshd.host_key_fingerprint() in str(changed.value) and new_fp in str(changed.value)
    assert own.read_text().count("\n") == 1


def test_known_hosts_with_markers_hashed_wildcard_and_garbage(
    sshd: SshServer, home: Path, tmp_path: Path, opened: list[Transport]
) -> None:
    key_type, key_b64 = Path(f"{sshd.host_key}.pub").read_text().split()[:2]
    spare = tmp_path / "spare"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(spare)], check=True)
    spare_type, spare_b64 = Path(f"{spare}.pub").read_text().split()[:2]
    user_kh = home / ".ssh" / "known_hosts"
    user_kh.write_text(sshd.known_hosts_line())
    # Hashed by OpenSSH itself, then the lines that crash paramiko's own loader around it.
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(user_kh)], check=True, capture_output=True)
    user_kh.write_text(
        f"@cert-authority *.example.com {spare_type} {spare_b64}\n"
        f"@revoked old.example.com {spare_type} {spare_b64}\n"
        "this is not a known_hosts line\n"
        "|1|garbage|hash ssh-ed25519 AAAA\n" + user_kh.read_text()
    )
    assert "|1|" in user_kh.read_text() and f"{sshd.port}" not in user_kh.read_text()
    hashed = _open(opened, _target(sshd, "root"))
    assert hashed.host_key_status == "known"
    assert any("@cert-authority line skipped" in note for note in hashed.store.notes)

    user_kh.write_text("")
    wildcard = tmp_path / "wild_kh"
    wildcard.write_text(f"garbage\n[127.0.0.*]:{sshd.port},!10.* {key_type} {key_b64}\n")
    wild = _open(opened, _target(sshd, "root", known_hosts=str(wildcard)))
    assert wild.host_key_status == "known"

    wildcard.write_text(wildcard.read_text() + f"@revoked * {key_type} {key_b64}\n")
    with pytest.raises(HostKeyRevoked, match="revoked"):
        open_transport(_target(sshd, "root", known_hosts=str(wildcard)))
    assert not (home / ".local" / "share" / "InnoTune" / "known_hosts").exists()


# -- logins -------------------------------------------------------------------------------


def test_wrong_password_and_wrong_key_fail_cleanly(
    sshd: SshServer, ssh_users: SshUsers, own: Path, tmp_path: Path, opened: list[Transport]
) -> None:
    user = ssh_users.pw_user
    with pytest.raises(AuthError) as bad_pw:
        open_transport(
            _target(sshd, user, key=False), login_password="wrong-" + secrets.token_hex(4)
        )
    assert "refused the login (tried: password)" in str(bad_pw.value)
    assert "Traceback" not in str(bad_pw.value) and "paramiko" not in str(bad_pw.value)

    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    target = parse_target(f"{user}@{sshd.host}:{sshd.port}", ConnectOptions(identity=str(stranger)))
    with pytest.raises(AuthError) as bad_key:
        open_transport(target)
    assert str(stranger) in str(bad_key.value) and "--identity" in bad_key.value.fix

    missing = parse_target(f"{user}@{sshd.host}:{sshd.port}", ConnectOptions(identity="/nope/key"))
    with pytest.raises(AuthError, match="does not exist"):
        open_transport(missing)

    good = _open(opened, _target(sshd, user, key=False), login_password=ssh_users.pw_password)
    assert good.run(["id", "-un"]).out.strip() == user


def test_connection_failures_are_explained(
    sshd_factory: list[SshServer], tmp_path: Path, home: Path
) -> None:
    with pytest.raises(ConnectError, match="refused the connection"):
        open_transport(parse_target(f"root@127.0.0.1:{free_port()}"))
    with pytest.raises(ConnectError, match="could not be resolved"):
        open_transport(parse_target("root@no-such-host.invalid"))

    old = SshServer(tmp_path / "sha1")  # a server speaking only SHA-1 key exchange
    old.extra_config = "KexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group1-sha1\n"
    sshd_factory.append(old)
    old.start()
    with pytest.raises(ConnectError) as too_old:
        open_transport(_target(old, "root"))
    assert "too old" in too_old.value.problem and "paramiko 5" in too_old.value.problem

    with pytest.raises(ConnectError, match="InnoTune works on Linux hosts only"):
        check_linux("db", "FreeBSD")
    check_linux("db", "Linux\n")


def test_ssh_config_alias_and_proxy_jump(
    sshd: SshServer, own: Path, home: Path, opened: list[Transport]
) -> None:
    shutil.copy(sshd.client_key, home / ".ssh" / "id_ed25519")  # found as a default key
    (home / ".ssh" / "config").write_text(
        "Host innotune-alias\n"
        "  HostName 127.0.0.1\n"
        f"  Port {sshd.port}\n"
        "  User innotune-np\n"
        f"  IdentityFile {sshd.client_key}\n"
        "Host innotune-jumped\n"
        "  HostName 127.0.0.1\n"
        f"  Port {sshd.port}\n"
        "  User root\n"
        f"  ProxyJump root@127.0.0.1:{sshd.port}\n"
        "Host innotune-proxied\n"
        "  HostName 127.0.0.1\n"
        f"  Port {sshd.port}\n"
        "  User root\n"
        "  ProxyCommand socat - TCP:%h:%p\n"
    )
    alias = _open(opened, parse_target("innotune-alias"))
    assert alias.run(["id", "-un"]).out.strip() == "innotune-np"
    jumped = _open(opened, parse_target("innotune-jumped"))
    assert jumped.run(["id", "-un"]).out.strip() == "root"
    # The target's transport rides on the jump host's channel.
    assert len(jumped._chain.transports) == 2
    need(shutil.which("socat") is not None, "socat is not installed")
    proxied = _open(opened, parse_target("innotune-proxied"))
    assert proxied.run(["id", "-un"]).out.strip() == "root"


# -- sudo ---------------------------------------------------------------------------------


def test_sudo_modes(
    sshd: SshServer, ssh_users: SshUsers, own: Path, opened: list[Transport]
) -> None:
    root = _open(opened, _target(sshd, "root"))
    assert root.is_root and probe_sudo(root) == "root"
    assert root.run(["id", "-u"], sudo=True).out.strip() == "0"

    np = _open(opened, _target(sshd, ssh_users.np_user), sudo_password="not-needed")
    assert not np.is_root and not np.sudo.has_password  # dropped: NOPASSWD would pass it on
    assert probe_sudo(np) == "nopasswd"
    assert np.run(["cat"], sudo=True, input=b"data").out == "data"  # no password line in front
    # Even with the password kept, sudo without a prompt never receives it (the cached
    # timestamp / NOPASSWD trap): it is sent only when sudo asks for it.
    canary = "canary-" + secrets.token_hex(8)
    kept = SshTransport(_target(sshd, ssh_users.np_user), sudo_password=canary, own_known_hosts=own)
    opened.append(kept)
    assert kept.sudo.has_password
    assert kept.run(["cat"], sudo=True, input=b"data").out == "data"
    stream = kept.open_stream(["cat"], sudo=True)
    stream.sendall(b"ping\n")
    assert stream.recv(100) == b"ping\n"
    stream.close()

    pw_user = ssh_users.pw_user
    no_pw = _open(opened, _target(sshd, pw_user))
    with pytest.raises(SudoError, match="wants a password"):
        probe_sudo(no_pw)
    with pytest.raises(SudoError, match="wants a password"):
        no_pw.run(["true"], sudo=True)

    with_pw = _open(opened, _target(sshd, pw_user), sudo_password=ssh_users.pw_password)
    assert probe_sudo(with_pw) == "password-ok"
    assert with_pw.run(["id", "-u"], sudo=True).out.strip() == "0"

    wrong = _open(opened, _target(sshd, pw_user), sudo_password="wrong-" + secrets.token_hex(4))
    with pytest.raises(SudoError, match="password was refused"):
        probe_sudo(wrong)


def _scan_files(
    roots: list[Path], needles: dict[str, bytes], since: float
) -> list[tuple[str, str]]:
    """Every regular file under ``roots`` (changed since ``since`` under /tmp and /run)."""
    hits = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath) / name
                try:
                    st = path.lstat()
                    recent = st.st_mtime >= since or st.st_ctime >= since
                    if not path.is_file() or path.is_symlink() or st.st_size > 64 << 20:
                        continue
                    if str(root).startswith(("/tmp", "/run", "/var/tmp")) and not recent:
                        continue
                    data = path.read_bytes()
                except OSError:
                    continue
                hits += [(label, str(path)) for label, n in needles.items() if n in data]
    return hits


def test_sudo_password_leaks_nowhere(
    sshd: SshServer,
    ssh_users: SshUsers,
    own: Path,
    tmp_path: Path,
    opened: list[Transport],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # paramiko's DEBUG output included
    started = time.time() - 1
    password = ssh_users.pw_password.encode()
    leak_cmd, leak_env, leak_file = (f"canary-{n}-{secrets.token_hex(8)}" for n in "cef")
    needles = {
        "password": password,
        "leak_cmd": leak_cmd.encode(),
        "leak_env": leak_env.encode(),
        "leak_file": leak_file.encode(),
    }
    watch = f"innotune-watch-{secrets.token_hex(6)}"
    marks = {
        "sudo on its stdin": lambda argv: argv.startswith(b"sudo\0-S\0"),
        "the watched command": lambda argv: watch.encode() in argv,
    }
    with ProcWatch(needles, in_environ=frozenset(needles), marks=marks) as scanner:
        pw = _open(opened, _target(sshd, ssh_users.pw_user), sudo_password=ssh_users.pw_password)
        t0 = time.monotonic()
        done = pw.run(["sh", "-c", "sleep 2; id -u", watch], sudo=True, timeout=30).check()
        assert time.monotonic() - t0 >= 2
        assert done.out.strip() == "0"
        target = tmp_path / "written.cnf"
        pw.write_file_atomic(str(target), b"[mysqld]\n", sudo=True)  # password + data on stdin
        stream = pw.open_stream(["sh", "-c", "id -u; cat"], sudo=True)
        stream.sendall(b"ping\n")
        assert stream.recv(100) in (b"0\n", b"0\nping\n")
        stream.close()
        # The deliberate leaks: the same scan must catch each one.
        pw.run(["sh", "-c", "sleep 1", leak_cmd]).check()
        pw.run(["env", f"INNOTUNE_LEAK={leak_env}", "sleep", "1"]).check()
        (tmp_path / "leak.txt").write_text(leak_file)
    roots = [Path("/var/log"), Path("/tmp"), Path("/var/tmp"), Path("/run"), sshd.workdir]
    roots.append(Path(f"/home/{ssh_users.pw_user}"))
    file_hits = _scan_files(roots, needles, started)

    assert scanner.seen == set(marks), "the watcher saw the sudo command"
    # It read every program as it started (or, without the kernel's events, swept /proc often).
    assert scanner.execs >= 5 if scanner.events else scanner.sweeps >= 20, "the watcher ran"
    assert [h for h in scanner.hits if h[0] == "password"] == []
    assert [h for h in file_hits if h[0] == "password"] == []
    assert ssh_users.pw_password not in caplog.text
    assert ssh_users.pw_password not in sshd.log.read_text(errors="replace")
    assert ssh_users.pw_password.encode() not in target.read_bytes()
    # Proof the scan can fail: each deliberate leak was found where it was put.
    assert any(h[:2] == ("leak_cmd", "cmdline") for h in scanner.hits)
    assert any(h[:2] == ("leak_env", "environ") for h in scanner.hits)
    assert ("leak_file", str(tmp_path / "leak.txt")) in file_hits


# -- commands, files, streams -------------------------------------------------------------


def test_twenty_megabytes_on_both_streams_and_signals(
    sshd: SshServer, own: Path, opened: list[Transport]
) -> None:
    root = _open(opened, _target(sshd, "root"))
    size = 20_000_000
    t0 = time.monotonic()
    both = root.run(["sh", "-c", f"head -c {size} /dev/zero >&2 & head -c {size} /dev/zero; wait"])
    elapsed = time.monotonic() - t0
    assert (len(both.stdout), len(both.stderr), both.exit_status) == (size, size, 0)
    print(f"\n20 MB on stdout and 20 MB on stderr over SSH in {elapsed:.2f} s")
    # stdin fed while both output streams fill (paramiko sends ~10 MB/s, so a smaller input)
    small = 4_000_000
    echoed = root.run(["sh", "-c", f"head -c {size} /dev/zero >&2 & cat; wait"], input=b"x" * small)
    assert (len(echoed.stdout), len(echoed.stderr)) == (small, size) and echoed.ok
    assert set(echoed.stdout) == {ord("x")}

    killed = root.run(["sh", "-c", "kill -KILL $$"])
    assert killed.exit_status == -1 and not killed.ok
    assert root.run(["sh", "-c", "exit 3"]).exit_status == 3

    with pytest.raises(CommandTimeout, match="ran longer than 1 s"):
        root.run(["sleep", "30.4242"], timeout=1)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _running(b"sleep\x0030.4242\x00"):
        time.sleep(0.05)
    assert not _running(b"sleep\x0030.4242\x00"), "the timed-out command was killed"


def test_stdin_outwaits_a_command_that_reads_it_late(
    sshd: SshServer, own: Path, opened: list[Transport]
) -> None:
    """stdin larger than the SSH window (2 MiB) to commands that read it late or never.

    The send window then stays shut for over a second while stderr and stdout carry
    megabytes. The stdin thread once took that as a failure (a 0.5 s channel timeout),
    stopped, and never sent EOF: ``cat`` then waited until the command's deadline. That
    was the rare 60 s stall of the test above, when a busy machine held the window shut.
    """
    root = _open(opened, _target(sshd, "root"))
    data = secrets.token_bytes(4_000_000)
    scripts = [
        # stderr first, then a pause, then stdin read and echoed
        ("head -c 8000000 /dev/zero >&2; sleep 1; cat", 4_000_000, 8_000_000),
        # a pause, then stdin echoed while stderr fills at the same time, then more stdout
        (
            "sleep 1; head -c 8000000 /dev/zero >&2 & cat; wait; head -c 3000000 /dev/zero",
            7_000_000,
            8_000_000,
        ),
        # stdin never read at all: the command ends, and so does the feeding
        ("sleep 1; head -c 100 /dev/zero", 100, 0),
    ]
    for script, out_size, err_size in scripts:
        t0 = time.monotonic()
        result = root.run(["sh", "-c", script], input=data, timeout=40)
        assert (result.exit_status, len(result.stdout), len(result.stderr)) == (
            0,
            out_size,
            err_size,
        ), script
        if "cat" in script:
            assert result.stdout[: len(data)] == data, script
        print(f"\n{script!r}: {time.monotonic() - t0:.2f} s")


def _running(cmdline: bytes) -> bool:
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == cmdline:
                return True
        except OSError:
            continue
    return False


def test_values_pass_through_unharmed(
    sshd: SshServer, ssh_users: SshUsers, own: Path, opened: list[Transport]
) -> None:
    values = ["a'b\"c", "$(id)", "`id`;x", "&& rm -rf /nope", "back\\slash", "bang!", "new\nline"]
    values += ["", " lead", "ünï", "%s", "-n", "*", "~root", "${HOME}"]
    np = _open(opened, _target(sshd, ssh_users.np_user))
    for sudo in (False, True):
        out = np.run(["printf", "%s\\0", *values], sudo=sudo).check().stdout
        assert out.split(b"\0")[:-1] == [v.encode() for v in values]
    assert np.run(["echo", "plain"]).out == "plain\n"  # the unencoded command line


def test_write_file_atomic_keeps_owner_and_mode(
    sshd: SshServer, ssh_users: SshUsers, own: Path, tmp_path: Path, opened: list[Transport]
) -> None:
    conf_dir = tmp_path / "conf.d"  # root-only: only sudo can write here
    conf_dir.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    target = conf_dir / "innotune.cnf"
    target.write_text("old\n")
    os.chown(target, 65534, 65534)
    target.chmod(0o640)
    data = b"[mysqld]\ninnodb_flush_log_at_trx_commit = 2\n" + bytes(range(256)) * 1000

    pw = _open(opened, _target(sshd, ssh_users.pw_user), sudo_password=ssh_users.pw_password)
    pw.write_file_atomic(str(target), data, sudo=True)
    st = target.stat()
    assert target.read_bytes() == data  # nothing of the password line before the data
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)
    assert sorted(p.name for p in conf_dir.iterdir()) == ["innotune.cnf"]
    assert pw.read_file(str(target), sudo=True) == data

    fresh = conf_dir / "new.cnf"
    pw.write_file_atomic(str(fresh), b"x\n", sudo=True, mode="0644", owner="root:root")
    assert (fresh.stat().st_mode & 0o7777, fresh.stat().st_uid) == (0o644, 0)
    with pytest.raises(Exception, match="Permission denied"):
        pw.write_file_atomic(str(fresh), b"y\n", sudo=False)
    assert fresh.read_bytes() == b"x\n"
    assert sorted(p.name for p in conf_dir.iterdir()) == ["innotune.cnf", "new.cnf"]


def test_streams_and_forwarding(
    sshd: SshServer,
    ssh_users: SshUsers,
    sshd_factory: list[SshServer],
    own: Path,
    tmp_path: Path,
    opened: list[Transport],
) -> None:
    pw = _open(opened, _target(sshd, ssh_users.pw_user), sudo_password=ssh_users.pw_password)
    stream = pw.open_stream(["sh", "-c", "echo err >&2; id -u; cat"], sudo=True)
    stream.sendall(b"hello\n")
    got = b""
    while not got.endswith(b"hello\n"):
        got += stream.recv(100)
    assert got == b"0\nhello\n"
    stream.close()

    pw.sudo.set_password("wrong-" + secrets.token_hex(4))
    t0 = time.monotonic()
    with pytest.raises(SudoError, match="password was refused"):
        pw.open_stream(["cat"], sudo=True)
    assert time.monotonic() - t0 < 15  # no waiting for the full 30 s timeout
    t0 = time.monotonic()
    with pytest.raises(SudoError, match="password was refused"):
        pw.run(["cat"], sudo=True, input=b"not-a-password-1\nnot-a-password-2\n")
    # One refusal: the input is sent only after sudo started, never tried as passwords.
    assert time.monotonic() - t0 < 8

    banner = pw.open_tcp("127.0.0.1", sshd.port)
    assert banner.recv(100).startswith(b"SSH-2.0-OpenSSH")
    banner.close()
    with pytest.raises(ConnectError, match="nothing listens"):
        pw.open_tcp("127.0.0.1", free_port())

    closed = SshServer(tmp_path / "noforward")
    closed.extra_config = "Match all\n    AllowTcpForwarding no\n"
    sshd_factory.append(closed)
    closed.start()
    wait_port(closed.host, closed.port)
    own.write_text(closed.known_hosts_line())
    no_fwd = _open(opened, _target(closed, "root"))
    with pytest.raises(ConnectError, match="AllowTcpForwarding"):
        no_fwd.open_tcp("127.0.0.1", closed.port)


def test_local_and_practice_targets_are_this_computer() -> None:
    for name in ("local", "practice"):
        transport = open_transport(parse_target(name))
        assert isinstance(transport, LocalTransport)
        assert probe_sudo(transport) == "root"  # the test machine runs as root


# -- the harder corners: login shells, agents, limits, tarpits ------------------------------

_SHELLS = {
    "innotune-fish": (
        "/usr/bin/fish",
        ".config/fish/config.fish",
        "echo fish-noise\necho fish-err >&2\n",
    ),
    "innotune-tcsh": ("/usr/bin/tcsh", ".tcshrc", "echo tcsh-noise\n"),
    "innotune-noisy": ("/bin/bash", ".bashrc", "echo bash-noise\necho bash-err >&2\n"),
}


@pytest.fixture
def shell_users() -> Iterator[list[str]]:
    """Accounts whose login shell is fish, tcsh, or bash with a .bashrc that prints."""
    for shell, _rc, _text in _SHELLS.values():
        need(Path(shell).exists(), f"{shell} is not installed")
    created = []
    try:
        for user, (shell, rc, text) in _SHELLS.items():
            if subprocess.run(["id", user], capture_output=True).returncode != 0:
                subprocess.run(["useradd", "--create-home", "--shell", shell, user], check=True)
            created.append(user)
            rc_path = Path(f"/home/{user}") / rc
            rc_path.parent.mkdir(parents=True, exist_ok=True)
            rc_path.write_text(text)
        yield created
    finally:
        for user in created:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
            subprocess.run(["userdel", "--remove", user], capture_output=True)


def test_fish_tcsh_and_noisy_login_shells_change_nothing(
    sshd: SshServer, shell_users: list[str], own: Path, tmp_path: Path, opened: list[Transport]
) -> None:
    values = ["a'b\"c", "$(id)", "back\\slash", "bang!", "new\nline", "", "~", "%s", "$HOME"]
    for user in shell_users:
        transport = _open(opened, _target(sshd, user))
        assert transport.run(["echo", "plain"]).out == "plain\n", user  # noise dropped
        assert transport.run(["sh", "-c", "echo $LC_ALL"]).out == "C\n", user
        got = transport.run(["printf", "%s\\0", *values]).check()
        assert got.stdout.split(b"\0")[:-1] == [v.encode() for v in values], user
        assert got.stderr == b"", user
        path = f"/home/{user}/out.txt"
        transport.write_file_atomic(path, b"data\n")
        assert transport.read_file(path) == b"data\n"


def test_agent_passphrase_one_identity_and_server_limits(
    sshd_factory: list[SshServer],
    own: Path,
    tmp_path: Path,
    opened: list[Transport],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limited = SshServer(tmp_path / "limited")
    limited.extra_config = "MaxAuthTries 3\nMaxSessions 2\n"
    sshd_factory.append(limited)
    limited.start()
    own.write_text(limited.known_hosts_line())
    agent_sock = tmp_path / "agent.sock"
    started = subprocess.run(
        ["ssh-agent", "-s", "-a", str(agent_sock)], capture_output=True, text=True, check=True
    )
    agent_pid = started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0]
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent_sock))

    def keygen(name: str, passphrase: str = "") -> Path:
        path = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(path)])
        return path

    def agent_holds(*keys: Path) -> None:
        subprocess.run(["ssh-add", "-q", "-D"], capture_output=True, check=True)
        for key in keys:
            subprocess.run(["ssh-add", "-q", str(key)], capture_output=True, check=True)

    try:
        strangers = [keygen(f"stranger{n}") for n in range(4)]
        plain = parse_target(f"root@{limited.host}:{limited.port}")
        agent_holds(strangers[0], limited.client_key)
        via_agent = _open(opened, plain)  # the agent's second key: within MaxAuthTries 3
        assert via_agent.run(["id", "-un"]).out == "root\n"

        agent_holds(*strangers, limited.client_key)
        with pytest.raises(AuthError) as too_many:  # the agent alone burns all tries
            open_transport(plain)
        assert "--identity" in too_many.value.fix
        picked = _open(opened, _target(limited, "root"))  # one picked identity: agent unused
        # MaxSessions 2: a dozen commands in a row work only if each channel is closed.
        for n in range(12):
            assert picked.run(["echo", str(n)]).out == f"{n}\n"

        passphrase = "pp-" + secrets.token_hex(4)
        locked = keygen("locked", passphrase)
        with open(limited.authorized_keys, "a") as fh:
            fh.write(Path(f"{locked}.pub").read_text())
        target = parse_target(
            f"root@{limited.host}:{limited.port}", ConnectOptions(identity=str(locked))
        )
        with pytest.raises(AuthError, match="protected by a passphrase"):
            open_transport(target)
        with pytest.raises(AuthError, match="passphrase for .* is wrong"):
            open_transport(target, key_passphrase="not-it")
        unlocked = _open(opened, target, key_passphrase=passphrase)
        assert unlocked.run(["true"]).ok
    finally:
        subprocess.run(["kill", agent_pid], capture_output=True)


def test_banner_timeout_on_a_tarpit(own: Path) -> None:
    tarpit = socket.socket()
    tarpit.bind(("127.0.0.1", 0))
    tarpit.listen(1)  # the kernel completes the handshake; nobody ever says a word
    try:
        port = tarpit.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(ConnectError, match="sent no SSH greeting"):
            SshTransport(parse_target(f"root@127.0.0.1:{port}"), connect_timeout=1)
        assert time.monotonic() - t0 < 5
    finally:
        tarpit.close()


def test_policy_for_sshclient_defers_to_our_store(sshd: SshServer, home: Path) -> None:
    """The paramiko policy object: for code that must use SSHClient, same decisions."""
    import paramiko

    from app.remote.hostkeys import HostKeyStore
    from app.remote.sshconnect import InnoTuneHostKeyPolicy

    own = home / "own_kh"
    store = HostKeyStore(own_file=own)

    def connect(accept: str | None) -> None:
        client = paramiko.SSHClient()  # its own HostKeys stay empty: the policy decides
        client.set_missing_host_key_policy(InnoTuneHostKeyPolicy(store, accept))
        try:
            client.connect(
                sshd.host,
                sshd.port,
                username="root",
                key_filename=str(sshd.client_key),
                allow_agent=False,
                look_for_keys=False,
                timeout=10,
            )
        finally:
            client.close()

    with pytest.raises(HostKeyUnknown) as question:
        connect(None)
    assert question.value.fingerprint == sshd.host_key_fingerprint()
    connect(question.value.fingerprint)
    assert own.read_text() == question.value.key_line + "\n"
    connect(None)
