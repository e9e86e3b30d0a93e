"""The inspection's systemd step on a real server; only `systemctl show` comes from a capture.

systemd does not run here; the private server is real, and so is everything the inspection reads
from it. The one command systemd would answer comes from tests/fixtures/hosts/systemd-el9-mariadb/.
"""

from __future__ import annotations

import dataclasses

from app.access.database import open_session
from app.domain.instance import ServerInstance
from app.inspect.instances import choose_instance, find_instances
from app.inspect.server import gather_server_facts
from app.inspect.systemd import parse_systemctl_show, systemd_argv_for
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.unit.test_systemd import OneCommand, el9_show_text


def _as_if_systemd(server: PrivateServer) -> tuple[LocalTransport, ServerInstance]:
    transport = LocalTransport()
    found = choose_instance(find_instances(transport), str(server.socket_path))
    # It has its own --defaults-file, so the inspection runs no `--verbose --help` either.
    assert found.defaults_file
    return transport, dataclasses.replace(found, started_by="systemd", service="mariadb.service")


def test_systemd_started_server_gets_its_unit(private_server: PrivateServer) -> None:
    local, instance = _as_if_systemd(private_server)
    systemd = OneCommand(systemd_argv_for("mariadb.service"), el9_show_text())
    session = open_session(local, instance)
    try:
        facts = gather_server_facts(session, instance, systemd, sample_seconds=0)  # type: ignore[arg-type]
    finally:
        session.close()
    assert systemd.runs == 1
    assert facts.service == parse_systemctl_show(el9_show_text())
    assert facts.error_log.destination in ("journal", "file")
    assert not [u for u in facts.unknown if "systemd" in u.what]


def test_systemctl_failing_is_an_unknown_not_a_crash(private_server: PrivateServer) -> None:
    local, instance = _as_if_systemd(private_server)
    no_systemd = OneCommand(
        systemd_argv_for("mariadb.service"), "", 1, "System has not been booted with systemd"
    )
    session = open_session(local, instance)
    try:
        facts = gather_server_facts(session, instance, no_systemd, sample_seconds=0)  # type: ignore[arg-type]
    finally:
        session.close()
    assert facts.service is None
    assert any(
        u.what == "the systemd unit mariadb.service" and "booted with systemd" in u.why
        for u in facts.unknown
    )
