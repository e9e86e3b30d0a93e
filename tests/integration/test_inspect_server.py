"""Inspecting real servers; every figure checked against the server or an independent tool."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pymysql
import pytest

from app.access.database import open_session
from app.domain.hostfacts import HostFacts
from app.inspect.inspection import inspect
from app.inspect.instances import choose_instance, find_instances
from app.knobs.catalogue import default_catalogue
from app.planner import default_positions, make_plan
from app.planner.budget import memory_budget, pool_of
from app.planner.memorysum import POOL_OVERHEAD
from app.planner.values import size_text
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.loopdev import LoopFs
from tests.hosts.sshd import SshServer

ROOT = Path(__file__).parents[2]
GIB = 1024**3

UNUSUAL = """[mysqld]
bind-address = 127.0.0.1
innodb_buffer_pool_size = 72M
innodb_flush_log_at_trx_commit = 2
log-bin = binlog
performance_schema = OFF
"""


def _write_load(server: PrivateServer, stop: threading.Event) -> None:
    conn = pymysql.connect(unix_socket=str(server.socket_path), user="root", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS load_t")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS load_t.t (id INT AUTO_INCREMENT PRIMARY KEY, "
            "v VARCHAR(100)) ENGINE=InnoDB"
        )
        cur.execute("CREATE TABLE IF NOT EXISTS load_t.m (id INT) ENGINE=MyISAM")
        while not stop.is_set():
            cur.execute("INSERT INTO load_t.t (v) VALUES (REPEAT('x', 90))")
    conn.close()


def test_inspect_private_server_on_the_loop_device(
    loopfs: LoopFs, private_servers: list[PrivateServer]
) -> None:
    server = PrivateServer(loopfs.mountpoint / "inspect-me", server_cnf=UNUSUAL)
    private_servers.append(server)
    server.start()
    stop = threading.Event()
    load = threading.Thread(target=_write_load, args=(server, stop))
    load.start()
    transport = LocalTransport()
    try:
        instances = find_instances(transport)
        instance = choose_instance(instances, str(server.socket_path))
        session = open_session(transport, instance)
        facts = inspect(transport, instances, instance, session, sample_seconds=2.0)
        session.close()
    finally:
        stop.set()
        load.join()
    s = facts.server
    assert s is not None
    # Against the server itself, over a separate connection
    conn = pymysql.connect(unix_socket=str(server.socket_path), user="root")
    with conn.cursor() as cur:
        cur.execute("SELECT @@version, @@innodb_buffer_pool_size, @@datadir")
        version, pool, datadir = cur.fetchone()
        cur.execute(
            "SELECT ENGINE, COUNT(*) FROM information_schema.TABLES WHERE "
            "TABLE_SCHEMA='load_t' GROUP BY ENGINE"
        )
        engines = dict(cur.fetchall())
    conn.close()
    assert s.version == version
    assert s.variable("innodb_buffer_pool_size") == str(pool) == str(72 * 1024 * 1024)
    assert s.variable("innodb_flush_log_at_trx_commit") == "2"
    pool_var = next(v for v in s.variables if v.name == "innodb_buffer_pool_size")
    assert pool_var.origin == "CONFIG" and pool_var.path == str(
        server.include_dir / "50-server.cnf"
    )
    assert s.binlog_enabled
    assert {e.engine: e.tables for e in s.engines} == engines
    assert s.datadir == datadir
    assert s.option_files == (str(server.main_cnf),)
    assert s.error_log.destination == "file" and s.error_log.path == str(server.error_log)
    assert s.rates is not None and s.rates.transactions_per_s > 5
    assert s.rates.redo_bytes_per_s and s.rates.redo_bytes_per_s > 1000
    # The datadir's write path is the loop device, whatever its /sys values are.
    path = facts.os.path(str(server.datadir))
    assert path is not None and path.device == loopfs.name and path.fs_type == "ext4"
    # JSON round trip gives the same value
    assert HostFacts.from_json(facts.to_json()) == facts


def test_two_instances_choose_by_instance(
    private_servers: list[PrivateServer], tmp_path: Path
) -> None:
    # The other server's pool is set in its option files only (its --defaults-file includes
    # it), not on its command line: read without logging in to it (issue 36).
    a = PrivateServer(
        tmp_path / "a",
        server_cnf="[mysqld]\ninnodb_buffer_pool_size = 1G\nmax_connections = 40\n",
    )
    b = PrivateServer(tmp_path / "b", server_cnf=UNUSUAL)
    private_servers += [a, b]
    a.start()
    b.start()
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "inspect",
            "local",
            "--instance",
            str(b.port),
            "--sample",
            "0",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    facts = json.loads(out.stdout)
    assert facts["server"]["instance"]["ports"] == [b.port]
    pool = [v for v in facts["server"]["variables"] if v["name"] == "innodb_buffer_pool_size"]
    assert pool[0]["value"] == str(72 * 1024 * 1024)
    assert facts["server"]["rates"] is None  # --sample 0
    # The other server is counted at its configured pool (its option files, read without
    # logging in) with its bookkeeping, not at its idle resident memory (issue 36).
    other = a.running_pid()
    assert a.query("SELECT @@innodb_buffer_pool_size").split()[-1] == str(GIB)  # as set
    seen = HostFacts.from_json(out.stdout)
    rss = {p.pid: p.rss_bytes for p in seen.os.machine.database_processes}
    assert other in rss and 0 < rss[other] < GIB
    [inst] = [i for i in seen.instances if i.pid == other]
    assert "--innodb" not in " ".join(inst.argv)  # not on its command line
    assert (inst.files_read, inst.files_pool, inst.files_connections) == (True, "1G", "40")
    budget = memory_budget(seen)
    assert budget is not None
    may_take = int(GIB * POOL_OVERHEAD) + 40 * budget.per_connection
    assert budget.other_servers >= may_take
    assert (
        f"mariadbd pid {other}, its 1 GiB buffer pool from its option files, "
        f"{size_text(int(GIB * POOL_OVERHEAD) - GIB)} of bookkeeping and "
        f"{size_text(40 * budget.per_connection)} of buffers for its 40 connections (its option "
        "files), at this server's buffers per connection" in budget.words()
    ), budget.words()
    # Had its files not been read it would count at its resident memory: the pool that fits,
    # and the plan's, shrink by the difference.
    unread = [dataclasses.replace(i, files_read=False) if i is inst else i for i in seen.instances]
    before = dataclasses.replace(seen, instances=tuple(unread))
    idle = memory_budget(before)
    assert idle is not None
    assert idle.other_servers - budget.other_servers == rss[other] - may_take
    assert idle.fits - budget.fits == pytest.approx((may_take - rss[other]) / POOL_OVERHEAD, abs=2)
    catalogue = default_catalogue()
    at = dataclasses.replace(default_positions(seen), memory_share=90)  # the most that fits
    crowded = pool_of(make_plan(seen, at, catalogue), seen)
    roomy = pool_of(make_plan(before, at, catalogue), before)
    assert crowded is not None and roomy is not None
    assert crowded <= budget.fits < roomy, (crowded, budget.fits, roomy)
    both = subprocess.run(
        [sys.executable, "-m", "app", "inspect", "local", "--sample", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert both.returncode == 1
    assert "--instance" in both.stderr


def test_inspect_debian_mariadb_over_ssh(
    sshd: SshServer, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    kh = tmp_path / "kh"
    kh.write_text(sshd.known_hosts_line())
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "inspect",
            f"root@{sshd.host}:{sshd.port}",
            "--identity",
            str(sshd.client_key),
            "--known-hosts",
            str(kh),
            "--instance",
            debian_mariadb.socket,
            "--sample",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    version = debian_mariadb.query("SELECT @@version").strip()
    assert f"Server: {version} (mariadb)" in out.stdout
    assert "started by a SysV init script (mariadb)" in out.stdout
    assert "error log: syslog" in out.stdout
    # The files that set its options (Debian's 50-server.cnf among them), not the search list.
    assert "option files that set its options: " in out.stdout
    assert "/etc/mysql/mariadb.conf.d/50-server.cnf (" in out.stdout
    assert "/etc/my.cnf " not in out.stdout
    assert "Write path of /var/lib/mysql:" in out.stdout


def test_engine_counts_agree_with_the_slow_query(private_server: PrivateServer) -> None:
    from app.inspect.engines import engine_use

    private_server.query(
        "CREATE DATABASE `odd db-1`; USE `odd db-1`;"
        "CREATE TABLE `t one` (id INT PRIMARY KEY, body TEXT, FULLTEXT (body)) ENGINE=InnoDB;"
        "CREATE TABLE parts (id INT) ENGINE=InnoDB PARTITION BY HASH(id) PARTITIONS 3;"
        "CREATE TABLE m (id INT) ENGINE=MyISAM; INSERT INTO m VALUES (1), (2);"
        "CREATE TABLE a (id INT) ENGINE=Aria;"
        "CREATE VIEW v AS SELECT id FROM m;"
    )
    transport = LocalTransport()
    inst = choose_instance(find_instances(transport), str(private_server.socket_path))
    session = open_session(transport, inst)
    try:
        version = session.query("SELECT VERSION()")[0][0] or ""
        fast = {e.engine: e.tables for e in engine_use(session, "mariadb", version)}
        slow = dict(
            session.query(
                "SELECT ENGINE, COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN "
                "('mysql', 'information_schema', 'performance_schema', 'sys') "
                "AND ENGINE IS NOT NULL GROUP BY ENGINE"
            )
        )
    finally:
        session.close()
    assert fast == {k: int(v or 0) for k, v in slow.items() if k}
    assert fast["MyISAM"] >= 1 and fast["Aria"] == 1
