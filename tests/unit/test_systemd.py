"""systemd: parsing `systemctl show` on a real capture, and the one command the inspection runs.

systemd does not run on the test machine, so the capture in
tests/fixtures/hosts/systemd-el9-mariadb/ (see its SOURCE.md) is the evidence for the parser, and
the inspection's systemd step is fed that capture through a fake transport answering one command.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.domain.errors import InnoTuneError
from app.domain.facts import from_json, to_json
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ErrorLog, ServerFacts
from app.domain.service import ServiceInfo
from app.inspect.report import server_lines
from app.inspect.server import error_log_of
from app.inspect.systemd import (
    PROPERTIES,
    parse_exec,
    parse_systemctl_show,
    parse_timespan,
    read_service,
    systemd_argv_for,
)
from app.remote.transport import CommandResult

EL9 = Path(__file__).parents[1] / "fixtures/hosts/systemd-el9-mariadb"


def el9_show_text() -> str:
    """The capture as `systemctl show` printed it: Ansible split each Key=Value line at the '='."""
    status = json.loads((EL9 / "ansible-systemd-result.json").read_text())["status"]
    return "".join(f"{key}={value}\n" for key, value in status.items())


def test_real_capture_parses() -> None:
    info = parse_systemctl_show(el9_show_text())
    assert info == ServiceInfo(
        unit="mariadb.service",
        active_state="inactive",
        sub_state="dead",
        result="success",
        main_pid=None,  # MainPID=0: Ansible read it before starting the unit
        exec_start=(
            "/usr/libexec/mariadbd",
            "--basedir=/usr",
            "$MYSQLD_OPTS",
            "$_WSREP_NEW_CLUSTER",
        ),
        user="mysql",
        environment=(),
        restart="on-abort",
        fragment_path="/usr/lib/systemd/system/mariadb.service",
        drop_in_paths=(),
        timeout_start_s=300.0,  # TimeoutStartUSec=5min
        timeout_stop_s=300.0,
        memory_max_bytes=None,  # MemoryMax=infinity, MemoryLimit=infinity
    )
    assert not info.running


def test_only_the_requested_properties_are_needed() -> None:
    """Filtering the real capture to PROPERTIES (what `-p` asks for) gives the same answer."""
    full = el9_show_text()
    asked = "".join(line + "\n" for line in full.splitlines() if line.split("=")[0] in PROPERTIES)
    assert parse_systemctl_show(asked) == parse_systemctl_show(full)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("5min", 300.0),
        ("15min", 900.0),
        ("15min 30s", 930.0),
        ("15min 50s", 950.0),  # seen live for TimeoutStartSec=950s
        ("1min 30s", 90.0),  # systemd's DefaultTimeoutStartSec=90s
        ("900ms", 0.9),
        ("1.500s", 1.5),
        ("1h 2min 3s", 3723.0),
        ("1d", 86400.0),
        ("250us", 0.00025),
        ("90000000", 90.0),  # a bare number is microseconds
        ("infinity", None),
    ],
)
def test_timespans(text: str, seconds: float | None) -> None:
    assert parse_timespan(text) == (pytest.approx(seconds) if seconds is not None else None)


@pytest.mark.parametrize("text", ["", "soon", "5 minutes", "5min and more", "min", "-5s"])
def test_not_timespans(text: str) -> None:
    with pytest.raises(ValueError, match="time span"):
        parse_timespan(text)


def test_limits_and_odd_values() -> None:
    text = (
        "Id=mysql.service\nMainPID=4242\nActiveState=active\nTimeoutStartUSec=0\n"
        "TimeoutStopUSec=infinity\nMemoryMax=infinity\nMemoryLimit=8589934592\n"
        "DropInPaths=/etc/systemd/system/mysql.service.d/a.conf /run/x.conf\n"
        "Environment=MYSQLD_MULTI_INSTANCE=--defaults-file=/etc/my.1.cnf 'X=a b'\n"
        "ExecStartPre={ path=/bin/true ; argv[]=/bin/true ; ignore_errors=no }\n"
        'ExecStart={ path=/usr/sbin/mysqld ; argv[]=/usr/sbin/mysqld --x="a b" ; flags= }\n'
        "garbage line without separator\n"
    )
    info = parse_systemctl_show(text)
    assert info.main_pid == 4242 and info.running
    assert info.timeout_start_s is None  # TimeoutSec=0 on older systemd: no timeout
    assert info.timeout_stop_s is None
    assert info.memory_max_bytes == 8 * 2**30  # the cgroup-v1 MemoryLimit= when MemoryMax is open
    assert info.drop_in_paths == ("/etc/systemd/system/mysql.service.d/a.conf", "/run/x.conf")
    assert info.environment == ("MYSQLD_MULTI_INSTANCE=--defaults-file=/etc/my.1.cnf", "X=a b")
    assert info.exec_start == ("/usr/sbin/mysqld", "--x=a b")
    # Older systemd prints an unlimited byte property as 2^64-1.
    assert parse_systemctl_show("Id=u\nMemoryLimit=18446744073709551615\n").memory_max_bytes is None


def test_exec_without_argv_and_show_without_id() -> None:
    assert parse_exec("") == ()
    assert parse_exec("{ path=/bin/x ; ignore_errors=no }") == ()
    with pytest.raises(ValueError, match="Id="):
        parse_systemctl_show("ActiveState=active\n")


def test_argv_asks_for_each_property_and_ends_options() -> None:
    argv = systemd_argv_for("mariadb.service")
    assert argv[:3] == ["systemctl", "show", "--no-pager"]
    assert argv[-2:] == ["--", "mariadb.service"]
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-p"] == list(PROPERTIES)


class OneCommand:
    """A transport that knows the answer to exactly one command (the systemctl show).

    Any other command (the inspection reads the option files too) runs on this computer.
    """

    label = "fake"
    is_root = False

    def __init__(self, argv: list[str], out: str, status: int = 0, err: str = "") -> None:
        self.argv, self.out, self.status, self.err = argv, out, status, err
        self.runs = 0

    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,  # noqa: A002 - the Transport protocol's name
        timeout: float = 60.0,
    ) -> CommandResult:
        if list(argv) != self.argv:
            from app.remote.local import LocalTransport

            return LocalTransport().run(argv, sudo=sudo, input=input, timeout=timeout)
        assert not sudo
        self.runs += 1
        return CommandResult(" ".join(argv), self.status, self.out.encode(), self.err.encode())


def test_read_service_runs_one_command() -> None:
    unit = "mariadb.service"
    transport = OneCommand(systemd_argv_for(unit), el9_show_text())
    info = read_service(transport, unit)  # type: ignore[arg-type]
    assert transport.runs == 1
    assert info == parse_systemctl_show(el9_show_text())


def test_read_service_failure_is_an_error_a_person_can_act_on() -> None:
    unit = "mariadb.service"
    failing = OneCommand(systemd_argv_for(unit), "", 1, "System has not been booted with systemd")
    with pytest.raises(InnoTuneError, match="not been booted with systemd"):
        read_service(failing, unit)  # type: ignore[arg-type]
    with pytest.raises(InnoTuneError, match="printed no unit"):
        read_service(OneCommand(systemd_argv_for(unit), "\n"), unit)  # type: ignore[arg-type]


def _facts_with(service: ServiceInfo | None) -> ServerFacts:
    instance = ServerInstance(
        pid=5797,
        binary="/usr/libexec/mariadbd",
        argv=("/usr/libexec/mariadbd", "--basedir=/usr"),
        started_by="systemd",
        service="mariadb.service",
    )
    return ServerFacts(
        instance=instance,
        version="10.5.22-MariaDB",
        version_comment="MariaDB Server",
        flavour="mariadb",
        variables=(),
        status=(),
        rates=None,
        engines=(),
        binlog_enabled=False,
        replica=False,
        replicas_connected=None,
        uptime_seconds=None,
        datadir="/var/lib/mysql",
        dirty_pages_share=None,
        error_log=error_log_of({"log_error": ""}, instance),
        option_files=(),
        login_via="socket",
        service=service,
    )


def test_service_survives_json_and_shows_in_the_summary() -> None:
    facts = _facts_with(parse_systemctl_show(el9_show_text()))
    assert from_json(ServerFacts, to_json(facts)) == facts
    assert facts.error_log == ErrorLog(
        "journal", None, "sudo journalctl -u mariadb.service -n 50 --no-pager"
    )
    line = server_lines(facts)[-1]
    assert line == (
        "  systemd unit mariadb.service (inactive): start timeout 300 s, stop timeout 300 s, "
        "no memory limit"
    )
    limited = dataclasses.replace(
        parse_systemctl_show(el9_show_text()), timeout_start_s=None, memory_max_bytes=8 * 2**30
    )
    assert server_lines(_facts_with(limited))[-1].endswith(
        "start timeout no limit, stop timeout 300 s, memory limit 8.0 GiB"
    )
    # Without a unit there is no such line, and older JSON without the field still loads.
    assert "systemd unit" not in "\n".join(server_lines(_facts_with(None)))
    old = json.loads(to_json(_facts_with(None)))
    del old["service"]
    assert from_json(ServerFacts, json.dumps(old)) == _facts_with(None)
