"""Debian's docker.io and podman, private to a test run, and server images built locally.

Each engine runs with everything under the run's own directory, so that a test never touches
a docker daemon or podman store of this machine and leaves nothing behind:

- ``dockerd --iptables=false --bridge=none`` with its own data root, exec root, socket and
  containerd namespace: left to itself dockerd turns iptables' FORWARD policy to DROP and adds
  a docker0 bridge, both of which outlive it;
- podman (daemonless) with its own storage.conf and containers.conf (graph root, run root,
  tmp dir, cgroupfs, events to a file), named by ``CONTAINERS_STORAGE_CONF`` and
  ``CONTAINERS_CONF``.

The containers run without a network (``--network=none``): InnoTune reaches a server in a
container through ``exec``, no port needed.

Images: the Debian root filesystems the suite already builds (tests/hosts/debian_hosts.py:
trixie's MariaDB 11.8, sid's Oracle MySQL 9.7), imported as they are, plus a small Dockerfile
whose entrypoint initialises an empty datadir and starts the server, which reads
/etc/mysql/conf.d like the official images. The built image is kept as an archive under
CACHE, keyed by the root filesystem's key and this recipe, so a later run only loads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.hosts.debian_hosts import CACHE as HOSTS_CACHE
from tests.hosts.debian_hosts import SPECS, build_image

CACHE = HOSTS_CACHE.parent / "containers"
# Bump when the recipe below changes: cached archives of an older recipe are rebuilt.
RECIPE = "1"
# Debian's clients, never /usr/local/bin/docker (another docker client this machine may have).
DOCKER = "/usr/bin/docker"
DOCKERD = "/usr/sbin/dockerd"
PODMAN = "/usr/bin/podman"

ENTRYPOINT = """#!/bin/sh
# Like the official images: an empty datadir is initialised, then the server starts and
# reads /etc/mysql/my.cnf, which includes /etc/mysql/conf.d.
set -e
mkdir -p /run/mysqld /var/lib/mysql
chown mysql:mysql /run/mysqld /var/lib/mysql
if [ ! -d /var/lib/mysql/mysql ]; then
    if command -v mariadb-install-db >/dev/null 2>&1; then
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql \\
            --auth-root-authentication-method=socket >/dev/null
    else
        mysqld --initialize-insecure --user=mysql --datadir=/var/lib/mysql
    fi
fi
exec "$@"
"""

# Like the official mariadb and mysql images (docker-entrypoint.sh): at the first start the root
# password comes from MARIADB_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD (the start is refused without
# one), and afterwards root logs in only with it, the socket login included.
PASSWORD_ENTRYPOINT = r"""#!/bin/sh
set -e
mkdir -p /run/mysqld /var/lib/mysql
chown mysql:mysql /run/mysqld /var/lib/mysql
if [ ! -d /var/lib/mysql/mysql ]; then
    pw="${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}"
    if [ -z "$pw" ]; then
        echo "error: database is uninitialized and password option is not specified" >&2
        echo "  You need to specify MARIADB_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD" >&2
        exit 1
    fi
    if command -v mariadb-install-db >/dev/null 2>&1; then
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql \
            --auth-root-authentication-method=normal >/dev/null
        client=mariadb
    else
        mysqld --initialize-insecure --user=mysql --datadir=/var/lib/mysql
        client=mysql
    fi
    sock=/run/mysqld/init.sock
    "$@" --skip-networking --socket=$sock &
    i=0
    until $client --socket=$sock -uroot -e 'SELECT 1' >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 240 ] || { echo "the first start's server did not answer" >&2; exit 1; }
        sleep 0.5
    done
    quoted=$(printf '%s' "$pw" | sed -e 's/\\/\\\\/g' -e "s/'/''/g")
    printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s'; SHUTDOWN;\n" "$quoted" |
        $client --socket=$sock -uroot
    wait
fi
exec "$@"
"""

PASSWORD_DOCKERFILE = """FROM {base}
COPY entrypoint.sh /usr/local/bin/innotune-entrypoint
"""

DOCKERFILE = """FROM {base}
COPY entrypoint.sh /usr/local/bin/innotune-entrypoint
ENTRYPOINT ["/usr/local/bin/innotune-entrypoint"]
CMD ["{server}", "--user=mysql"]
"""


@dataclass(frozen=True)
class ImageSpec:
    """A server image made from one of the test hosts' root filesystems."""

    host: str  # trixie | sid
    server: str  # the server program: mariadbd | mysqld
    client: str  # the image's client: mariadb | mysql
    flavour: str  # mariadb | mysql
    line: str  # "11.8", "9.7"

    @property
    def key(self) -> str:
        """The cache key: the root filesystem's key and this recipe."""
        text = f"{SPECS[self.host].key}\0{RECIPE}\0{ENTRYPOINT}\0{DOCKERFILE}\0{self.server}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def tag(self) -> str:
        """The image's name in an engine's store."""
        return f"localhost/innotune-test-{self.host}:{self.key}"

    @property
    def archive(self) -> Path:
        """The cached image (docker save format, which podman loads too)."""
        return CACHE / f"{self.host}-{self.key}.tar"


IMAGES = {
    "trixie": ImageSpec("trixie", "mariadbd", "mariadb", "mariadb", "11.8"),
    "sid": ImageSpec("sid", "mysqld", "mysql", "mysql", "9.7"),
}


def _run(
    argv: list[str], env: dict[str, str], *, check: bool = True, timeout: float = 600, **kw: object
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kw,  # type: ignore[call-overload]
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done  # type: ignore[no-any-return]


class Engine:
    """What both engines share: their CLI with the run's environment, images, servers."""

    name = ""
    cli_path = ""

    def __init__(self, workdir: Path) -> None:
        # Put before every command of the CLI: podman has no daemon, so its mounts are made
        # in the mount namespace it runs in (see enter_namespace).
        self.prefix: list[str] = []
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        bin_dir = workdir / "bin"
        bin_dir.mkdir(exist_ok=True)
        # `docker` and `podman` on the PATH are Debian's (InnoTune runs them by name).
        for program in (DOCKER, PODMAN):
            link = bin_dir / Path(program).name
            if not link.exists():
                link.symlink_to(program)
        self.bin_dir = bin_dir

    def env(self) -> dict[str, str]:
        """The variables that point the CLI at this run's engine."""
        raise NotImplementedError

    def environ(self) -> dict[str, str]:
        """This process's environment with the engine's variables and Debian's CLI first.

        The other engine is pointed at this run's directory too: InnoTune asks both (the
        instance finder runs `docker ps` and `podman ps`), and a podman left to its defaults
        would make a store under /var/lib/containers and /run/libpod.
        """
        env = {**os.environ, **_other_engine(self.workdir), **self.env()}
        env["PATH"] = f"{self.bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
        return env

    def cli(
        self, *args: str, check: bool = True, timeout: float = 600, input: str | None = None
    ) -> str:
        """Run the engine's CLI; its stdout."""
        return _run([*self.prefix, self.cli_path, *args], self.environ(), check=check,
                    timeout=timeout, input=input).stdout  # fmt: skip

    @contextlib.contextmanager
    def enter_namespace(self, pid: int) -> Iterator[None]:
        """Run the CLI in the mount namespace of process ``pid`` meanwhile.

        A host reached through an sshd in a namespace of its own is one machine: the
        containers that its sessions restart through podman are made from there too.
        """
        self.prefix = ["nsenter", f"--mount=/proc/{pid}/ns/mnt", "--"]
        try:
            yield
        finally:
            self.prefix = []

    def load(self, spec: ImageSpec) -> None:
        """Put ``spec``'s image in this engine's store (built and cached first when missing)."""
        if spec.tag in self.cli("images", "--format", "{{.Repository}}:{{.Tag}}").split():
            return
        if not spec.archive.exists():
            self.build(spec)
        self.cli("load", "-i", str(spec.archive))

    def build(self, spec: ImageSpec) -> None:
        """Build ``spec``'s archive from the host's root filesystem (one builder at a time)."""
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(CACHE / f"{spec.host}.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if spec.archive.exists():
                return
            root = build_image(SPECS[spec.host])
            base = f"localhost/innotune-test-{spec.host}-rootfs:{spec.key}"
            # The pipe is closed and tar waited for on leaving (a left-open pipe is a
            # ResourceWarning, an error under the suite's warning filter).
            with subprocess.Popen(
                ["tar", "-C", str(root), "--numeric-owner", "-c", "."],
                stdout=subprocess.PIPE,
            ) as tar:
                _run([self.cli_path, "import", "-", base], self.environ(), stdin=tar.stdout)
            context = self.workdir / f"build-{spec.host}"
            context.mkdir(exist_ok=True)
            (context / "Dockerfile").write_text(DOCKERFILE.format(base=base, server=spec.server))
            (context / "entrypoint.sh").write_text(ENTRYPOINT)
            (context / "entrypoint.sh").chmod(0o755)
            self.cli("build", "--network=none", "-t", spec.tag, str(context))
            partial = spec.archive.with_suffix(".partial")
            self.cli("save", "-o", str(partial), spec.tag)
            partial.rename(spec.archive)

    def password_image(self, spec: ImageSpec) -> str:
        """``spec``'s image with the official images' root password (:data:`PASSWORD_ENTRYPOINT`).

        Built on the loaded image (one layer: the entrypoint), so it is made in seconds.
        """
        self.load(spec)
        digest = hashlib.sha256(PASSWORD_ENTRYPOINT.encode()).hexdigest()[:8]
        tag = f"localhost/innotune-test-{spec.host}-root-password:{spec.key}-{digest}"
        if tag in self.cli("images", "--format", "{{.Repository}}:{{.Tag}}").split():
            return tag
        context = self.workdir / f"build-{spec.host}-root-password"
        context.mkdir(exist_ok=True)
        (context / "Dockerfile").write_text(PASSWORD_DOCKERFILE.format(base=spec.tag))
        (context / "entrypoint.sh").write_text(PASSWORD_ENTRYPOINT)
        (context / "entrypoint.sh").chmod(0o755)
        self.cli("build", "--network=none", "-t", tag, str(context))
        return tag

    def run_server(
        self,
        name: str,
        spec: ImageSpec,
        *,
        data_dir: Path,
        conf_dir: Path | None = None,
        labels: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        root_password: str | None = None,
    ) -> None:
        """Start a server container and wait until its client logs in.

        With ``root_password`` the image is :meth:`password_image`'s, given the password as
        the official images take it (MARIADB_ROOT_PASSWORD, from an env file: not in argv).
        """
        self.start_server(name, spec, data_dir=data_dir, conf_dir=conf_dir, labels=labels,
                          env=env, root_password=root_password)  # fmt: skip
        self.wait_ready(name, spec, password=root_password)

    def start_server(
        self,
        name: str,
        spec: ImageSpec,
        *,
        data_dir: Path,
        conf_dir: Path | None = None,
        labels: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        root_password: str | None = None,
    ) -> None:
        """:meth:`run_server` without the wait: several containers initialise side by side."""
        data_dir.mkdir(parents=True, exist_ok=True)
        args = ["run", "-d", "--name", name, "--network=none", "-v", f"{data_dir}:/var/lib/mysql"]
        if conf_dir is not None:
            conf_dir.mkdir(parents=True, exist_ok=True)
            args += ["-v", f"{conf_dir}:/etc/mysql/conf.d"]
        for key, value in (labels or {}).items():
            args += ["--label", f"{key}={value}"]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        image = spec.tag
        if root_password is not None:
            image = self.password_image(spec)
            env_file = data_dir.parent / f"{name}.env"
            env_file.touch(mode=0o600)
            env_file.write_text(f"MARIADB_ROOT_PASSWORD={root_password}\n")
            args += ["--env-file", str(env_file)]
        self.cli(*args, image)

    def _client(self, name: str, spec: ImageSpec, password: str | None) -> list[str]:
        """The image's client as root; a password goes in an option file on stdin."""
        if password is None:
            return [*self.prefix, self.cli_path, "exec", name, spec.client, "-uroot", "-N", "-B"]
        argv = [*self.prefix, self.cli_path, "exec", "-i", name, spec.client]
        argv.append("--defaults-extra-file=/dev/stdin")
        return [*argv, "-uroot", "-N", "-B"]

    @staticmethod
    def _stdin(password: str | None) -> str | None:
        return None if password is None else f"[client]\npassword={password}\n"

    def wait_ready(
        self, name: str, spec: ImageSpec, timeout: float = 180, *, password: str | None = None
    ) -> None:
        """Wait until the container's server answers its own client."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            done = _run(
                [*self._client(name, spec, password), "-e", "SELECT 1"],
                self.environ(),
                check=False,
                input=self._stdin(password),
            )
            if done.returncode == 0 and done.stdout.strip() == "1":
                return
            last = done.stderr.strip()
            time.sleep(0.5)
        logs = self.cli("logs", "--tail", "30", name, check=False)
        raise TimeoutError(f"{name} did not answer in {timeout} s: {last}\n{logs}")

    def sql(self, name: str, spec: ImageSpec, query: str, *, password: str | None = None) -> str:
        """One query through the container's own client, as root over its socket."""
        argv = [*self._client(name, spec, password), "-e", query]
        return _run(argv, self.environ(), input=self._stdin(password)).stdout.strip()

    def remove_all(self) -> None:
        """Remove every container of this run's engine."""
        ids = self.cli("ps", "-aq", check=False).split()
        if ids:
            self.cli("rm", "-f", *ids, check=False, timeout=120)

    def stop(self) -> None:
        """Stop the engine and remove what it left (containers, mounts)."""
        raise NotImplementedError

    def _unmount_under(self) -> None:
        prefix = str(self.workdir) + "/"
        with open("/proc/self/mounts") as fh:
            points = [line.split()[1] for line in fh]
        for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def _other_engine(workdir: Path) -> dict[str, str]:
    """Both engines' variables pointing under ``workdir`` (an engine's own ones override)."""
    quiet = workdir / "other-engine"
    if not (quiet / "containers.conf").exists():
        quiet.mkdir(parents=True, exist_ok=True)
        _podman_config(quiet)
    return {
        "DOCKER_HOST": f"unix://{quiet / 'no-docker.sock'}",
        "CONTAINERS_STORAGE_CONF": str(quiet / "storage.conf"),
        "CONTAINERS_CONF": str(quiet / "containers.conf"),
    }


def _podman_config(workdir: Path) -> None:
    """storage.conf and containers.conf keeping podman's state under ``workdir``."""
    (workdir / "storage.conf").write_text(
        "[storage]\n"
        'driver = "overlay"\n'
        f'graphroot = "{workdir / "graph"}"\n'
        f'runroot = "{workdir / "run"}"\n'
    )
    (workdir / "containers.conf").write_text(
        "[engine]\n"
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        f'events_logfile_path = "{workdir / "events.log"}"\n'
        f'tmp_dir = "{workdir / "tmp"}"\n'
        f'volume_path = "{workdir / "volumes"}"\n'
        f'static_dir = "{workdir / "static"}"\n'
        'runtime = "runc"\n'
        "[network]\n"
        f'network_config_dir = "{workdir / "networks"}"\n' + _own_limits()
    )


def _own_limits() -> str:
    """The open-files and processes limits for podman's containers: this process's own.

    Rootful podman gives a container the kernel's most (1048576 files, 4194304 processes)
    unless told; where the run's own hard limits are lower and may not be raised (a machine
    inside a container, as some CI machines are), runc then fails with "error setting rlimit
    type 7: operation not permitted" (6 for processes) and no container starts.
    """
    limits = []
    for name, which in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            limits.append(f'"{name}={hard}:{hard}"')
    return f"[containers]\ndefault_ulimits = [{', '.join(limits)}]\n" if limits else ""


class Docker(Engine):
    """A dockerd of the run's own: no iptables rules, no bridge, its own directories."""

    name = "docker"
    cli_path = DOCKER

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.socket = workdir / "docker.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """DOCKER_HOST: this run's socket."""
        return {"DOCKER_HOST": f"unix://{self.socket}"}

    def start(self) -> None:
        """Start dockerd and wait until it answers."""
        log = open(self.workdir / "dockerd.log", "ab")  # noqa: SIM115 - handed to dockerd
        namespace = f"innotune-{os.getpid()}-{self.workdir.name}"
        self.proc = subprocess.Popen(
            [
                DOCKERD,
                "--iptables=false",
                "--ip6tables=false",
                "--ip-forward=false",
                "--ip-masq=false",
                "--bridge=none",
                f"--data-root={self.workdir / 'data'}",
                f"--exec-root={self.workdir / 'exec'}",
                f"--pidfile={self.workdir / 'dockerd.pid'}",
                f"--host=unix://{self.socket}",
                f"--containerd-namespace={namespace}",
                f"--containerd-plugins-namespace={namespace}-plugins",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                text = (self.workdir / "dockerd.log").read_text()[-2000:]
                raise RuntimeError(f"dockerd ended at start: {text}")
            if _run([DOCKER, "version"], self.environ(), check=False, timeout=20).returncode == 0:
                return
            time.sleep(0.3)
        raise TimeoutError("dockerd did not answer in 60 s")

    def stop(self) -> None:
        """Remove the containers, stop dockerd (and its containerd), unmount what it left."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):
                self.remove_all()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self.proc = None
        self._unmount_under()


# What podman makes outside its configured directories whatever it is told: the image
# blob-info cache (root's is always /var/lib/containers/cache) and the network backend's
# run directory. Removed after a run that found them absent.
PODMAN_MACHINE_PATHS = (Path("/var/lib/containers"), Path("/run/containers"))


class Podman(Engine):
    """Podman with its storage, run state and temporary files under the run's directory."""

    name = "podman"
    cli_path = PODMAN

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        _podman_config(workdir)
        self.absent = [p for p in PODMAN_MACHINE_PATHS if not p.exists()]

    def env(self) -> dict[str, str]:
        """The configuration files that keep podman's state under the run's directory."""
        return {
            "CONTAINERS_STORAGE_CONF": str(self.workdir / "storage.conf"),
            "CONTAINERS_CONF": str(self.workdir / "containers.conf"),
        }

    def start(self) -> None:
        """Podman has no daemon: check it answers."""
        self.cli("info", "--format", "{{.Store.GraphRoot}}", timeout=60)

    def stop(self) -> None:
        """Remove the containers (and their conmon), unmount the store."""
        with contextlib.suppress(Exception):
            self.remove_all()
        with contextlib.suppress(Exception):
            self.cli("unmount", "-a", check=False, timeout=60)
        # conmon runs `podman container cleanup` after a container ends, in the background:
        # wait for every process naming this run's directory before tidying after them.
        deadline = time.monotonic() + 30
        while _processes_naming(self.workdir) and time.monotonic() < deadline:
            time.sleep(0.2)
        self._unmount_under()
        # Only the container tests run podman, one session at a time (tests/run_suite.py).
        for path in self.absent:
            shutil.rmtree(path, ignore_errors=True)


def _processes_naming(path: Path) -> list[int]:
    """The processes whose command line names ``path`` (an engine's helpers)."""
    found = []
    needle = str(path).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def engine_available(name: str) -> str | None:
    """None when ``name``'s programs are installed, else what is missing."""
    needed = (DOCKER, DOCKERD) if name == "docker" else (PODMAN, "/usr/bin/conmon")
    missing = [p for p in needed if not Path(p).exists()]
    if shutil.which("runc") is None:
        missing.append("runc")
    return f"not installed: {', '.join(missing)}" if missing else None
