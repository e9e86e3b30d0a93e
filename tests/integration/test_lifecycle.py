"""The whole lifecycle on every server line we run for real, as a user runs it: `innotune`.

One test per step, each on four hosts: this machine's Debian 12 MariaDB 10.11 (SysV init
script) and the booted Debian systems (tests/hosts/debian_hosts.py): bullseye's MariaDB 10.5,
trixie's MariaDB 11.8 and sid's Oracle MySQL 9.7, each started by its own systemd unit.
The `server_host` fixture fails a test that leaves a byte changed under /etc/mysql or in the
datadir's option files, or the server down. Kernel and disk settings are this machine's, so
every plan here keeps those sliders off.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.hosts.debian_hosts import DebianHost, LocalDebian
from tests.integration.conftest import Cli
from tests.integration.test_export import run_playbook

Host = DebianHost | LocalDebian
TRX = "innodb_flush_log_at_trx_commit"
OFF = ("--fit-disks", "off", "--fit-os", "off")
DISTRIBUTION = {
    "bookworm": "Debian GNU/Linux 12 (bookworm)",
    "bullseye": "Debian GNU/Linux 11 (bullseye)",
    "trixie": "Debian GNU/Linux 13 (trixie)",
    "sid": "Debian GNU/Linux forky/sid",
}
# Where each packaged server sends its error log: Debian's MariaDB to syslog under the init
# script and to the journal under systemd (stderr); Debian's MySQL to its own file.
ERROR_LOG = {"bookworm": "syslog", "bullseye": "journal", "trixie": "journal", "sid": "file"}


def innotune(host: Host, tmp_path: Path) -> tuple[Cli, list[str]]:
    """The CLI with its own data directory, and the arguments that reach ``host``."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(host.known_hosts_line())
    target = [
        host.target,
        "--identity",
        str(host.client_key),
        "--known-hosts",
        str(known_hosts),
        *host.instance_args,
    ]
    return Cli(tmp_path / "data"), target


def restart_command(host: Host) -> str:
    """How the host's own service manager restarts its server."""
    if host.manager == "sysv":
        return f"/etc/init.d/{host.service} restart"
    return f"systemctl restart {host.service}.service"


def ok(done: subprocess.CompletedProcess[str]) -> str:
    """stdout of a finished command that must have succeeded."""
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def job(done: subprocess.CompletedProcess[str]) -> str:
    """An apply or rollback that must have succeeded: its steps (stderr) and summary."""
    ok(done)
    return done.stderr + done.stdout


def rollback_args(target: list[str], snapshot: str) -> list[str]:
    """``rollback TARGET SNAPSHOT [options] --yes``."""
    return [target[0], snapshot, *target[1:], "--yes"]


def snapshot_of(out: str) -> str:
    """The snapshot an apply printed (rollbacks name it: other test runs may apply too)."""
    found = re.search(r"^\s*snapshot\s+(\S+)$", out, re.MULTILINE)
    assert found, out
    return found.group(1)


def test_doctor(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    out = ok(cli("doctor", *target))
    steps = {ln.split()[1]: ln.split()[0] for ln in out.splitlines() if ln[:4] in ("OK  ", "FAIL")}
    assert set(steps.values()) == {"OK"} and len(steps) == 8, out
    manager = "sysv mariadb" if server_host.manager == "sysv" else f"systemd {server_host.service}"
    assert manager in out, out


def test_inspect(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    facts = json.loads(ok(cli("inspect", *target, "--json", "--sample", "1")))
    machine, server = facts["os"]["machine"], facts["server"]
    assert machine["distribution"] == DISTRIBUTION[server_host.name]
    assert server["flavour"] == server_host.flavour
    assert server["version"].startswith(server_host.server_line + "."), server["version"]
    instance = server["instance"]
    if server_host.manager == "sysv":
        assert (instance["started_by"], instance["service"]) == ("sysv", "mariadb")
    else:
        assert (instance["started_by"], instance["service"]) == (
            "systemd",
            f"{server_host.service}.service",
        )
        assert server["service"]["active_state"] == "active"
        assert machine["container"]  # systemd-detect-virt's answer inside the namespaces
    log = server["error_log"]
    assert log["destination"] == ERROR_LOG[server_host.name], log
    if log["destination"] == "journal":
        assert f"journalctl -u {server_host.service}.service" in log["how_to_read"]


def test_options(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    out = ok(cli("options", *target))
    rows = {ln.split()[0]: ln.split()[-1] for ln in out.splitlines() if re.match(r"^\w+ ", ln)}
    if isinstance(server_host, DebianHost):
        # The port the boot set lives in the drop-in it wrote: file and line.
        assert rows["port"] == f"{server_host.spec.etc_drop_in}:2", out
    assert rows["bind_address"].startswith("/etc/mysql/"), out


@pytest.mark.parametrize(("crash", "value"), [("none", "1"), ("os", "2"), ("any", "0")])
def test_plan(server_host: Host, tmp_path: Path, crash: str, value: str) -> None:
    cli, target = innotune(server_host, tmp_path)
    text = ok(cli("plan", *target, "--crash-loss", crash, *OFF, "--sample", "1"))
    assert f": {server_host.flavour} {server_host.server_line}." in text.splitlines()[0], text
    plan = json.loads(
        ok(cli("plan", *target, "--crash-loss", crash, *OFF, "--json", "--sample", "1"))
    )
    trx = [c for c in plan["changes"] if c["key"] == TRX]
    current = server_host.sql(f"SELECT @@{TRX}")
    assert [c["proposed"] for c in trx] == ([] if current == value else [value]), trx
    assert not [c for c in plan["changes"] if c["target"] in ("sysfs", "sysctl", "udev")]


def test_preview(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    out = ok(cli("preview", *target, "--crash-loss", "any", *OFF, "--sample", "1"))
    assert f"+{TRX} = 0" in out, out
    assert f"SET GLOBAL {TRX} = 0;" in out
    assert "No restart needed." in out
    assert server_host.sql(f"SELECT @@{TRX}") == "1"


def test_apply_live(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    pid = server_host.main_pid()
    out = job(cli("apply", *target, "--crash-loss", "any", *OFF, "--sample", "1", "--yes"))
    assert "end: applied" in out, out
    assert server_host.sql(f"SELECT @@{TRX}") == "0"
    assert server_host.main_pid() == pid  # live: no restart
    out = job(cli("rollback", *rollback_args(target, snapshot_of(out))))
    assert "rolled-back" in out, out
    assert server_host.sql(f"SELECT @@{TRX}") == "1"
    assert server_host.main_pid() == pid


def test_apply_with_restart(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    pid = server_host.main_pid()
    args = ("--crash-loss", "any", *OFF, "--sample", "1", "--yes", "--restart", "--watch", "3")
    out = job(cli("apply", *target, *args))
    assert f"restart: {restart_command(server_host)}" in out, out
    assert "end: applied" in out, out
    assert server_host.main_pid() != pid
    assert int(server_host.sql("SHOW GLOBAL STATUS LIKE 'Uptime'").split()[1]) < 60
    assert server_host.sql(f"SELECT @@{TRX}") == "0"  # read from the drop-in by the start
    job(cli("rollback", *rollback_args(target, snapshot_of(out))))


def test_rollback(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    args = ("--crash-loss", "any", *OFF, "--sample", "1", "--yes", "--restart", "--watch", "3")
    snapshot = snapshot_of(job(cli("apply", *target, *args)))
    pid = server_host.main_pid()
    out = job(cli("rollback", *rollback_args(target, snapshot)))
    assert f"restart-old: {restart_command(server_host)}" in out, out
    assert "end: rolled-back" in out, out
    assert server_host.main_pid() != pid
    assert server_host.sql(f"SELECT @@{TRX}") == "1"
    assert not server_host.differences()


@pytest.mark.parametrize("engine", ["auto", "slap"])
def test_bench(server_host: Host, tmp_path: Path, engine: str) -> None:
    """auto: the load generator on the host's python3 (no sysbench there); slap: the
    server's own mariadb-slap / mysqlslap, the route of a host with only server and client."""
    cli, target = innotune(server_host, tmp_path)
    before = server_host.sql("SHOW DATABASES")
    argv = ["bench", *target, "--seconds", "1", "--threads", "2", "--engine", engine]
    report = json.loads(ok(cli(*argv, "--json", "--yes")))
    rates = [r["commits_per_s"] for r in report["results"]]
    assert rates and all(rate > 0 for rate in rates), report
    # The server's own program, named with the server's release (e.g. mysqlslap 9.7.4).
    slap = re.fullmatch(r"(mariadb-slap|mysqlslap) \d+\.\d+\.\d+ on the target", report["engine"])
    assert bool(slap) == (engine == "slap"), report["engine"]
    assert all(r["cpu"]["where"] == "target" for r in report["results"]), report
    assert server_host.sql("SHOW DATABASES") == before  # the scratch schema is dropped


def test_export_playbook(server_host: Host, tmp_path: Path) -> None:
    cli, target = innotune(server_host, tmp_path)
    play = tmp_path / "play"
    ok(cli("export", *target, "--crash-loss", "any", *OFF, "--sample", "1", "--ansible", str(play)))
    ssh_args = f"-o UserKnownHostsFile={tmp_path / 'known_hosts'} -o StrictHostKeyChecking=yes"
    port = server_host.target.rsplit(":", 1)[1]
    (play / "hosts.ini").write_text(
        "[innotune]\n"
        f"db ansible_host=127.0.0.1 ansible_port={port} ansible_user=root "
        f"ansible_ssh_private_key_file={server_host.client_key} "
        f"ansible_ssh_common_args={shlex.quote(ssh_args)} "
        "ansible_python_interpreter=/usr/bin/python3\n"
    )
    try:
        out, (_, changed, _, _) = run_playbook(play, "--check", "--diff")
        assert changed > 0 and f"+{TRX} = 0" in out, out
        assert not server_host.differences(), "--check wrote a file"
        assert server_host.sql(f"SELECT @@{TRX}") == "1"
        out, (_, changed, _, failed) = run_playbook(play)
        assert changed > 0 and failed == 0, out
        assert server_host.sql(f"SELECT @@{TRX}") == "0"
        out, (_, changed, _, _) = run_playbook(play)
        assert changed == 0, out
    finally:
        server_host.put_back()  # a playbook has no rollback; put the host back as found
