"""The lifecycle on servers in containers: Debian's docker.io and podman, real images.

MariaDB 11.8 (trixie) and Oracle MySQL 9.7 (sid), each in Docker and in Podman; see
tests/containers/lifecycle.py for the steps. Then what `docker compose up --force-recreate`
does to a change: kept in a mounted directory, lost inside the container, kept again with
the exported override.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.domain.hostfacts import HostFacts
from app.planner.budget import memory_budget
from app.planner.memorysum import POOL_OVERHEAD
from app.planner.values import size_text
from app.practice.server import PrivateServer
from tests.containers.engines import IMAGES, Docker, Engine
from tests.containers.lifecycle import JOB_ID, SAMPLE, SLIDERS, innotune, run_lifecycle, table
from tests.hosts.util import need


@pytest.fixture
def own_jobs() -> Iterator[list[str]]:
    """The job and snapshot ids a lifecycle printed; removed afterwards (only those)."""
    from app.jobs import runner
    from app.jobs import snapshot as snap

    made: list[str] = []
    yield made
    for found in made:
        for path in (runner.job_dir(found), snap.target_dir(found)):
            shutil.rmtree(path, ignore_errors=True)


# Each engine and each server line once (2 min each); the whole matrix, with its table, is
# `python -m tests.benchmarks.bench_containers`.
@pytest.mark.parametrize(("engine_name", "host"), [("docker", "sid"), ("podman", "trixie")])
def test_lifecycle(
    request: pytest.FixtureRequest,
    engine_name: str,
    host: str,
    tmp_path: Path,
    own_jobs: list[str],
) -> None:
    engine: Engine = request.getfixturevalue(engine_name)
    spec = IMAGES[host]
    engine.load(spec)
    # The benchmark step proves the route and the engine inside the container (a rate above
    # zero): one client for 2 s is enough for that; the figures are bench_containers.py's
    # (15 s, 1 and 2 clients). The load generator's second client count, with the agent kept
    # between runs, is test_bench_loadgen.py's (over SSH, 1 and 2 clients).
    run = run_lifecycle(engine, spec, tmp_path, bench_seconds=2, bench_threads=1)
    own_jobs.extend(run.job_ids)
    print("\n" + table([run]))
    failed = [f"{s.name}: {s.detail}" for s in run.steps if not s.ok]
    assert not failed, "\n\n".join(failed)


def _compose(docker: Docker, project: Path, *args: str) -> str:
    done = subprocess.run(
        ["docker-compose", "-p", project.name, *args],
        cwd=project,
        env=docker.environ(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_compose_force_recreate(docker: Docker, tmp_path: Path, own_jobs: list[str]) -> None:
    """Mounted directory: kept; inside the container: lost; the exported override: kept."""
    need(shutil.which("docker-compose") is not None, "docker-compose is not installed")
    spec = IMAGES["trixie"]
    docker.load(spec)
    project = tmp_path / "shop"
    (project / "conf").mkdir(parents=True)
    (project / "compose.yml").write_text(
        "services:\n"
        "  db:\n"
        f"    image: {spec.tag}\n"
        "    network_mode: none\n"
        "    volumes:\n"
        "      - ./data:/var/lib/mysql\n"
        "      - ./conf:/etc/mysql/conf.d\n"
        "  plain:\n"
        f"    image: {spec.tag}\n"
        "    network_mode: none\n"
        "    volumes:\n"
        "      - ./data-plain:/var/lib/mysql\n"
    )
    data = tmp_path / "innotune-data"
    try:
        _compose(docker, project, "up", "-d")
        db, plain = f"{project.name}_db_1", f"{project.name}_plain_1"
        docker.wait_ready(db, spec)
        docker.wait_ready(plain, spec)

        def trx(name: str) -> str:
            return docker.sql(name, spec, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")

        # 1. InnoTune's apply into the mounted directory survives the recreation.
        done = innotune(docker, data, "apply", "local", "--instance", db, *SAMPLE,
                        *SLIDERS, "--yes", "--watch", "1")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        own_jobs.extend(JOB_ID.findall(done.stdout + done.stderr))
        assert trx(db) == "2"
        # 2. The same change written inside the container by hand (what InnoTune refuses).
        docker.cli("exec", plain, "sh", "-c",
                   "printf '[mysqld]\\ninnodb_flush_log_at_trx_commit = 2\\n' "
                   "> /etc/mysql/mariadb.conf.d/99-by-hand.cnf")  # fmt: skip
        docker.cli("restart", plain)
        docker.wait_ready(plain, spec)
        assert trx(plain) == "2"
        old_ids = docker.cli("ps", "-q", "--no-trunc").split()
        _compose(docker, project, "up", "-d", "--force-recreate")
        assert not set(old_ids) & set(docker.cli("ps", "-q", "--no-trunc").split())
        docker.wait_ready(db, spec)
        docker.wait_ready(plain, spec)
        assert trx(db) == "2", "the mounted directory's drop-in was kept"
        assert trx(plain) == "1", "the change inside the container was lost"
        # 3. The exported override makes the second one last. Written into a folder of its
        #    own, with this host's buffer pool (a real size, never a placeholder).
        export = tmp_path / "export"
        out = innotune(docker, data, "export", "local", "--instance", plain, *SAMPLE,
                       *SLIDERS[:-4], "--memory-share", "2", "--redo", "keep",
                       "--compose", str(export))  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        dropin = (export / "99-innotune.cnf").read_text()
        pool = re.search(r"^innodb_buffer_pool_size = (\d+)$", dropin, re.M)
        assert pool is not None and "INNOTUNE" not in dropin, dropin
        override = export / "compose.override.yml"
        # Compose labelled the container: the override names its service, and the way to use
        # it is this host's compose command, run where the project is.
        assert "  plain:\n" in override.read_text()
        assert f"cd {project}" in out.stdout and "docker-compose -p shop " in out.stdout
        with_override = ["-f", "compose.yml", "-f", str(override)]
        _compose(docker, project, *with_override, "config")
        _compose(docker, project, *with_override, "up", "-d", "--force-recreate")
        docker.wait_ready(plain, spec)
        assert trx(plain) == "2", "the override's mounted drop-in is read"
        in_force = docker.sql(plain, spec, "SELECT @@GLOBAL.innodb_buffer_pool_size")
        assert in_force == pool.group(1)
        _compose(docker, project, *with_override, "up", "-d", "--force-recreate")
        docker.wait_ready(plain, spec)
        assert trx(plain) == "2", "and kept when recreated again"
    finally:
        _compose(docker, project, "down")


def test_docker_run_export_recreates_the_container(
    docker: Docker, tmp_path: Path, own_jobs: list[str]
) -> None:
    """A container started with plain docker run and no mounted configuration directory: the
    export's script recreates it with the drop-in mounted, its data kept, values in force."""
    spec = IMAGES["trixie"]
    docker.load(spec)
    name = f"innotune-run-{tmp_path.name[-6:].strip('_')}"
    docker.run_server(name, spec, data_dir=tmp_path / "data")
    old = f"{name}-before-innotune"
    try:
        docker.sql(name, spec, "CREATE DATABASE kept")
        export = tmp_path / "export"
        out = innotune(docker, tmp_path / "innotune-data", "export", "local", "--instance",
                       name, *SAMPLE, *SLIDERS[:-4], "--memory-share", "2",
                       "--redo", "keep", "--compose", str(export))  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        assert not (export / "compose.override.yml").exists()
        script = export / "docker-run.sh"
        assert f"sh {script}" in out.stdout
        dropin = (export / "99-innotune.cnf").read_text()
        pool = re.search(r"^innodb_buffer_pool_size = (\d+)$", dropin, re.M)
        assert pool is not None, dropin
        done = subprocess.run(["sh", str(script)], env=docker.environ(), capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        docker.wait_ready(name, spec)
        assert docker.sql(name, spec, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit") == "2"
        in_force = docker.sql(name, spec, "SELECT @@GLOBAL.innodb_buffer_pool_size")
        assert in_force == pool.group(1)
        assert "kept" in docker.sql(name, spec, "SHOW DATABASES").split()
        assert docker.cli("inspect", "-f", "{{.State.Status}}", old).strip() == "exited"
        # Stopped, it is named as stopped with how to start it, not as "no server".
        docker.cli("stop", name)
        stopped = innotune(docker, tmp_path / "innotune-data", "doctor", "local",
                           "--instance", name)  # fmt: skip
        assert stopped.returncode != 0
        said = stopped.stdout + stopped.stderr
        assert f"The docker container {name} is stopped" in said, said
        assert f"docker start {name}" in said, said
    finally:
        docker.cli("rm", "-f", name, old, check=False)


def test_a_container_beside_the_server_counts_at_its_files_pool(
    docker: Docker, tmp_path: Path, private_servers: list[PrivateServer]
) -> None:
    """Issue 36: a MariaDB container on the same host whose pool is set in its option files
    (a mounted drop-in, nothing on its command line) counts at that pool, read inside it
    through the engine without logging in to it."""
    spec = IMAGES["trixie"]
    docker.load(spec)
    name = f"innotune-other-{tmp_path.name[-6:].strip('_')}"
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "50-pool.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 768M\n")
    docker.run_server(name, spec, data_dir=tmp_path / "data", conf_dir=conf)
    try:
        assert docker.sql(name, spec, "SELECT @@innodb_buffer_pool_size") == str(768 << 20)
        server = PrivateServer(tmp_path / "host-server")
        private_servers.append(server)
        server.start()
        out = innotune(docker, tmp_path / "innotune-data", "inspect", "local", "--instance",
                       str(server.port), "--sample", "0", "--json")  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        facts = HostFacts.from_json(out.stdout)
        [boxed] = [i for i in facts.instances if i.container and i.container.name == name]
        assert "innodb" not in " ".join(boxed.argv)
        assert (boxed.files_read, boxed.files_pool) == (True, "768M")
        budget = memory_budget(facts)
        assert budget is not None
        said = (
            f"mariadbd in container {name}, its 768 MiB buffer pool from its option files, "
            f"{size_text(int((768 << 20) * POOL_OVERHEAD) - (768 << 20))} of bookkeeping and "
            f"{size_text(151 * budget.per_connection)} of buffers for its 151 connections, at "
            "this server's buffers per connection"
        )
        assert said in budget.words(), budget.words()
    finally:
        docker.cli("rm", "-f", name, check=False)
