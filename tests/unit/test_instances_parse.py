"""Parsing the instance-finding script's output (recorded real output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.inspect.instances import InstanceChoiceError, choose_instance, parse_instances

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hosts"

FIXTURE = Path(__file__).parents[1] / "fixtures/hosts/debian12-two-instances/find-instances.txt"


def test_two_instances_found_with_sockets_ports_and_starter() -> None:
    debian, private = parse_instances(FIXTURE.read_text())
    assert debian.sockets == ("/run/mysqld/mysqld.sock",)
    assert debian.ports == (3306,)
    assert (debian.started_by, debian.service) == ("sysv", "mariadb")
    assert debian.restart_argv() == ["/etc/init.d/mariadb", "restart"]
    assert debian.user == "mysql"
    assert debian.datadir == "/var/lib/mysql"
    assert private.defaults_file == "/tmp/ps1/etc/my.cnf"
    assert private.sockets == ("/tmp/ps1/run/mysqld.sock",)
    assert private.ports == (46085,)
    assert private.started_by == "manual"
    assert private.restart_argv() is None


def test_systemd_unit_is_recognised_from_the_cgroup() -> None:
    # Synthetic variant of the real capture: the cgroup line a systemd-started server has.
    text = FIXTURE.read_text().replace(
        "@@cgroup 0::/\n", "@@cgroup 0::/system.slice/mariadb.service\n", 1
    )
    debian = parse_instances(text)[0]
    assert (debian.started_by, debian.service) == ("systemd", "mariadb.service")
    assert debian.restart_argv() == ["systemctl", "restart", "mariadb.service"]


def test_without_root_the_arguments_are_the_fallback() -> None:
    lines = [ln for ln in FIXTURE.read_text().splitlines() if not ln.startswith("@@inode")]
    debian, private = parse_instances("\n".join(lines))
    assert debian.sockets == ("/run/mysqld/mysqld.sock",)  # from --socket=
    assert private.sockets == ()  # nothing on its command line: unknown, not guessed
    assert any("needs root" in n for n in private.notes)


def test_choose_by_socket_port_or_pid() -> None:
    debian, private = parse_instances(FIXTURE.read_text())
    both = [debian, private]
    assert choose_instance(both, "/tmp/ps1/run/mysqld.sock") is private
    assert choose_instance(both, "3306") is debian
    assert choose_instance(both, str(private.pid)) is private
    assert choose_instance([private], None) is private


def test_choice_errors_say_what_to_do() -> None:
    debian, private = parse_instances(FIXTURE.read_text())
    with pytest.raises(InstanceChoiceError, match="--instance"):
        choose_instance([debian, private], None)
    with pytest.raises(InstanceChoiceError, match="No MySQL or MariaDB server"):
        choose_instance([], None)
    with pytest.raises(InstanceChoiceError, match="Running here"):
        choose_instance([debian], "/nope.sock")


def test_without_sudo_an_explicit_endpoint_is_taken_as_given() -> None:
    lines = [ln for ln in FIXTURE.read_text().splitlines() if not ln.startswith("@@inode")]
    instances = parse_instances("\n".join(lines))
    chosen = choose_instance(instances, "46085")  # the private server's port, not visible
    assert chosen.ports == (46085,)
    assert any("given as the instance" in n for n in chosen.notes)


def test_servers_in_containers_are_not_this_hosts() -> None:
    # Recorded with the suite's Debian hosts booted beside the host's own MariaDB: three
    # servers share the network namespace, two with /run/mysqld/mysqld.sock.
    text = (FIXTURES / "containers" / "find-instances.txt").read_text()
    found = parse_instances(text)
    assert [(i.pid, i.started_by, i.service) for i in found] == [(31751, "sysv", "mariadb")]
    assert choose_instance(found, "/run/mysqld/mysqld.sock").pid == 31751
    # Without the namespace lines (an older capture, or no root to read them) all are kept.
    blind = "\n".join(ln for ln in text.splitlines() if not ln.startswith(("@@self", "@@pidns")))
    assert len(parse_instances(blind)) == 3
