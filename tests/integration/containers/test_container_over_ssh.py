"""A server in a container on a host reached over SSH, as a user with a sudo password.

The host is this machine through the suite's OpenSSH (``engine_sshd``: its sessions see the
run's private engine as the default one). The login is ``innotune-pw``, whose sudo asks for a
password every time (timestamp_timeout=0), so every ``sudo docker exec`` goes through the
sudo-password path. The CLI runs on a terminal (a pty) and is given the password at its
prompt, as a person would. The password never shows on a command line (every process's
arguments are watched while the CLI runs), in InnoTune's files, in the job's files on the
target, or in sshd's log.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pty
import re
import secrets
import shutil
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.containers.engines import IMAGES, Engine, ImageSpec
from tests.containers.lifecycle import JOB_ID, REPO, SAMPLE, SLIDERS, TRX, listing
from tests.hosts.procwatch import ProcWatch
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import read_until
from tests.integration.containers.conftest import EngineSshServer


@dataclass
class Ran:
    """One CLI run on a terminal: its exit status and everything it printed."""

    status: int
    output: str


@dataclass
class SshCli:
    """`innotune COMMAND USER@HOST:PORT …` on a terminal, answering the sudo password prompt."""

    server: SshServer
    users: SshUsers
    tmp: Path
    instance: str
    db_password: str | None = None  # typed at the database password prompt when asked
    jobs: list[str] = dataclasses.field(default_factory=list)  # every job id a run printed

    def env(self) -> dict[str, str]:
        """A plain environment: no engine variables (the engine is the remote host's)."""
        keep = ("PATH", "LANG", "QT_QPA_PLATFORM")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(
            HOME=str(self.tmp / "home"),
            XDG_DATA_HOME=str(self.tmp / "data"),
            XDG_CONFIG_HOME=str(self.tmp / "config"),
        )
        (self.tmp / "home").mkdir(exist_ok=True)
        return env

    def __call__(self, command: str, *args: str, snapshot: str = "", timeout: float = 600) -> Ran:
        """Run it; the sudo password (and the database one) are typed at their prompts."""
        known = self.tmp / "known_hosts"
        known.write_text(self.server.known_hosts_line())
        argv = [
            sys.executable, "-m", "app", command,
            f"{self.users.pw_user}@{self.server.host}:{self.server.port}",
            *([snapshot] if snapshot else []),
            "--identity", str(self.server.client_key), "--known-hosts", str(known),
            "--ask-sudo-password", "--instance", self.instance, *args,
        ]  # fmt: skip
        env = self.env()
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the CLI, never run on as a copy of pytest
            try:
                os.chdir(REPO)
                os.execve(sys.executable, argv, env)  # noqa: S606 - our own argv, no shell
            finally:
                os._exit(127)
        seen = bytearray()
        try:
            if read_until(fd, b"sudo password on ", seen, 60):
                read_until(fd, b": ", seen, 10)
                os.write(fd, self.users.pw_password.encode() + b"\n")
            if "--ask-mysql-password" in args and self.db_password is not None:
                if read_until(fd, b"Database password on ", seen, 60):
                    read_until(fd, b": ", seen, 10)
                    os.write(fd, self.db_password.encode() + b"\n")
            read_until(fd, b"\0never", seen, timeout)  # to EOF
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # only if it still runs after the timeout
            _, status = os.waitpid(pid, 0)
            os.close(fd)
        output = seen.decode(errors="replace")
        self.jobs.extend(JOB_ID.findall(output))  # removed afterwards, a failed run's too
        return Ran(os.waitstatus_to_exitcode(status), output)


@pytest.fixture
def own_target_jobs() -> Iterator[list[str]]:
    """The job and snapshot ids a run printed; removed from the target afterwards."""
    from app.jobs import runner
    from app.jobs import snapshot as snap

    made: list[str] = []
    yield made
    for found in set(made):
        for path in (runner.job_dir(found), snap.target_dir(found)):
            shutil.rmtree(path, ignore_errors=True)


def _passed(ran: Ran) -> str:
    assert ran.status == 0, f"exit {ran.status}\n{ran.output}"
    return ran.output


def _on_the_ssh_host(
    engine: Engine, server: EngineSshServer
) -> contextlib.AbstractContextManager[None]:
    """podman has no daemon: its containers are made where the host's sessions restart them."""
    if engine.name == "podman":
        return engine.enter_namespace(server.pid)
    return contextlib.nullcontext()


def _target_files(ids: list[str]) -> list[Path]:
    from app.jobs import runner
    from app.jobs import snapshot as snap

    found: list[Path] = []
    for job in set(ids):
        for path in (Path(runner.job_dir(job)), Path(snap.target_dir(job))):
            if path.exists():
                found += list(path.rglob("*"))
    return found


# Docker with MySQL 9.7 in the suite, over SSH as the user whose sudo asks for its password
# every time: the sudo-password path and the database-password path in one run (the container
# started once, one apply and rollback). The path is the same through podman (whose lifecycle
# test_containers.py runs) and for MariaDB's image (whose lifecycle both test_containers.py
# and its compose test run): INNOTUNE_TEST_ALL_ENGINES=1 adds podman with MariaDB 11.8 (2 min).
PASSWORD_CASES = [("docker", "sid")] + (
    [("podman", "trixie")] if os.environ.get("INNOTUNE_TEST_ALL_ENGINES") == "1" else []
)


@pytest.mark.parametrize(("engine_name", "host"), PASSWORD_CASES)
def test_container_whose_root_needs_a_password(
    request: pytest.FixtureRequest,
    engine_name: str,
    host: str,
    engine_sshd: EngineSshServer,
    ssh_users: SshUsers,
    tmp_path: Path,
    own_target_jobs: list[str],
) -> None:
    """An image like the official ones: root's password from MARIADB_ROOT_PASSWORD, on a host
    reached over SSH by a user whose sudo asks for a password.

    Without the database password InnoTune says what is wrong and what to do; with it (typed
    at the prompt) it logs in through the image's client inside the container, the password in
    an option file on the client's standard input, never on a command line, and applies with a
    restart into the mounted directory (the drop-in written on the host through sudo) and
    rolls back. Neither password shows on a command line or in InnoTune's files; the sudo
    password in no process's environment either.
    """
    engine: Engine = request.getfixturevalue(engine_name)
    with _on_the_ssh_host(engine, engine_sshd):
        _password_lifecycle(engine, IMAGES[host], engine_sshd, ssh_users, tmp_path, own_target_jobs)


def _password_lifecycle(
    engine: Engine,
    spec: ImageSpec,
    engine_sshd: EngineSshServer,
    ssh_users: SshUsers,
    tmp_path: Path,
    own_target_jobs: list[str],
) -> None:
    host = spec.host
    password = "db-" + secrets.token_hex(10)
    sudo_password = ssh_users.pw_password.encode()
    name = f"innotune-ssh-pw-{engine.name}-{host}-{os.getpid()}"
    conf_dir = tmp_path / "conf"
    engine.run_server(name, spec, data_dir=tmp_path / "data-db", conf_dir=conf_dir,
                      root_password=password)  # fmt: skip
    cli = SshCli(engine_sshd, ssh_users, tmp_path, name, password, own_target_jobs)
    login = ("--mysql-user", "root", "--ask-mysql-password")
    # The database password is in the container's environment (the image reads it from
    # there); the sudo password in no process's.
    needles = {"database password": password.encode(), "sudo password": sudo_password}
    try:
        with ProcWatch(needles, in_environ=frozenset({"sudo password"})) as watch:
            out = cli("doctor").output
            assert "wants a password for root" in out, out
            assert "MARIADB_ROOT_PASSWORD" in out, out
            assert "--mysql-user root --ask-mysql-password" in out, out
            assert "All steps passed" not in out, out

            out = _passed(cli("doctor", *login))
            assert "All steps passed" in out, out
            assert f"{engine.name} container {name}" in out, out
            assert f"inside the container, reached through {engine.name} exec" in out, out
            out = _passed(cli("inspect", *SAMPLE, *login))
            assert "in a container" in out, out
            assert f"a host directory {conf_dir} mounted on /etc/mysql/conf.d" in out, out
            # Read inside, through sudo docker exec (the login is the image's client).
            inside = f"via the {spec.client} client inside {engine.name} container {name}"
            assert inside in out, out
            assert f"{TRX}=1" in out, out
            before = listing(conf_dir)
            pid = engine.cli("inspect", "-f", "{{.State.Pid}}", name).strip()
            out = _passed(cli("apply", *SAMPLE, *SLIDERS, "--restart", "--yes",
                              "--watch", "2", *login))  # fmt: skip
            found = re.search(r"^\s*snapshot\s+(\S+)\s*$", out, re.MULTILINE)
            assert found, out
            dropin = conf_dir / "99-innotune.cnf"
            assert dropin.exists(), out
            assert dropin.stat().st_uid == 0, "written on the host through sudo"
            assert f"{TRX} = 2" in dropin.read_text()
            assert engine.sql(name, spec, f"SELECT @@GLOBAL.{TRX}", password=password) == "2"
            assert engine.cli("inspect", "-f", "{{.State.Pid}}", name).strip() != pid, out
            out = _passed(cli("rollback", "--yes", *login, snapshot=found.group(1)))
            assert listing(conf_dir) == before, out
            assert engine.sql(name, spec, f"SELECT @@GLOBAL.{TRX}", password=password) == "1"

            # Without a restart: the job on the host has no password, so it could not set the
            # values live. Refused before anything is written, saying what to do.
            ran = cli("apply", *SAMPLE, *SLIDERS, "--yes", "--watch", "1", *login)
            assert ran.status != 0, ran.output
            assert "cannot log in to" in ran.output and "live" in ran.output, ran.output
            assert "Apply with --restart" in ran.output, ran.output
            assert listing(conf_dir) == before, ran.output
            assert engine.sql(name, spec, f"SELECT @@GLOBAL.{TRX}", password=password) == "1"
        assert watch.hits == [], "a password on a command line (or sudo's in an environment)"
        assert watch.execs > 20 or not watch.events, "the watcher read the commands as they ran"
        # InnoTune's files, sshd's log, the job's files on the target (not the server's data;
        # the container's .env file holds the database password the image reads).
        ours = [p for p in tmp_path.rglob("*") if "data-db" not in p.parts]
        for path in [*ours, *_target_files(own_target_jobs)]:
            if path.is_file() and not path.is_symlink():
                held = path.read_bytes()
                assert ssh_users.pw_password.encode() not in held, path
                if not path.name.endswith(".env"):
                    assert password.encode() not in held, path
    finally:
        engine.cli("rm", "-f", name, check=False)
