"""Servers in containers: the engines' inspect output, the join by cgroup, where files go."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from app.domain.container import Container, Mount
from app.inspect.containers import owner, parse_containers
from app.inspect.instances import choose_instance, parse_instances
from app.mysql.session import ClientBatchSession

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "containers"
DOCKER = (FIXTURES / "docker-20.10-inspect.json").read_text()
PODMAN = (FIXTURES / "podman-4.3-inspect.json").read_text()
DOCKER_ID = json.loads(DOCKER)[0]["Id"]


def _section(engine: str, text: str) -> str:
    return f"@@engine {engine}\n{text}\n@@engine-end\n"


def test_docker_and_podman_inspect_are_read_alike() -> None:
    docker, podman = parse_containers(_section("docker", DOCKER) + _section("podman", PODMAN))
    assert (docker.engine, docker.name, docker.compose_label) == ("docker", "shop-db-1", "shop/db")
    assert docker.image.startswith("localhost/innotune-test-trixie:")
    assert docker.env_names == ("MARIADB_AUTO_UPGRADE",)  # names only, PATH left out
    assert docker.memory_limit_bytes is None and podman.memory_limit_bytes is None
    assert docker.command == ("/usr/local/bin/innotune-entrypoint", "mariadbd", "--user=mysql")
    assert (podman.engine, podman.name, podman.compose_label) == ("podman", "pod-maria", "")
    for c in (docker, podman):
        assert c.host_path("/var/lib/mysql") is not None
        bind = c.bind_for("/etc/mysql/conf.d")
        assert bind is not None and bind.kind == "bind" and bind.read_write
        assert c.host_path("/etc/mysql/conf.d/99-innotune.cnf") == (
            f"{bind.source}/99-innotune.cnf"
        )
        assert c.bind_for("/etc/mysql/mariadb.conf.d") is None  # in the image
        assert c.restart_argv == [c.engine, "restart", c.name]


def test_a_broken_answer_gives_no_container() -> None:
    assert parse_containers(_section("docker", "[{not json")) == []
    assert parse_containers(_section("lxc", DOCKER)) == []


def test_the_longest_mount_wins_and_a_tmpfs_is_no_host_path() -> None:
    c = Container(
        "docker", "a" * 64, "db", "img",
        mounts=(Mount("volume", "/var/lib/docker/volumes/etc/_data", "/etc/mysql", name="etc"),
                Mount("bind", "/srv/conf", "/etc/mysql/conf.d"),
                Mount("tmpfs", "", "/tmp")),
    )  # fmt: skip
    assert c.host_path("/etc/mysql/conf.d/x.cnf") == "/srv/conf/x.cnf"
    assert c.host_path("/etc/mysql/my.cnf") == "/var/lib/docker/volumes/etc/_data/my.cnf"
    volume = c.bind_for("/etc/mysql/my.cnf")  # a named volume outlives the container too
    assert volume is not None and volume.words.startswith("the volume etc (")
    assert c.host_path("/tmp/x") is None
    assert c.host_path("/etc/mysqlx") is None


def test_a_server_in_another_pid_namespace_joins_its_container_by_cgroup() -> None:
    text = "\n".join(
        [
            "@@self pid:[1]",
            "@@pid 4242",
            "@@exe /usr/sbin/mariadbd",
            "@@arg mariadbd",
            "@@arg --user=mysql",
            "@@status PPid: 4200 Uid: 100 ",
            "@@parent innotune-entry",
            "@@pidns pid:[2]",
            f"@@cgroup 4:memory:/docker/{DOCKER_ID}",
            "@@pid 5000",
            "@@exe /usr/sbin/mysqld",
            "@@arg mysqld",
            "@@pidns pid:[3]",
            "@@cgroup 4:memory:/lxc/other",
            "@@unix",
            "@@tcp",
            "@@users",
            "@@initd",
            "@@present",
            "@@containers",
            _section("docker", DOCKER),
            "@@end",
        ]
    )
    found = parse_instances(text)
    assert len(found) == 1  # the LXC one names no container an engine here knows
    inst = found[0]
    assert inst.container is not None and inst.container.server_uid == 100
    assert inst.started_by == "container" and inst.service == "shop-db-1"
    assert inst.restart_argv() == ["docker", "restart", "shop-db-1"]
    assert inst.label.startswith("docker container shop-db-1 (")
    assert choose_instance([inst], "shop-db-1") is inst
    assert choose_instance([inst], DOCKER_ID) is inst
    assert owner([f"0::/system.slice/docker-{DOCKER_ID}.scope"], [inst.container]) is not None


def test_the_batch_client_remembers_use_and_sends_sql_on_stdin() -> None:
    calls: list[tuple[list[str], bytes | None]] = []

    def runner(argv: object, stdin: bytes | None) -> tuple[int, str, str]:
        calls.append((list(argv), stdin))  # type: ignore[call-overload]
        return 0, "1\n", ""

    session = ClientBatchSession(runner, "mariadb", "", via="inside")
    session.query("USE `bench_x`")
    session.query("SELECT 1")
    argv, stdin = calls[-1]
    assert "--database=bench_x" in argv and not any(a.startswith("--socket") for a in argv)
    assert stdin == b"SELECT 1\n" and "-e" not in argv
    with_password = ClientBatchSession(runner, "mysql", "/s.sock", password="pw")  # noqa: S106
    with_password.query("SELECT 2")
    argv, stdin = calls[-1]
    assert argv[1] == "--defaults-extra-file=/dev/stdin" and argv[-2:] == ["-e", "SELECT 2"]
    assert stdin is not None and b"pw" in stdin and "pw" not in " ".join(argv)


def test_the_compose_export_mounts_the_drop_in_for_the_service(tmp_path: Path) -> None:
    import dataclasses

    from app.export.compose import durable_way
    from app.knobs import default_catalogue
    from app.planner import default_positions, make_plan
    from tests.unit.planner_profiles import PROFILES

    facts = PROFILES["mariadb1011-md-raid1-ssd"].facts
    positions = dataclasses.replace(default_positions(facts), crash_loss="os")
    plan = make_plan(facts, positions, default_catalogue())
    (container,) = parse_containers(_section("docker", DOCKER))
    durable = durable_way(plan, container, tmp_path / "out", facts)
    dropin = durable.files["99-innotune.cnf"]
    assert dropin.startswith("[mysqld]\n")
    assert "innodb_flush_log_at_trx_commit = 2" in dropin
    # The planned host's own pool, never a placeholder a server would refuse.
    pool = next(c for c in plan.changes if c.key == "innodb_buffer_pool_size")
    assert "INNOTUNE" not in dropin
    assert f"innodb_buffer_pool_size = {pool.proposed}" in dropin
    override = durable.files["compose.override.yml"]
    assert "services:\n  db:\n    volumes:\n" in override
    # Mounted from where the files were written, whatever folder compose runs in.
    source = tmp_path.resolve() / "out" / "99-innotune.cnf"
    assert f'"{source}:/etc/mysql/conf.d/99-innotune.cnf:ro"' in override
    assert '"mariadbd", "--user=mysql", ' in override  # the image's command, options added
    assert "--innodb-flush-log-at-trx-commit=2" in override
    assert durable.commands[-1].startswith("docker-compose -p shop -f ")


def test_a_container_without_compose_gets_its_docker_run_line(tmp_path: Path) -> None:
    """SYNTHETIC fields on the recorded container: started by docker run with a port, a
    named volume for the data, a restart policy and a shell script as its command."""
    import dataclasses
    import shlex

    from app.domain.errors import InnoTuneError
    from app.export.compose import durable_way
    from app.knobs import default_catalogue
    from app.planner import default_positions, make_plan
    from tests.unit.planner_profiles import PROFILES

    data = json.loads(DOCKER)[0]
    data["Config"]["Labels"] = {}
    data["Config"]["Env"] = ["MARIADB_ROOT_PASSWORD=secret", "PATH=/usr/bin"]
    data["Config"]["Entrypoint"] = ["/usr/local/bin/entry"]
    data["Config"]["Cmd"] = ["sh", "/start.sh"]
    data["HostConfig"]["RestartPolicy"] = {"Name": "unless-stopped"}
    data["NetworkSettings"]["Ports"] = {"3306/tcp": [{"HostIp": "", "HostPort": "13306"}]}
    data["Mounts"] = [
        {"Type": "volume", "Name": "dbdata", "Source": "/var/lib/docker/volumes/dbdata/_data",
         "Destination": "/var/lib/mysql", "RW": True},
    ]  # fmt: skip
    (container,) = parse_containers(_section("docker", json.dumps([data])))
    facts = PROFILES["mariadb1011-md-raid1-ssd"].facts
    plan = make_plan(facts, default_positions(facts), default_catalogue())
    durable = durable_way(plan, container, tmp_path, facts)
    script = durable.files["docker-run.sh"]
    run = next(ln for ln in script.splitlines() if ln.startswith("docker run "))
    argv = shlex.split(run)
    assert argv[:5] == ["docker", "run", "-d", "--name", container.name]
    assert "--restart unless-stopped" in run and "-p 13306:3306/tcp" in run
    assert "-v dbdata:/var/lib/mysql" in run
    assert f"-v {tmp_path.resolve()}/99-innotune.cnf:/etc/mysql/conf.d/99-innotune.cnf:ro" in run
    # Passwords by name only; the image's own entrypoint and command, in that order.
    assert "-e MARIADB_ROOT_PASSWORD" in run and "secret" not in script
    assert argv[argv.index("--entrypoint") + 1] == "/usr/local/bin/entry"
    assert argv[-3:] == [container.image, "sh", "/start.sh"]
    assert "docker rename" in script and "docker stop" in script
    # Its command is a script: options there might never reach the server, so not offered.
    assert not container.server_in_command
    # Data in the container's own layer: recreating it would lose them, so no script.
    layer = dataclasses.replace(container, mounts=())
    with pytest.raises(InnoTuneError, match="recreating it would lose the data"):
        durable_way(plan, layer, tmp_path, facts)


@pytest.mark.parametrize("spec", ["shop-db-1", "4242"])
def test_spec_names_a_container_again(spec: str) -> None:
    (container,) = parse_containers(_section("docker", DOCKER))
    from app.domain.instance import ServerInstance

    inst = ServerInstance(4242, "/usr/sbin/mariadbd", (), container=container)
    assert inst.spec == "shop-db-1"
    assert choose_instance([inst], spec) is inst


def test_published_ports_and_named_volumes_as_docker_words_them() -> None:
    """SYNTHETIC: the recorded containers ran without a network; these fields are shaped as
    docker 20.10 prints them for `-p 13306:3306 -v dbdata:/var/lib/mysql`."""
    data = json.loads(DOCKER)[0]
    data["HostConfig"]["Memory"] = 1073741824
    data["NetworkSettings"]["Ports"] = {
        "3306/tcp": [{"HostIp": "0.0.0.0", "HostPort": "13306"}],  # noqa: S104
        "33060/tcp": None,
    }
    data["Mounts"] = [
        {"Type": "volume", "Name": "dbdata", "Source": "/var/lib/docker/volumes/dbdata/_data",
         "Destination": "/var/lib/mysql", "RW": True},
    ]  # fmt: skip
    (c,) = parse_containers(_section("docker", json.dumps([data])))
    assert c.ports == ("3306/tcp -> 0.0.0.0:13306",)
    assert c.memory_limit_bytes == 1 << 30
    assert c.mounts[0].name == "dbdata"
    assert c.host_path("/var/lib/mysql/ibdata1") == "/var/lib/docker/volumes/dbdata/_data/ibdata1"
    assert c.bind_for("/var/lib/mysql") is not None
    read_only = dataclasses.replace(c.mounts[0], read_write=False)
    assert dataclasses.replace(c, mounts=(read_only,)).bind_for("/var/lib/mysql") is None


def test_root_wanting_a_password_is_named_with_what_to_do() -> None:
    from app.access.database import _wants_password, root_password_needed

    denied = "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)"
    assert _wants_password(denied)
    assert not _wants_password(denied.replace("NO)", "YES)"))  # a wrong password: not this
    exc = root_password_needed(
        Container("podman", "0" * 64, "shop-db", "mysql:9", env_names=("MYSQL_ROOT_PASSWORD",))
    )
    assert "podman container shop-db wants a password for root" in exc.problem
    assert "started with MYSQL_ROOT_PASSWORD" in exc.problem
    assert "--mysql-user root --ask-mysql-password" in exc.fix
    assert "Database password" in exc.window_fix


def test_a_stopped_container_asked_for_is_named_with_how_to_start_it() -> None:
    from app.inspect.containers import parse_stopped
    from app.inspect.instances import InstanceChoiceError

    text = "@@stopped docker shop-db-1 Exited (0) 3 minutes ago\n@@stopped podman x Created\n"
    stopped = parse_stopped(text + "@@stopped lxc y Exited\n")
    assert [(c.engine, c.name) for c in stopped] == [("docker", "shop-db-1"), ("podman", "x")]
    with pytest.raises(InstanceChoiceError) as raised:
        choose_instance([], "shop-db-1", stopped)
    assert raised.value.problem == (
        "The docker container shop-db-1 is stopped (Exited (0) 3 minutes ago)."
    )
    assert raised.value.fix == "Start it with: docker start shop-db-1, then try again."
    # A running container of that name is chosen, whatever else once had the name.
    (container,) = parse_containers(_section("docker", DOCKER))
    from app.domain.instance import ServerInstance

    inst = ServerInstance(4242, "/usr/sbin/mariadbd", (), container=container)
    assert choose_instance([inst], container.name, stopped) is inst


def test_the_plan_says_up_front_when_a_container_cannot_be_changed_in_place() -> None:
    from app.knobs import default_catalogue
    from app.planner import default_positions, make_plan
    from tests.unit.planner_profiles import PROFILES

    facts = PROFILES["mariadb1011-md-raid1-ssd"].facts
    assert facts.server is not None
    (container,) = parse_containers(_section("docker", DOCKER))
    data_only = dataclasses.replace(
        container, mounts=tuple(m for m in container.mounts if "conf" not in m.destination)
    )

    def plan_in(inside: object) -> tuple[str, ...]:
        instance = dataclasses.replace(facts.server.instance, container=inside)  # type: ignore[union-attr]
        server = dataclasses.replace(facts.server, instance=instance)
        contained = dataclasses.replace(facts, server=server)
        return make_plan(contained, default_positions(contained), default_catalogue()).warnings

    said = [w for w in plan_in(data_only) if "cannot change it in place" in w]
    assert said and f"The container {container.name} keeps no configuration" in said[0]
    assert "compose override" in said[0]  # compose started it
    assert not [w for w in plan_in(container) if "in place" in w], "its conf.d is mounted"
    assert not [w for w in plan_in(None) if "in place" in w]
