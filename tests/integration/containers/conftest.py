"""The container tests' engines (tests/containers/fixtures.py) and an SSH host running them.

``engine_sshd`` is the suite's OpenSSH server (tests/hosts/sshd.py) started in a mount
namespace of its own, so that a login sees this machine as a host whose default engine is the
test run's: ``sudo docker`` there reaches the run's private dockerd through a docker context in
root's home, and ``sudo podman`` the run's private store through /etc/containers. Nothing
outside that namespace changes: /root, /etc/containers and /usr/local/bin/docker are covered
by bind mounts that only the sshd and its sessions see, and die with them.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containers.engines import DOCKER, Docker, Engine, Podman
from tests.containers.fixtures import docker, podman
from tests.hosts.sshd import SshServer, SshUsers
from tests.hosts.util import DROP_LOOP_MOUNTS, wait_port

__all__ = ["docker", "engine_sshd", "podman"]


class EngineSshServer(SshServer):
    """An sshd whose sessions see ``docker`` and ``podman`` as the run's private engines."""

    def __init__(self, workdir: Path, engine: Engine) -> None:
        super().__init__(workdir)
        self.engine = engine

    def _mounts(self) -> list[list[str]]:
        """The bind mounts made in the sshd's namespace before it starts."""
        home = self.workdir / "root-home"
        home.mkdir(mode=0o700, exist_ok=True)
        mounts = [["mount", "--bind", str(home), "/root"]]
        if isinstance(self.engine, Docker):
            # root's default docker context is the run's dockerd (docker reads ~/.docker).
            config = {"DOCKER_CONFIG": str(home / ".docker"), "PATH": "/usr/bin:/bin"}
            for args in (
                [
                    "context",
                    "create",
                    "innotune-test",
                    "--docker",
                    f"host=unix://{self.engine.socket}",
                ],  # fmt: skip
                ["context", "use", "innotune-test"],
            ):
                subprocess.run([DOCKER, *args], env=config, check=True, capture_output=True)
            # sudo's secure_path puts /usr/local/bin first: Debian's client is the one tested.
            if Path("/usr/local/bin/docker").exists():
                mounts.append(["mount", "--bind", DOCKER, "/usr/local/bin/docker"])
        if isinstance(self.engine, Podman):
            etc = self.workdir / "etc-containers"
            etc.mkdir(exist_ok=True)
            for name in ("policy.json", "registries.conf"):
                if Path("/etc/containers", name).exists():
                    shutil.copy(Path("/etc/containers", name), etc / name)
            for name in ("storage.conf", "containers.conf"):
                shutil.copy(self.engine.workdir / name, etc / name)
            mounts.append(["mount", "--bind", str(etc), "/etc/containers"])
        return mounts

    @property
    def pid(self) -> int:
        """The listening sshd's pid (its mount namespace is the host's, for its sessions)."""
        assert self._proc is not None
        return self._proc.pid

    def start(self) -> None:
        """Start sshd inside a private mount namespace carrying :meth:`_mounts`."""
        self.prepare()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        subprocess.run(["/usr/sbin/sshd", "-t", "-f", str(self.config)], check=True)
        setup = " && ".join(shlex.join(m) for m in self._mounts())
        sshd = shlex.join(["/usr/sbin/sshd", "-D", "-e", "-f", str(self.config)])
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                f"{DROP_LOOP_MOUNTS}; {setup} && exec {sshd}"]  # fmt: skip
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen(
                argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )
        wait_port(self.host, self.port)


@pytest.fixture
def engine_sshd(
    request: pytest.FixtureRequest, ssh_users: SshUsers, tmp_path: Path
) -> Iterator[EngineSshServer]:
    """An sshd on 127.0.0.1 whose sessions reach the engine named by the test's parameter.

    The test names the engine fixture (``docker`` or ``podman``) as ``engine_name``.
    """
    engine: Engine = request.getfixturevalue(request.node.callspec.params["engine_name"])
    server = EngineSshServer(tmp_path / "sshd", engine)
    server.start()
    try:
        yield server
    finally:
        server.stop()
