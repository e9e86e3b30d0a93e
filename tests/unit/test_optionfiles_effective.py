"""Effective values: prefixes, booleans, sizes, repeats, command line and persisted settings."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from app.optionfiles import (
    Arg,
    Node,
    OptionFileError,
    TopFile,
    collect,
    effective,
    local_reader,
    parse_argv,
    parse_persisted,
    parse_size,
    read_config,
    resolve,
    search_order,
    server_groups,
    transport_reader,
)
from app.remote.local import LocalTransport
from tests.hosts.util import need_root


def _args(*texts: str, file: str = "/etc/my.cnf") -> list[Arg]:
    return [Arg(t, file, n, "mysqld") for n, t in enumerate(texts, start=1)]


@pytest.mark.parametrize(
    ("text", "name", "value", "loose", "modifier"),
    [
        ("--innodb-buffer-pool-size=1G", "innodb_buffer_pool_size", "1G", False, ""),
        ("--loose-innodb_io_capacity=200", "innodb_io_capacity", "200", True, ""),
        ("--skip-innodb-doublewrite", "innodb_doublewrite", "0", False, "skip"),
        ("--disable-log-bin", "disable_log_bin", None, False, ""),  # a real option name
        ("--disable-innodb-adaptive-flushing", "innodb_adaptive_flushing", "0", False, "disable"),
        ("--enable-innodb-file-per-table", "innodb_file_per_table", "1", False, "enable"),
        ("--skip-innodb-doublewrite=0", "innodb_doublewrite", "1", False, "skip"),  # double no
        ("--enable-x=0", "x", "0", False, "enable"),
        ("--loose-skip-x", "x", "0", True, "skip"),
        ("--skip-name-resolve", "skip_name_resolve", None, False, ""),
        ("--maximum-sort-buffer-size=4M", "sort_buffer_size", "4M", False, "maximum"),
    ],
)
def test_prefixes(text: str, name: str, value: str | None, loose: bool, modifier: str) -> None:
    """loose-, skip-, disable-, enable-, maximum- as my_getopt reads them."""
    meaning = resolve(text)
    assert (meaning.name, meaning.value, meaning.loose, meaning.modifier) == (
        name,
        value,
        loose,
        modifier,
    )


def test_known_names_decide_what_is_a_prefix() -> None:
    """With the server's option list, unknown names and unique prefixes resolve like mysqld."""
    known = ["skip_name_resolve", "max_connections", "max_connect_errors", "log_bin"]
    assert resolve("--skip-log-bin", known).name == "log_bin"
    assert resolve("--max-connec=5", known).name == "max_connec"  # ambiguous: left alone
    assert resolve("--max-connecti=5", known).name == "max_connections"


def test_sizes() -> None:
    """K/M/G/T/P/E are powers of 1024, either case."""
    assert parse_size("64M") == 64 << 20
    assert parse_size("1g") == 1 << 30
    assert parse_size("2T") == 2 << 40
    assert parse_size("1E") == 1 << 60
    assert parse_size(" 1000 ") == 1000
    for bad in ["1.5G", "", "M", "12X", "0x10"]:
        with pytest.raises(ValueError):
            parse_size(bad)


def test_last_wins_and_sources_are_kept() -> None:
    """A repeated key: the last wins; the earlier places are kept as overridden."""
    args = _args("--max_connections=100", "--max-connections=200") + _args(
        "--max_connections=300", file="/etc/mysql/mariadb.conf.d/99-z.cnf"
    )
    setting = effective(args)["max_connections"]
    assert setting.value == "300"
    assert str(setting.source) == "/etc/mysql/mariadb.conf.d/99-z.cnf:1"
    assert [str(s) for s in setting.overridden] == ["/etc/my.cnf:1", "/etc/my.cnf:2"]


def test_accumulating_options_keep_every_value() -> None:
    """plugin-load-add and replicate-* add up instead of replacing."""
    args = _args(
        "--plugin-load-add=a.so",
        "--replicate-do-db=one",
        "--plugin_load_add=b.so",
        "--replicate-do-db=two",
    )
    result = effective(args)
    assert result["plugin_load_add"].values == ("a.so", "b.so")
    assert result["replicate_do_db"].values == ("one", "two")
    assert [s.line for s in result["replicate_do_db"].sources] == [2, 4]


def test_plugin_load_empties_the_plugin_load_add_list() -> None:
    """As mariadbd does: --plugin-load after --plugin-load-add drops the earlier additions."""
    result = effective(
        _args("--plugin-load-add=ha_archive", "--plugin-load=ha_blackhole", "--plugin-load-add=x")
    )
    assert result["plugin_load"].value == "ha_blackhole"
    assert result["plugin_load_add"].values == ("x",)
    assert [s.line for s in result["plugin_load"].overridden] == [1]


def test_booleans() -> None:
    """Bare, 1/0, ON/OFF, TRUE/FALSE; an unknown word is off, as in the server."""
    result = effective(
        _args("--a", "--b=ON", "--c=off", "--d=TRUE", "--e=0", "--skip-f", "--g=maybe")
    )
    assert [result[k].as_bool() for k in "abcdefg"] == [
        True,
        True,
        False,
        True,
        False,
        False,
        False,
    ]


def test_command_line_beats_files_and_persisted_beats_both() -> None:
    """argv of the running instance wins over files; mysqld-auto.cnf wins over argv."""
    argv = [
        "/usr/sbin/mysqld",
        "--defaults-file=/etc/mysql/my.cnf",
        "--basedir=/usr",
        "--max-connections",
        "500",
        "-u",
        "mysql",
        "--sync_binlog=0",
    ]
    persisted = parse_persisted(
        b'{"Version": 1, "mysql_server": {"sync_binlog": {"Value": "1", "Metadata": {}},'
        b' "mysql_server_static_options": {"innodb_log_file_size": {"Value": "100663296"}}}}',
        "/var/lib/mysql/mysqld-auto.cnf",
    )
    result = effective(
        _args("--max_connections=100", "--sync_binlog=1", "--innodb_log_file_size=48M"),
        argv=argv,
        persisted=persisted,
    )
    assert result["max_connections"].value == "500"
    assert str(result["max_connections"].source) == "command line"
    assert result["user"].value == "mysql"
    assert result["sync_binlog"].value == "1"
    assert str(result["sync_binlog"].source) == "persisted (/var/lib/mysql/mysqld-auto.cnf)"
    assert result["innodb_log_file_size"].as_int() == 100663296
    off = effective(_args("--persisted_globals_load=OFF", "--sync_binlog=0"), persisted=persisted)
    assert off["sync_binlog"].value == "0"


def test_argv_option_file_switches() -> None:
    """--no-defaults / --defaults-file / --defaults-extra-file / --defaults-group-suffix."""
    line = parse_argv(
        [
            "mariadbd",
            "--defaults-file=/srv/my.cnf",
            "--defaults-group-suffix=.2",
            "--port=3307",
            "--print-defaults",
        ]
    )
    assert (line.defaults_file, line.group_suffix, line.args) == (
        "/srv/my.cnf",
        ".2",
        ("--port=3307",),
    )
    assert parse_argv(["mysqld", "--no-defaults", "--skip-grant-tables"]).no_defaults
    # A switch after an ordinary option is an ordinary (unknown) option, as for the server.
    late = parse_argv(["mysqld", "--port=1", "--defaults-file=/x"])
    assert late.defaults_file is None and late.args == ("--port=1", "--defaults-file=/x")


def test_persisted_version_2_and_bad_json() -> None:
    """Version 2 categories are read; sensitive values are not shown; bad JSON is an error."""
    data = (
        b'{"Version": 2, "mysql_dynamic_variables": {"max_connections": {"Value": "321"}},'
        b' "mysql_static_parse_early_variables": {"innodb_redo_log_capacity": {"Value": "1G"}},'
        b' "mysql_sensitive_variables": {"mysql_sensitive_dynamic_variables":'
        b' {"some_secret": {"Value": "ENCRYPTED"}}}}'
    )
    texts = [a.text for a in parse_persisted(data)]
    assert texts == [
        "--max_connections=321",
        "--innodb_redo_log_capacity=1G",
        "--some_secret=<encrypted>",
    ]
    with pytest.raises(OptionFileError, match="not valid JSON"):
        parse_persisted(b"{oops", "/var/lib/mysql/mysqld-auto.cnf")


def test_search_order() -> None:
    """Default file order per flavour, with --defaults-file / --defaults-extra-file."""
    maria = [t.path for t in search_order("mariadb", home="/var/lib/mysql")]
    assert maria == ["/etc/my.cnf", "/etc/mysql/my.cnf", "/var/lib/mysql/.my.cnf"]
    rpm = search_order(
        "mariadb", sysconfdir="/etc", mysql_home="/usr", extra_file="/x.cnf", home="/h"
    )
    assert [(t.path, t.required) for t in rpm] == [
        ("/etc/my.cnf", False),
        ("/usr/my.cnf", False),
        ("/x.cnf", True),
        ("/h/.my.cnf", False),
    ]
    mysql = [t.path for t in search_order("mysql", sysconfdir="/usr/local/etc", home="/h")]
    assert mysql == ["/etc/my.cnf", "/etc/mysql/my.cnf", "/usr/local/etc/my.cnf", "/h/.my.cnf"]
    assert search_order("mysql", defaults_file="/srv/my.cnf") == [TopFile("/srv/my.cnf", True)]
    assert search_order("mariadb", no_defaults=True) == []
    assert server_groups("mysql", "8.0.36") == ["mysqld", "server", "mysqld-8.0"]
    assert server_groups("mariadb", "10.11.6-MariaDB", ".2")[-1] == "galera.2"


def test_unreadable_file_is_an_error_naming_it(tmp_path: Path) -> None:
    """A file we may not read stops everything, with its name (never a silent skip)."""

    def reader(path: str) -> Node:
        if path == "/etc/mysql/conf.d/secret.cnf":
            raise PermissionError(13, "Permission denied")
        if path == "/etc/mysql/conf.d":
            return Node("dir", names=("secret.cnf",))
        if path == "/etc/my.cnf":
            return Node("file", data=b"[mysqld]\n!includedir /etc/mysql/conf.d\n")
        return Node("missing")

    with pytest.raises(OptionFileError, match="secret.cnf: Permission denied"):
        collect(reader, ["/etc/my.cnf"], ["mysqld"])


def test_missing_required_file_and_fatal_lines() -> None:
    """A missing --defaults-file and a bad top-level line stop the server: we say where."""

    def reader(path: str) -> Node:
        if path == "/etc/my.cnf":
            return Node("file", data=b"[mysqld]\na=1\n[broken\n")
        return Node("missing")

    with pytest.raises(OptionFileError, match="required option file /nope.cnf"):
        collect(reader, [TopFile("/nope.cnf", required=True)], ["mysqld"])
    with pytest.raises(OptionFileError, match="/etc/my.cnf:3: Wrong group definition") as err:
        collect(reader, ["/etc/my.cnf"], ["mysqld"])
    assert (err.value.path, err.value.line) == ("/etc/my.cnf", 3)


def test_include_loop_is_followed_like_the_server_and_reported(tmp_path: Path) -> None:
    """A self-include is read 11 times (the server's depth limit) and reported as a loop."""
    cnf = tmp_path / "loop.cnf"
    cnf.write_text(f"[mysqld]\na=1\n!include {cnf}\n")
    reading = read_config(local_reader, [str(cnf)], ["mysqld"])
    assert [a.text for a in reading.args] == ["--a=1"] * 11
    assert any("include loop" in p.message for p in reading.problems)
    assert any("more than 10 deep" in p.message for p in reading.problems)


def test_world_writable_file_is_ignored_like_the_server(tmp_path: Path) -> None:
    """mysqld ignores world-writable option files; so do we, and we say so."""
    cnf = tmp_path / "ww.cnf"
    cnf.write_text("[mysqld]\na=1\n")
    cnf.chmod(0o666)
    reading = read_config(local_reader, [str(cnf)], ["mysqld"])
    assert reading.args == []
    assert "world-writable" in reading.problems[0].message


def test_transport_reader_reads_like_the_local_reader(tmp_path: Path) -> None:
    """The Transport-based reader gives the same nodes as the local one."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.cnf").write_bytes(b"[mysqld]\nb=\xe9\n")
    (tmp_path / "d" / "a.cnf").write_bytes(b"[mysqld]\na=1\n")
    (tmp_path / "ww.cnf").write_text("[mysqld]\n")
    # world-writable on purpose: the server (and we) must ignore such a file
    os.chmod(tmp_path / "ww.cnf", stat.S_IRUSR | stat.S_IWUSR | stat.S_IROTH | stat.S_IWOTH)  # noqa: S103
    main = tmp_path / "my.cnf"
    main.write_text(f"[mysqld]\n!includedir {tmp_path / 'd'}\n!include {tmp_path / 'ww.cnf'}\n")
    remote = transport_reader(LocalTransport())
    for path in [str(main), str(tmp_path / "d"), str(tmp_path / "nope"), str(tmp_path / "ww.cnf")]:
        mine, local = remote(path), local_reader(path)
        assert (mine.kind, mine.data, sorted(mine.names), mine.world_writable) == (
            local.kind,
            local.data,
            sorted(local.names),
            local.world_writable,
        )
    assert [a.text for a in collect(remote, [str(main)], ["mysqld"])] == [
        "--a=1",
        "--b=\udce9",
    ]


class _AsNobody:
    """A Transport that runs every command as the unprivileged user nobody."""

    def __init__(self) -> None:
        self.inner = LocalTransport()

    def run(self, argv, *, sudo=False, input=None, timeout=60.0):  # type: ignore[no-untyped-def]
        return self.inner.run(["runuser", "-u", "nobody", "--", *argv], input=input)


def test_transport_reader_never_calls_an_unreadable_file_missing() -> None:
    """Without the rights, a hidden file is an error naming it, not a silent skip."""
    need_root()
    with tempfile.TemporaryDirectory(dir="/tmp") as name:
        tmp_path = Path(name)
        tmp_path.chmod(0o755)
        _unreadable_cases(tmp_path)


def _unreadable_cases(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o700)
    (locked / "x.cnf").write_text("[mysqld]\nmax_connections=5\n")
    secret = tmp_path / "secret.cnf"
    secret.write_text("[mysqld]\nsync_binlog=0\n")
    secret.chmod(0o600)
    main = tmp_path / "my.cnf"
    main.write_text(f"[mysqld]\n!include {locked / 'x.cnf'}\n")
    main.chmod(0o644)
    reader = transport_reader(_AsNobody())
    with pytest.raises(OptionFileError, match="x.cnf"):
        collect(reader, [str(main)], ["mysqld"])
    main.write_text(f"[mysqld]\n!include {secret}\n")
    with pytest.raises(OptionFileError, match="secret.cnf"):
        collect(reader, [str(main)], ["mysqld"])
    main.write_text(f"[mysqld]\n!includedir {locked}\n")
    with pytest.raises(OptionFileError, match="locked"):
        collect(reader, [str(main)], ["mysqld"])


def test_checking_args_leave_out_what_acts_on_the_running_process() -> None:
    # Oracle's EL units started mysqld this way; asking the binary with --daemonize forks.
    cmdline = parse_argv(
        [
            "/usr/sbin/mysqld",
            "--defaults-file=/etc/my.cnf",
            "--daemonize",
            "--pid-file=/var/run/mysqld/mysqld.pid",
            "--loose-pid_file",
            "/run/x.pid",
            "--datadir=/var/lib/mysql",
            "--user=mysql",
        ]
    )
    assert cmdline.checking_args() == ("--datadir=/var/lib/mysql", "--user=mysql")
    assert "--daemonize" in cmdline.args
