"""The lifecycle on servers in containers: Debian's docker.io and podman, real images.

MariaDB 11.8 (trixie) and Oracle MySQL 9.7 (sid), each in Docker and in Podman; see
tests/containers/lifecycle.py for the steps. Then what `docker compose up --force-recreate`
does to a change: kept in a mounted directory, lost inside the container, kept again with
the exported override.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containers.engines import IMAGES, Docker, Engine
from tests.containers.lifecycle import JOB_ID, SLIDERS, innotune, run_lifecycle, table
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
    run = run_lifecycle(engine, spec, tmp_path)
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
        done = innotune(docker, data, "apply", "local", "--instance", db, "--sample", "1",
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
        # 3. The exported override makes the second one last.
        out = innotune(docker, data, "export", "local", "--instance", plain, "--sample", "1",
                       *SLIDERS, "--compose", str(project))  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        # Compose labelled the container: the override names its service.
        assert "  plain:\n" in (project / "compose.override.yml").read_text()
        _compose(docker, project, "-f", "compose.yml", "-f", "compose.override.yml", "up", "-d",
                 "--force-recreate")  # fmt: skip
        docker.wait_ready(plain, spec)
        assert trx(plain) == "2", "the override's mounted drop-in is read"
        _compose(docker, project, "-f", "compose.yml", "-f", "compose.override.yml", "up", "-d",
                 "--force-recreate")  # fmt: skip
        docker.wait_ready(plain, spec)
        assert trx(plain) == "2", "and kept when recreated again"
    finally:
        _compose(docker, project, "down")
