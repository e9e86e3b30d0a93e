"""`innotune doctor` against the real sshd and the Debian MariaDB."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.access.doctor import DoctorResult, Secrets, run_doctor
from app.domain.target import ConnectOptions, parse_target
from app.practice.server import PrivateServer
from app.remote.connect import open_transport
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.sshd import SshServer, SshUsers

ROOT = Path(__file__).parents[2]


def _doctor_cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    return subprocess.run(
        [sys.executable, "-m", "app", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def _known_hosts(sshd: SshServer, tmp_path: Path) -> Path:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts_line())
    return kh


def _lines(out: str) -> dict[str, str]:
    return {
        ln.split()[1]: ln.split()[0]
        for ln in out.splitlines()
        if ln[:4] in ("OK  ", "FAIL", "WARN", "SKIP")
    }


@pytest.mark.parametrize("user", ["root", "innotune-np"])
def test_doctor_passes_every_step(
    sshd: SshServer, ssh_users: SshUsers, debian_mariadb: DebianMariaDB, tmp_path: Path, user: str
) -> None:
    kh = _known_hosts(sshd, tmp_path)
    proc = _doctor_cli(
        [
            f"{user}@{sshd.host}:{sshd.port}",
            "--identity",
            str(sshd.client_key),
            "--known-hosts",
            str(kh),
            "--instance",  # other tests may have private servers running
            debian_mariadb.socket,
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = _lines(proc.stdout)
    assert list(steps) == [
        "connect",
        "host",
        "sudo",
        "server",
        "instance",
        "socket",
        "login",
        "privileges",
    ]
    assert set(steps.values()) == {"OK"}
    if user != "root":
        assert "relay under sudo" in proc.stdout  # the socket login of root, through sudo
    else:  # logged in as root: one story, no sudo anywhere (issue 37)
        assert "no sudo needed" in proc.stdout and "relay as root" in proc.stdout, proc.stdout
        assert "under sudo" not in proc.stdout and "sudo-level" not in proc.stdout, proc.stdout


def test_doctor_names_the_missing_sudo_password(
    sshd: SshServer, ssh_users: SshUsers, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    kh = _known_hosts(sshd, tmp_path)
    proc = _doctor_cli(
        [
            f"{ssh_users.pw_user}@{sshd.host}:{sshd.port}",
            "--identity",
            str(sshd.client_key),
            "--known-hosts",
            str(kh),
            "--instance",
            debian_mariadb.socket,
        ],
        tmp_path,
    )
    assert proc.returncode == 1
    sudo_line = next(ln for ln in proc.stdout.splitlines() if " sudo " in ln)
    assert sudo_line.startswith("FAIL")
    assert "--ask-sudo-password" in sudo_line


def test_doctor_with_the_sudo_password_passes(
    sshd: SshServer, ssh_users: SshUsers, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    kh = _known_hosts(sshd, tmp_path)
    target = parse_target(
        f"{ssh_users.pw_user}@{sshd.host}:{sshd.port}",
        ConnectOptions(
            identity=str(sshd.client_key), known_hosts=str(kh), instance=debian_mariadb.socket
        ),
    )
    result = DoctorResult()
    try:
        steps = list(
            run_doctor(
                target,
                Secrets(sudo_password=ssh_users.pw_password),
                result,
                opener=open_transport,
                own_known_hosts=str(tmp_path / "own"),
            )
        )
    finally:
        result.close()
    assert [s.status for s in steps] == ["ok"] * 8, [s.line() for s in steps]


def test_unknown_host_key_fails_with_its_fingerprint_until_accepted(
    sshd: SshServer, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    target = [
        f"root@{sshd.host}:{sshd.port}",
        "--identity",
        str(sshd.client_key),
        "--instance",
        debian_mariadb.socket,
    ]
    refused = _doctor_cli(target, tmp_path)
    assert refused.returncode == 1
    fingerprint = sshd.host_key_fingerprint()
    assert f"--accept-host-key {fingerprint}" in refused.stdout
    accepted = _doctor_cli([*target, "--accept-host-key", fingerprint], tmp_path)
    assert accepted.returncode == 0, accepted.stdout
    again = _doctor_cli(target, tmp_path)  # now stored in InnoTune's own known-hosts file
    assert again.returncode == 0, again.stdout


def test_relay_works_where_socat_is_absent(
    sshd_factory: list[SshServer], tmp_path: Path, sshd: SshServer, debian_mariadb: DebianMariaDB
) -> None:
    bare = SshServer(tmp_path / "bare", host_key=sshd.host_key)
    bare.hide_programs = ["/usr/bin/socat"]
    sshd_factory.append(bare)
    bare.start()
    kh = tmp_path / "kh"
    kh.write_text(bare.known_hosts_line())
    target = parse_target(
        f"innotune-np@{bare.host}:{bare.port}",
        ConnectOptions(
            identity=str(bare.client_key), known_hosts=str(kh), instance=debian_mariadb.socket
        ),
    )
    result = DoctorResult()
    try:
        transport = open_transport(target, own_known_hosts=str(tmp_path / "own"))
        assert not transport.run(["sh", "-c", "command -v socat"]).ok
        transport.close()
        steps = list(
            run_doctor(
                target,
                Secrets(),
                result,
                opener=open_transport,
                own_known_hosts=str(tmp_path / "own"),
            )
        )
        assert result.session is not None
        assert "python3 relay" in result.session.via
        assert result.session.query("SELECT CURRENT_USER()") == [("root@localhost",)]
    finally:
        result.close()
    assert all(s.passed for s in steps), [s.line() for s in steps]


def test_batch_client_where_neither_socat_nor_python3_exists(
    sshd_factory: list[SshServer], tmp_path: Path, sshd: SshServer, debian_mariadb: DebianMariaDB
) -> None:
    bare = SshServer(tmp_path / "bare", host_key=sshd.host_key)
    bare.hide_programs = ["/usr/bin/socat", "/usr/bin/python3.11"]
    sshd_factory.append(bare)
    bare.start()
    kh = tmp_path / "kh"
    kh.write_text(bare.known_hosts_line())
    target = parse_target(
        f"innotune-np@{bare.host}:{bare.port}",
        ConnectOptions(
            identity=str(bare.client_key), known_hosts=str(kh), instance=debian_mariadb.socket
        ),
    )
    result = DoctorResult()
    try:
        steps = list(
            run_doctor(
                target,
                Secrets(),
                result,
                opener=open_transport,
                own_known_hosts=str(tmp_path / "o"),
            )
        )
        assert all(s.passed for s in steps), [s.line() for s in steps]
        assert result.session is not None
        assert "batch mode" in result.session.via
        rows = result.session.query("SELECT CURRENT_USER(), %s", ["tab\tand 'quote'"])
        assert rows == [("root@localhost", "tab\tand 'quote'")]
    finally:
        result.close()


def test_password_login_over_tcp_through_the_ssh_connection(
    sshd: SshServer, private_server: PrivateServer, tmp_path: Path
) -> None:
    private_server.query(
        "CREATE USER 'tuner'@'127.0.0.1' IDENTIFIED BY 'tcp-Pw-1'; "
        "GRANT ALL PRIVILEGES ON *.* TO 'tuner'@'127.0.0.1'"
    )
    kh = _known_hosts(sshd, tmp_path)
    target = parse_target(
        f"innotune-pw@{sshd.host}:{sshd.port}",
        ConnectOptions(
            identity=str(sshd.client_key),
            known_hosts=str(kh),
            mysql_user="tuner",
            instance=str(private_server.port),
        ),
    )
    result = DoctorResult()
    try:
        # No sudo password: the sudo step fails, but the database login needs no sudo.
        steps = {
            s.name: s
            for s in run_doctor(
                target,
                Secrets(mysql_password="tcp-Pw-1"),
                result,
                opener=open_transport,
                own_known_hosts=str(tmp_path / "own"),
            )
        }
        assert steps["sudo"].status == "fail"
        assert steps["login"].status == "ok", steps["login"].line()
        assert result.session is not None
        assert "through the SSH connection" in result.session.via
        assert result.session.query("SELECT CURRENT_USER()") == [("tuner@127.0.0.1",)]
    finally:
        result.close()
