"""Other servers' buffer pools, read from their option files without logging in (issue 36)."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.domain.instance import ServerInstance
from app.inspect.otherpools import finish_reading, parse_pool, pool_argv, start_reading
from app.planner.budget import DEFAULT_POOL, configured_pool
from app.practice.binaries import find_binaries
from app.remote.local import LocalTransport

GIB = 1024**3
MIB = 1024**2


def test_the_last_pool_argument_wins_whatever_its_spelling() -> None:
    out = (
        "--innodb_buffer_pool_size=2G\n"
        "--loose-innodb-buffer-pool-size=3g\n"
        "--innodb_buffer_pool_size_max=8G\n"  # another option (MariaDB 11.x)
        "@@read\n"
    )
    assert parse_pool(out) == (True, "3g")
    assert parse_pool("@@read\n") == (True, None)
    assert parse_pool("--innodb_buffer_pool_size=2G\n") == (False, "2G")  # cut short: not read


def test_the_binary_is_asked_with_the_switches_its_process_was_started_with() -> None:
    inst = ServerInstance(
        812,
        "/usr/sbin/mariadbd",
        (
            "/usr/sbin/mariadbd",
            "--defaults-file=/srv/b/my.cnf",
            "--defaults-group-suffix=.b",
            "--port=3307",
        ),
    )
    argv = pool_argv(inst)
    assert argv is not None and argv[:2] == ["sh", "-c"]
    assert argv[3:] == [
        "sh",
        "/usr/sbin/mariadbd",
        "--defaults-file=/srv/b/my.cnf",
        "--defaults-group-suffix=.b",
    ]
    assert pool_argv(ServerInstance(9, "/usr/sbin/mysqld", ("mysqld", "--no-defaults"))) is None
    assert pool_argv(ServerInstance(9, "", ())) is None


def test_where_the_pool_comes_from() -> None:
    line = ServerInstance(1, "/b", ("b", "--innodb_buffer_pool_size=1G"), files_pool="2G")
    assert configured_pool(line) == (GIB, "from its command line")  # beats the files
    files = ServerInstance(1, "/b", ("b",), files_pool="512M", files_read=True)
    assert configured_pool(files) == (512 * MIB, "from its option files")
    unset = ServerInstance(1, "/b", ("b",), files_read=True)
    assert configured_pool(unset) == (
        DEFAULT_POOL,
        "at the default size (its option files set none)",
    )
    assert configured_pool(ServerInstance(1, "/b", ("b",))) is None  # not read


def test_a_real_server_binary_prints_its_files_pool(tmp_path: Path) -> None:
    """The script on this machine's own mariadbd/mysqld: includes, groups, the last wins."""
    binaries = find_binaries()
    assert binaries is not None, "the suite needs a MariaDB or MySQL server installed"
    (tmp_path / "conf.d").mkdir()
    main = tmp_path / "my.cnf"
    main.write_text(
        "[mysqld]\ninnodb_buffer_pool_size = 2G\n"
        "[client]\npassword = not-for-us\n"
        f"!includedir {tmp_path / 'conf.d'}\n"
    )
    (tmp_path / "conf.d" / "z.cnf").write_text("[server]\nloose-innodb-buffer-pool-size=3G\n")
    inst = ServerInstance(1, binaries.server, (binaries.server, f"--defaults-file={main}"))
    me = ServerInstance(2, binaries.server, (binaries.server,))
    transport = LocalTransport()
    [read, mine] = finish_reading(start_reading(transport, [inst, me], me, sudo=False))
    assert (read.files_read, read.files_pool) == (True, "3G")
    assert mine == me  # the chosen server is read by logging in, not here
    assert configured_pool(read) == (3 * GIB, "from its option files")
    # A defaults file that sets no pool: read, none set.
    (tmp_path / "conf.d" / "z.cnf").unlink()
    main.write_text("[mysqld]\nport = 3399\n")
    [none, _] = finish_reading(start_reading(transport, [inst, me], me, sudo=False))
    assert (none.files_read, none.files_pool) == (True, None)


def test_a_binary_others_may_write_is_not_run(tmp_path: Path) -> None:
    """Inspection runs as root: a server binary anyone may replace is not run, and said so."""
    binaries = find_binaries()
    assert binaries is not None
    copy = tmp_path / "mariadbd"
    shutil.copy(binaries.server, copy)
    copy.chmod(0o777)
    inst = ServerInstance(1, str(copy), (str(copy),))
    me = ServerInstance(2, "/usr/sbin/mariadbd", ())
    [refused, _] = finish_reading(start_reading(LocalTransport(), [inst, me], me, sudo=False))
    assert not refused.files_read and refused.files_pool is None
    # As root: "may be written by others"; as anyone else: "is not root's".
    assert refused.notes and refused.notes[-1].endswith(": not run"), refused.notes
    assert configured_pool(refused) is None
