"""The whole lifecycle on every server line we run for real, as a user runs it: `innotune`.

One test per step, each on four hosts at once: this machine's Debian 12 MariaDB 10.11 (SysV
init script) and the booted Debian systems (tests/hosts/debian_hosts.py): bullseye's MariaDB
10.5, trixie's MariaDB 11.8 and sid's Oracle MySQL 9.7, each started by its own systemd unit.
The hosts are independent, so a step runs on all four side by side (the suite's longest part
takes a third of the time) and its failure names every host it failed on. A host left with a
byte changed under /etc/mysql or in the datadir's option files, or with its server down,
fails the step too (and is put back). Kernel and disk settings are this machine's, so every
plan here keeps those sliders off. The exported playbook runs on sid only: the playbook
tests (test_export.py, test_export_hosts.py) run it on the three others.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.debian_hosts import DebianHost, LocalDebian, put_back_if_changed
from tests.integration.conftest import Cli
from tests.integration.test_export import run_playbook

Host = DebianHost | LocalDebian
TRX = "innodb_flush_log_at_trx_commit"
# The kernel and disk fits off, the buffer pool and redo log kept: these steps test crash loss.
OFF = ("--fit-disks", "off", "--fit-os", "off", "--memory-share", "keep", "--redo", "keep")
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


@pytest.fixture
def hosts(request: pytest.FixtureRequest) -> dict[str, Host]:
    """The four server hosts, by name (the same ones ``host`` gives one at a time)."""
    request.getfixturevalue("debian_mariadb")
    found: dict[str, Host] = {
        "bookworm": LocalDebian(
            request.getfixturevalue("_debian_mariadb_session"), request.getfixturevalue("sshd")
        )
    }
    found.update(request.getfixturevalue("debian_hosts"))
    return found


def on_every_host(
    step: Callable[..., None], hosts: dict[str, Host], tmp_path: Path, *args: Any
) -> None:
    """``step(host, its own tmp dir, *args)`` on every host at once; fails naming each host
    whose step failed or that it left changed or down (that host is put back first)."""
    with ThreadPoolExecutor(len(hosts)) as pool:
        runs = {
            name: pool.submit(step, host, _dir(tmp_path / name), *args)
            for name, host in hosts.items()
        }
    failures = []
    for name, run in runs.items():
        exc = run.exception()
        if exc is not None:
            failures.append(f"[{name}] " + "".join(traceback.format_exception(exc)))
        wrong = put_back_if_changed(hosts[name])
        if wrong:
            failures.append(f"[{name}] after the step {wrong}")
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def booted(debian_hosts: dict[str, DebianHost], *names: str) -> dict[str, Host]:
    """Those of ``names`` that are booted (INNOTUNE_TEST_HOSTS may boot fewer); skips the test
    when none is (a failure under CI=true)."""
    found: dict[str, Host] = {n: debian_hosts[n] for n in names if n in debian_hosts}
    if not found:
        pytest.skip(f"none of {', '.join(names)} is booted (INNOTUNE_TEST_HOSTS)")
    return found


def _dir(path: Path) -> Path:
    path.mkdir()
    return path


def doctor_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    out = ok(cli("doctor", *target))
    steps = {ln.split()[1]: ln.split()[0] for ln in out.splitlines() if ln[:4] in ("OK  ", "FAIL")}
    assert set(steps.values()) == {"OK"} and len(steps) == 8, out
    manager = "sysv mariadb" if host.manager == "sysv" else f"systemd {host.service}"
    assert manager in out, out


def inspect_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    facts = json.loads(ok(cli("inspect", *target, "--json", "--sample", "1")))
    machine, server = facts["os"]["machine"], facts["server"]
    assert machine["distribution"] == DISTRIBUTION[host.name]
    assert server["flavour"] == host.flavour
    assert server["version"].startswith(host.server_line + "."), server["version"]
    instance = server["instance"]
    if host.manager == "sysv":
        assert (instance["started_by"], instance["service"]) == ("sysv", "mariadb")
    else:
        assert (instance["started_by"], instance["service"]) == (
            "systemd",
            f"{host.service}.service",
        )
        assert server["service"]["active_state"] == "active"
        assert machine["container"]  # systemd-detect-virt's answer inside the namespaces
    log = server["error_log"]
    assert log["destination"] == ERROR_LOG[host.name], log
    if log["destination"] == "journal":
        assert f"journalctl -u {host.service}.service" in log["how_to_read"]


def options_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    out = ok(cli("options", *target))
    rows = {ln.split()[0]: ln.split()[-1] for ln in out.splitlines() if re.match(r"^\w+ ", ln)}
    if isinstance(host, DebianHost):
        # The port the boot set lives in the drop-in it wrote: file and line.
        assert rows["port"] == f"{host.spec.etc_drop_in}:2", out
    assert rows["bind_address"].startswith("/etc/mysql/"), out


def plan_step(host: Host, tmp_path: Path, crash: str, value: str) -> None:
    cli, target = innotune(host, tmp_path)
    saved = tmp_path / "plan.json"  # the JSON plan beside the text, from the same run
    text = ok(
        cli("plan", *target, "--crash-loss", crash, *OFF, "--sample", "1", "--out", str(saved))
    )
    assert f": {host.flavour} {host.server_line}." in text.splitlines()[0], text
    plan = json.loads(saved.read_text())
    trx = [c for c in plan["changes"] if c["key"] == TRX]
    current = host.sql(f"SELECT @@{TRX}")
    assert [c["proposed"] for c in trx] == ([] if current == value else [value]), trx
    assert not [c for c in plan["changes"] if c["target"] in ("sysfs", "sysctl", "udev")]


def preview_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    out = ok(cli("preview", *target, "--crash-loss", "any", *OFF, "--sample", "1"))
    assert f"+{TRX} = 0" in out, out
    assert f"SET GLOBAL {TRX} = 0;" in out
    assert "No restart needed." in out
    assert host.sql(f"SELECT @@{TRX}") == "1"


def apply_live_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    pid = host.main_pid()
    out = job(cli("apply", *target, "--crash-loss", "any", *OFF, "--sample", "1", "--yes"))
    assert "end: applied" in out, out
    assert host.sql(f"SELECT @@{TRX}") == "0"
    assert host.main_pid() == pid  # live: no restart
    out = job(cli("rollback", *rollback_args(target, snapshot_of(out))))
    assert "rolled-back" in out, out
    assert host.sql(f"SELECT @@{TRX}") == "1"
    assert host.main_pid() == pid


def apply_with_restart_step(host: Host, tmp_path: Path) -> None:
    """Apply with a restart through the host's own service manager, then roll back: the old
    values written back and the server restarted the same way, every file as before."""
    cli, target = innotune(host, tmp_path)
    pid = host.main_pid()
    # A 1 s watch after the restart, as in the other apply tests: a longer one runs the
    # same check for longer.
    args = ("--crash-loss", "any", *OFF, "--sample", "1", "--yes", "--restart", "--watch", "1")
    out = job(cli("apply", *target, *args))
    assert f"restart: {restart_command(host)}" in out, out
    assert "end: applied" in out, out
    assert host.main_pid() != pid
    assert int(host.sql("SHOW GLOBAL STATUS LIKE 'Uptime'").split()[1]) < 60
    assert host.sql(f"SELECT @@{TRX}") == "0"  # read from the drop-in by the start
    pid = host.main_pid()
    out = job(cli("rollback", *rollback_args(target, snapshot_of(out))))
    assert f"restart-old: {restart_command(host)}" in out, out
    assert "end: rolled-back" in out, out
    assert host.main_pid() != pid
    assert host.sql(f"SELECT @@{TRX}") == "1"
    assert not host.differences()


def bench_step(host: Host, tmp_path: Path, engine: str) -> None:
    """auto: the load generator on the host's python3 (no sysbench there); slap: the
    server's own mariadb-slap / mysqlslap, the route of a host with only server and client."""
    cli, target = innotune(host, tmp_path)
    before = host.sql("SHOW DATABASES")
    # The route and the engine are what is checked here, on every host: two workloads of
    # short transactions, 1 s a run in one round (the bulk load's long transactions and the
    # rounds are test_bench's). The quietness sample before it 1 s, as the other steps' samples.
    argv = ["bench", *target, "--seconds", "4", "--rounds", "1", "--threads", "2", "--sample", "1"]
    argv += ["--engine", engine]
    argv += ["--workloads", "autocommit,small_tx"]
    report = json.loads(ok(cli(*argv, "--json", "--yes")))
    rates = [r["commits_per_s"] for r in report["results"]]
    assert rates and all(rate > 0 for rate in rates), report
    # The server's own program, named with the server's release (e.g. mysqlslap 9.7.4).
    slap = re.fullmatch(r"(mariadb-slap|mysqlslap) \d+\.\d+\.\d+ on the target", report["engine"])
    assert bool(slap) == (engine == "slap"), report["engine"]
    assert all(r["cpu"]["where"] == "target" for r in report["results"]), report
    assert host.sql("SHOW DATABASES") == before  # the scratch schema is dropped


def export_playbook_step(host: Host, tmp_path: Path) -> None:
    cli, target = innotune(host, tmp_path)
    play = tmp_path / "play"
    ok(cli("export", *target, "--crash-loss", "any", *OFF, "--sample", "1", "--ansible", str(play)))
    ssh_args = f"-o UserKnownHostsFile={tmp_path / 'known_hosts'} -o StrictHostKeyChecking=yes"
    port = host.target.rsplit(":", 1)[1]
    (play / "hosts.ini").write_text(
        "[innotune]\n"
        f"db ansible_host=127.0.0.1 ansible_port={port} ansible_user=root "
        f"ansible_ssh_private_key_file={host.client_key} "
        f"ansible_ssh_common_args={shlex.quote(ssh_args)} "
        "ansible_python_interpreter=/usr/bin/python3\n"
    )
    try:
        out, (_, changed, _, _) = run_playbook(play, "--check", "--diff")
        assert changed > 0 and f"+{TRX} = 0" in out, out
        assert not host.differences(), "--check wrote a file"
        assert host.sql(f"SELECT @@{TRX}") == "1"
        out, (_, changed, _, failed) = run_playbook(play)
        assert changed > 0 and failed == 0, out
        assert host.sql(f"SELECT @@{TRX}") == "0"
        out, (_, changed, _, _) = run_playbook(play)
        assert changed == 0, out
    finally:
        host.put_back()  # a playbook has no rollback; put the host back as found


# -- the steps, each on every host at once ----------------------------------------------------


def test_doctor(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(doctor_step, hosts, tmp_path)


def test_inspect(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(inspect_step, hosts, tmp_path)


def test_options(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(options_step, hosts, tmp_path)


@pytest.mark.parametrize(("crash", "value"), [("none", "1"), ("os", "2"), ("any", "0")])
def test_plan(hosts: dict[str, Host], tmp_path: Path, crash: str, value: str) -> None:
    on_every_host(plan_step, hosts, tmp_path, crash, value)


def test_preview(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(preview_step, hosts, tmp_path)


def test_apply_live(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(apply_live_step, hosts, tmp_path)


def test_apply_with_restart_and_rollback(hosts: dict[str, Host], tmp_path: Path) -> None:
    on_every_host(apply_with_restart_step, hosts, tmp_path)


@pytest.mark.parametrize("engine", ["auto", "slap"])
def test_bench(hosts: dict[str, Host], tmp_path: Path, engine: str) -> None:
    on_every_host(bench_step, hosts, tmp_path, engine)


def test_export_playbook(debian_hosts: dict[str, DebianHost], tmp_path: Path) -> None:
    """On sid's MySQL 9.7 only: the other three hosts run the same playbook steps (--check
    changes nothing, the apply, a second run that changes nothing) in the playbook tests,
    bookworm's in test_export.py::test_playbook_over_ssh_checks_applies_restarts_and_then_
    changes_nothing, trixie's and bullseye's live change in test_export_hosts.py; each
    ansible-playbook run costs seconds of this machine's two cores."""
    on_every_host(export_playbook_step, booted(debian_hosts, "sid"), tmp_path)
