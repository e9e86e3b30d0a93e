"""Each test host is real: we log in, query, write and read /sys for real."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pymysql

from app.practice.server import PrivateServer
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer, SshUsers


def _ssh(server: SshServer, user: str, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "ssh",
            "-i",
            str(server.client_key),
            "-p",
            str(server.port),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={server.workdir / 'kh'}",
            "-o",
            "IdentitiesOnly=yes",
            f"{user}@{server.host}",
            command,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_sshd_lets_each_user_in_with_the_key(sshd: SshServer, ssh_users: SshUsers) -> None:
    (sshd.workdir / "kh").write_text(sshd.known_hosts_line())
    for user in ("root", ssh_users.pw_user, ssh_users.np_user):
        proc = _ssh(sshd, user, "id -un")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == user


def test_sshd_sudo_rules_differ_per_user(sshd: SshServer, ssh_users: SshUsers) -> None:
    (sshd.workdir / "kh").write_text(sshd.known_hosts_line())
    assert _ssh(sshd, ssh_users.np_user, "sudo -n id -u").stdout.strip() == "0"
    refused = _ssh(sshd, ssh_users.pw_user, "sudo -n id -u")
    assert refused.returncode != 0
    assert "password is required" in refused.stderr


def test_sshd_refuses_a_wrong_host_key_record(sshd: SshServer) -> None:
    other = sshd.workdir / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    key = Path(f"{other}.pub").read_text().split()
    (sshd.workdir / "kh").write_text(f"[{sshd.host}]:{sshd.port} {key[0]} {key[1]}\n")
    proc = _ssh(sshd, "root", "true")
    assert proc.returncode != 0
    assert "HOST IDENTIFICATION HAS CHANGED" in proc.stderr


def test_debian_mariadb_answers_over_its_socket(debian_mariadb: DebianMariaDB) -> None:
    conn = pymysql.connect(unix_socket=debian_mariadb.socket, user="root")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@version, @@datadir, @@socket")
            version, datadir, socket = cur.fetchone()
    finally:
        conn.close()
    packaged = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "mariadb-server"], capture_output=True, text=True
    ).stdout
    assert "MariaDB" in version
    assert version.split("-")[0] in packaged  # the server we talk to is the packaged one
    assert datadir == "/var/lib/mysql/"
    assert socket == debian_mariadb.socket


def test_debian_mariadb_runs_from_its_init_script(debian_mariadb: DebianMariaDB) -> None:
    status = subprocess.run(["service", "mariadb", "status"], capture_output=True, text=True)
    assert status.returncode == 0
    assert Path("/etc/mysql/mariadb.conf.d/50-server.cnf").exists()


def test_private_server_has_its_own_everything(private_server: PrivateServer) -> None:
    conn = pymysql.connect(
        host="127.0.0.1",
        port=private_server.port,
        user="root",
        unix_socket=str(private_server.socket_path),
    )
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@datadir, @@port, @@socket")
            datadir, port, socket = cur.fetchone()
    finally:
        conn.close()
    assert datadir.rstrip("/") == str(private_server.datadir)
    assert port == private_server.port
    assert socket == str(private_server.socket_path)


def test_loop_device_is_a_real_block_device(loopfs: LoopFs) -> None:
    probe = loopfs.mountpoint / "probe.txt"
    probe.write_text("written on the loop device\n")
    assert probe.read_text() == "written on the loop device\n"
    source = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE,FSTYPE", str(loopfs.mountpoint)],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert source == [loopfs.device, "ext4"]
    scheduler = (loopfs.queue / "scheduler").read_text()
    assert "[" in scheduler and "none" in scheduler
    probe.unlink()


def test_loop_server_datadir_sits_on_the_loop_device(
    loop_server: PrivateServer, loopfs: LoopFs
) -> None:
    source = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE", "--target", str(loop_server.datadir)],
        capture_output=True,
        text=True,
    ).stdout
    assert source.strip() == loopfs.device
    assert "10" in loop_server.query("SELECT 10")


def test_debian_mariadb_error_lines_land_in_syslog(debian_mariadb: DebianMariaDB) -> None:
    # Debian's mysqld_safe sends the server's messages to syslog; rsyslog writes them here.
    text = Path("/var/log/syslog").read_text(errors="replace")
    assert "mysqld: " in text and "ready for connections" in text


def test_private_server_follows_a_restart_by_another_process(
    private_server: PrivateServer,
) -> None:
    first = private_server.running_pid()
    other = PrivateServer(private_server.base)  # as another InnoTune process would
    other.restart()
    assert other.running_pid() not in (None, first)
    private_server.wait_ready(30)  # must not blame the dead first process
    assert private_server.running_pid() == other.running_pid()
