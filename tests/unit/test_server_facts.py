"""The pure parts of server inspection: rates, option-file list, error log, flavour."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.instance import ServerInstance
from app.inspect.engines import decode_filename
from app.inspect.rates import compute_rates, dirty_share
from app.inspect.server import error_log_of, flavour_of
from app.optionfiles import parse_help_default_files

FIXTURES = Path(__file__).parents[1] / "fixtures/hosts"


def test_rates_from_two_samples() -> None:
    before = {
        "Handler_commit": "100",
        "Com_insert": "10",
        "Com_update": "5",
        "Innodb_lsn_current": "1000",
        "Innodb_os_log_written": "7",
        "Innodb_pages_written": "50",
        "Innodb_data_fsyncs": "3",
        "Innodb_buffer_pool_reads": "10",
        "Innodb_buffer_pool_read_requests": "1000",
    }
    after = {
        "Handler_commit": "300",
        "Com_insert": "110",
        "Com_update": "25",
        "Innodb_lsn_current": "21000",
        "Innodb_os_log_written": "9",
        "Innodb_pages_written": "90",
        "Innodb_data_fsyncs": "13",
        "Innodb_buffer_pool_reads": "20",
        "Innodb_buffer_pool_read_requests": "2000",
    }
    r = compute_rates(before, after, 10.0)
    assert r.transactions_per_s == pytest.approx(20.0)
    assert r.writes_per_s == pytest.approx(12.0)
    assert r.redo_bytes_per_s == pytest.approx(2000.0)  # the LSN, not the write counter
    assert r.pages_written_per_s == pytest.approx(4.0)
    assert r.data_fsyncs_per_s == pytest.approx(1.0)
    assert r.log_fsyncs_per_s is None  # MariaDB 10.11 has no Innodb_os_log_fsyncs
    assert r.buffer_pool_hit_rate == pytest.approx(0.99)


def test_counters_reset_by_a_restart_count_as_zero() -> None:
    r = compute_rates({"Handler_commit": "5000"}, {"Handler_commit": "12"}, 5.0)
    assert r.transactions_per_s == 0.0


def test_mysql_redo_rate_uses_the_log_written_counter() -> None:
    r = compute_rates({"Innodb_os_log_written": "0"}, {"Innodb_os_log_written": "5120"}, 5.0)
    assert r.redo_bytes_per_s == pytest.approx(1024.0)


def test_dirty_share() -> None:
    assert (
        dirty_share(
            {"Innodb_buffer_pool_pages_dirty": "25", "Innodb_buffer_pool_pages_total": "100"}
        )
        == 0.25
    )
    assert dirty_share({}) is None


def test_default_files_from_real_help_output() -> None:
    text = (FIXTURES / "debian12-mariadb-10.11/mariadbd--verbose--help.txt").read_text()
    assert parse_help_default_files(text) == ["/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"]


def _inst(**kw: object) -> ServerInstance:
    base: dict[str, object] = {"pid": 1, "binary": "/usr/sbin/mariadbd", "argv": ()}
    base.update(kw)
    return ServerInstance(**base)  # type: ignore[arg-type]


def test_error_log_destinations() -> None:
    file_log = error_log_of({"log_error": "err.log", "datadir": "/var/lib/mysql/"}, _inst())
    assert (file_log.destination, file_log.path) == ("file", "/var/lib/mysql/err.log")
    journal = error_log_of(
        {"log_error": ""}, _inst(started_by="systemd", service="mariadb.service")
    )
    assert (
        journal.destination == "journal" and "journalctl -u mariadb.service" in journal.how_to_read
    )
    syslog = error_log_of(
        {"log_error": ""}, _inst(argv=("x", "--skip-log-error"), started_by="sysv")
    )
    assert syslog.destination == "syslog"


def test_flavour() -> None:
    assert flavour_of("10.11.19-MariaDB-0+deb12u1", "Debian 12") == "mariadb"
    assert flavour_of("8.0.36-28", "Percona Server (GPL), Release 28") == "percona"
    assert flavour_of("8.4.3", "MySQL Community Server - GPL") == "mysql"
    assert flavour_of("9.7.4-2", "(Debian)") == "mysql"  # Debian sid's MySQL, not Percona


def test_file_name_decoding() -> None:
    assert decode_filename("odd@0020db@002d1") == "odd db-1"
    assert decode_filename("plain") == "plain"
    assert decode_filename("a@zzzz") == "a@zzzz"
