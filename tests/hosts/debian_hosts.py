"""Real Debian systems from Debian's archive, booted with systemd as PID 1, to test against.

Each host is a root filesystem built once by ``debootstrap`` (then kept under CACHE, keyed by
the suite, the package list and this recipe) with the distribution's own server package:

- bullseye: MariaDB 10.5 (``mariadb-server``), systemd 247;
- trixie: MariaDB 11.8 (``mariadb-server``), systemd 257;
- sid: Oracle MySQL 9.7 (``mysql-server``), systemd 26x.

A test run boots a copy (an overlay on the cached image, so the image never changes) in its
own pid, mount, uts, ipc and cgroup namespaces on this machine's network: the booting shell
moves into its own cgroup2 directory, ``unshare`` gives it the namespaces, the root is bound
onto itself with proc, a read-only sysfs and /proc/sys, cgroup2 and a small /dev, then
``pivot_root`` and systemd with ``container=`` set. sshd listens on 127.0.0.1 at a port of
its own, and so does the database server. Power-off is systemd's own (SIGRTMIN+4); nothing
of a host outlives the run.

Kernel settings belong to this machine: /proc/sys and /sys are read-only inside, and the
units that would touch the kernel or this machine's disks (sysctl, modules, fstrim…) are
masked in the image.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from app.practice.server import free_port
from tests.hosts.debian_mariadb import ETC, DebianMariaDB, Entry, record_tree, restore_tree
from tests.hosts.sshd import SshServer
from tests.hosts.util import sh, wait_port

CACHE = Path(os.environ.get("INNOTUNE_TEST_HOSTS_CACHE", "/var/cache/innotune-tests/hosts"))
MIRROR = os.environ.get("INNOTUNE_TEST_MIRROR", "http://deb.debian.org/debian")
# Bump when the recipe below changes: cached images of an older recipe are rebuilt.
RECIPE = "4"

COMMON = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "openssh-server",
    "python3",
    "sudo",
    "procps",
    "iproute2",
)

# Units that would act on this machine (its kernel, its disks, its clock) or fail for lack of a
# console; masked in every image.
MASKED = (
    "console-getty.service",
    "getty@.service",
    "systemd-sysctl.service",
    "systemd-modules-load.service",
    "systemd-binfmt.service",
    "proc-sys-fs-binfmt_misc.automount",
    "systemd-timesyncd.service",
    "systemd-networkd.service",
    "systemd-resolved.service",
    "systemd-pstore.service",
    "fstrim.timer",
    "e2scrub_all.timer",
    "e2scrub_reap.service",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "dpkg-db-backup.timer",
    "man-db.timer",
    "rsync.service",
)


@dataclass(frozen=True)
class HostSpec:
    """One Debian suite with one server package."""

    name: str
    suite: str
    server_package: str
    service: str  # the server's systemd unit
    flavour: str  # mariadb | mysql
    server_line: str  # e.g. "10.5", as the catalogue names it
    etc_drop_in: str  # where this layout reads a [mysqld] drop-in from

    @property
    def packages(self) -> tuple[str, ...]:
        """Everything debootstrap installs beyond the minimal base."""
        return (*COMMON, self.server_package)

    @property
    def key(self) -> str:
        """The cache key: suite, packages and recipe."""
        text = f"{self.suite}\0{' '.join(self.packages)}\0{RECIPE}\0{'/'.join(MASKED)}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def image(self) -> Path:
        """Where the built root filesystem is kept."""
        return CACHE / f"{self.suite}-{self.key}"


SPECS = {
    "bullseye": HostSpec(
        "bullseye",
        "bullseye",
        "mariadb-server",
        "mariadb",
        "mariadb",
        "10.5",
        "/etc/mysql/mariadb.conf.d/40-test-host.cnf",
    ),
    "trixie": HostSpec(
        "trixie",
        "trixie",
        "mariadb-server",
        "mariadb",
        "mariadb",
        "11.8",
        "/etc/mysql/mariadb.conf.d/40-test-host.cnf",
    ),
    "sid": HostSpec(
        "sid",
        "sid",
        "mysql-server",
        "mysql",
        "mysql",
        "9.7",
        "/etc/mysql/mysql.conf.d/40-test-host.cnf",
    ),
}


def _log(message: str) -> None:
    print(f"[test hosts] {message}", flush=True)


def build_image(spec: HostSpec) -> Path:
    """The cached root filesystem of ``spec``, built first when missing (one builder at a time)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{spec.suite}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (spec.image / ".innotune-built").exists():
            return spec.image
        for stale in CACHE.glob(f"{spec.suite}-*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
        work = spec.image.with_name(spec.image.name + ".building")
        shutil.rmtree(work, ignore_errors=True)
        started = time.monotonic()
        _log(f"building {spec.suite} ({', '.join(spec.packages)}) with debootstrap")
        proc = subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(spec.packages)}",
                spec.suite,
                str(work),
                MIRROR,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
            raise RuntimeError(f"debootstrap {spec.suite} failed:\n" + "\n".join(tail))
        _customise(work, spec)
        versions = subprocess.run(
            ["chroot", str(work), "dpkg-query", "-W", *spec.packages],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (work / ".innotune-built").write_text(
            f"suite {spec.suite}\nbuilt in {time.monotonic() - started:.0f} s\n{versions}"
        )
        work.rename(spec.image)
        _log(f"built {spec.suite} in {time.monotonic() - started:.0f} s")
        return spec.image


def _customise(root: Path, spec: HostSpec) -> None:
    """Settings every boot of the image shares: masked units, no host keys, a clean apt."""
    for unit in MASKED:
        link = root / "etc/systemd/system" / unit
        link.unlink(missing_ok=True)
        link.symlink_to("/dev/null")
    # Each boot gets its own host key (the test accepts its fingerprint).
    for key in (root / "etc/ssh").glob("ssh_host_*"):
        key.unlink()
    (root / "etc/machine-id").write_text("")
    shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
    (root / "var/cache/apt/archives/partial").mkdir(parents=True)
    (root / "etc/hostname").write_text(f"{spec.name}\n")
    # sid's mysql-server postinst writes this when port 3306 is taken on the machine building
    # the image (this machine's MariaDB, often): it would move every boot's server to 3307,
    # over the port the boot chose.
    (root / "etc/mysql/mysql.conf.d/99-port-backoff.cnf").unlink(missing_ok=True)


def cgroup2_root() -> Path:
    """This machine's cgroup2 hierarchy (unified, or the hybrid layout's ``unified``)."""
    for path in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if (path / "cgroup.procs").exists() and (path / "cgroup.controllers").exists():
            return path
    raise RuntimeError("no cgroup2 hierarchy on this machine (/sys/fs/cgroup[/unified])")


# Runs as the new namespaces' PID 1 until it execs systemd. Arguments: root, hostname.
_BOOT = r"""
set -eu
root=$1
hostname "$2"
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --bind "$root/proc/sys" "$root/proc/sys"
mount -o remount,bind,ro "$root/proc/sys"
mount -t sysfs -o ro sysfs "$root/sys"
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
mount -t tmpfs -o mode=755,nosuid dev "$root/dev"
# Device nodes of the host's own, never bind mounts of this machine's: what systemd, logind
# or a getty inside does to a node's owner or mode (the console's above all) stays inside.
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    name=${d%%:*}; nums=${d#*:}
    mknod -m 666 "$root/dev/$name" c "${nums%%:*}" "${nums#*:}"
done
mknod -m 600 "$root/dev/console" c 1 3  # a null device: the boot's messages go nowhere
mkdir -p "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
for i in 0:stdin 1:stdout 2:stderr; do ln -s "/proc/self/fd/${i%%:*}" "$root/dev/${i#*:}"; done
cd "$root"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
exec env -i container=innotune-test TERM=dumb /lib/systemd/systemd
"""


class DebianHost:
    """One booted copy of a cached image: its sshd and database ports, root's key, its files."""

    def __init__(self, spec: HostSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.root = workdir / "root"  # the host's / as seen from this machine
        self.ssh_port = free_port()
        self.db_port = free_port()
        self.client_key = workdir / "client_ed25519"
        self.cgroup = cgroup2_root() / f"innotune-test-{spec.name}-{os.getpid()}-{self.ssh_port}"
        self._proc: subprocess.Popen[bytes] | None = None
        self.boot_seconds = 0.0
        self._baseline: dict[str, dict[str, Entry]] = {}

    # -- boot and power-off --------------------------------------------------------------

    def boot(self) -> None:
        """Mount the overlay, set this boot's ports and key, start systemd, wait for the server."""
        started = time.monotonic()
        image = build_image(self.spec)
        for sub in ("upper", "work", "root"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
        sh(
            "mount",
            "-t",
            "overlay",
            "overlay",
            "-o",
            f"lowerdir={image},upperdir={self.workdir / 'upper'},workdir={self.workdir / 'work'}",
            str(self.root),
        )
        try:
            self._configure()
        except Exception:
            sh("umount", str(self.root))
            raise
        self.cgroup.mkdir()
        console = open(self.workdir / "console.log", "ab")
        cgroup_procs = self.cgroup / "cgroup.procs"
        boot = (
            f"echo $$ > {shlex.quote(str(cgroup_procs))} && exec unshare --pid --mount --uts "
            f"--ipc --cgroup --fork sh -c {shlex.quote(_BOOT)} sh "
            f"{shlex.quote(str(self.root))} {shlex.quote(self.spec.name)}"
        )
        self._proc = subprocess.Popen(
            ["sh", "-c", boot],
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=console,
            start_new_session=True,
        )
        console.close()
        try:
            wait_port("127.0.0.1", self.ssh_port, timeout=120)
            self.wait_for_server(timeout=180)
        except Exception:
            self.poweroff()
            raise
        self.boot_seconds = time.monotonic() - started
        self._baseline = self.record()

    def _configure(self) -> None:
        """This boot's sshd port, host key, root's authorized key and the server's ports."""
        root = self.root
        (root / "etc/ssh/sshd_config.d").mkdir(exist_ok=True)
        (root / "etc/ssh/sshd_config.d/40-test-host.conf").write_text(
            f"Port {self.ssh_port}\nListenAddress 127.0.0.1\nPermitRootLogin prohibit-password\n"
        )
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.client_key))
        host_key = root / "etc/ssh/ssh_host_ed25519_key"
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key))
        ssh_dir = root / "root/.ssh"
        ssh_dir.mkdir(mode=0o700, exist_ok=True)
        (ssh_dir / "authorized_keys").write_text(Path(f"{self.client_key}.pub").read_text())
        lines = f"[mysqld]\nport = {self.db_port}\n"
        if self.spec.flavour == "mysql":
            # The X Protocol listens too; its default port would clash between test runs.
            lines += f"mysqlx-port = {free_port()}\n"
        (root / self.spec.etc_drop_in.lstrip("/")).write_text(lines)

    @property
    def init_pid(self) -> int:
        """systemd's pid as this machine sees it."""
        assert self._proc is not None, "host not booted"
        children = Path(f"/proc/{self._proc.pid}/task/{self._proc.pid}/children").read_text()
        return int(children.split()[0])

    def poweroff(self, timeout: float = 60) -> None:
        """systemd's own power-off; then nothing of the host may remain."""
        if self._proc is not None:
            with contextlib.suppress(OSError, ValueError, IndexError, AssertionError):
                os.kill(self.init_pid, signal.SIGRTMIN + 4)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                (self.cgroup / "cgroup.kill").write_text("1")
                self._proc.wait(timeout=30)
            self._proc = None
        if self.cgroup.exists():
            for _ in range(50):
                if not self._cgroup_pids():
                    break
                time.sleep(0.1)
            for path in sorted(self.cgroup.rglob("*"), key=lambda p: -len(p.parts)):
                if path.is_dir():
                    with contextlib.suppress(OSError):
                        path.rmdir()
            self.cgroup.rmdir()
        if os.path.ismount(self.root):
            self._unmount_root()

    def _unmount_root(self) -> None:
        """Unmount the overlay; a run once found it busy just after every process had gone.

        Tried again for 10 s; if it stays busy, the error names what holds it (fuser).
        """
        for _ in range(50):
            done = subprocess.run(["umount", str(self.root)], capture_output=True, text=True)
            if done.returncode == 0:
                return
            time.sleep(0.2)
        holders = subprocess.run(
            ["fuser", "-vm", str(self.root)], capture_output=True, text=True, check=False
        )
        raise RuntimeError(
            f"umount {self.root} failed: {done.stderr.strip()}; held by: "
            f"{(holders.stdout + holders.stderr).strip() or 'nothing fuser sees'}"
        )

    def _cgroup_pids(self) -> list[str]:
        found: list[str] = []
        for procs in self.cgroup.rglob("cgroup.procs"):
            with contextlib.suppress(OSError):
                found += procs.read_text().split()
        return found

    # -- commands inside ------------------------------------------------------------------

    def run(self, *argv: str, check: bool = True, timeout: float = 120) -> str:
        """A command inside the host (its namespaces), as root; returns stdout."""
        proc = subprocess.run(
            ["nsenter", "-t", str(self.init_pid), "-m", "-u", "-i", "-p", "-C", "--", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr}")
        return proc.stdout

    def wait_for_server(self, timeout: float = 120) -> None:
        """Until the server's unit is active and it answers a query."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            state = self.run("systemctl", "is-active", self.spec.service, check=False).strip()
            if state == "active":
                probe = subprocess.run(
                    self.command("mysql", "-NBe", "SELECT @@port"), capture_output=True, text=True
                )
                if probe.returncode == 0:
                    port = probe.stdout.strip()
                    if port != str(self.db_port):
                        # Two boots (or this machine's server) would share a port.
                        raise RuntimeError(
                            f"{self.spec.name}: the server listens on port {port}, not this "
                            f"boot's {self.db_port}: an option file of the image overrides "
                            f"{self.spec.etc_drop_in}"
                        )
                    return
                last = probe.stderr.strip()
            else:
                last = f"{self.spec.service} is {state}"
            time.sleep(0.3)
        raise TimeoutError(f"{self.spec.name}: the server did not come up: {last}")

    def command(self, *argv: str) -> list[str]:
        """``argv`` as a command of this machine that runs it inside the host."""
        return ["nsenter", "-t", str(self.init_pid), "-m", "-u", "-i", "-p", "-C", "--", *argv]

    def sql(self, query: str) -> str:
        """One query as the server's root (socket login), tab-separated rows."""
        return self.run("mysql", "-NBe", query).strip()

    def main_pid(self) -> int:
        """The server unit's main process, inside the host's pid namespace."""
        return int(self.run("systemctl", "show", "-p", "MainPID", "--value", self.spec.service))

    def active(self) -> bool:
        """The server's unit is active and the server answers."""
        try:
            self.wait_for_server(timeout=5)
        except TimeoutError:
            return False
        return True

    # The same questions as LocalDebian answers.
    manager = "systemd"
    instance_args: list[str] = []

    @property
    def name(self) -> str:
        """The suite's name."""
        return self.spec.name

    @property
    def server_line(self) -> str:
        """The catalogue's name of the server's release line, e.g. 9.7."""
        return self.spec.server_line

    @property
    def flavour(self) -> str:
        """mariadb or mysql."""
        return self.spec.flavour

    @property
    def service(self) -> str:
        """The server's unit."""
        return self.spec.service

    # -- what the user owns ---------------------------------------------------------------

    @property
    def datadir(self) -> Path:
        """The server's datadir as this machine sees it."""
        return self.root / "var/lib/mysql"

    def record(self) -> dict[str, dict[str, Entry]]:
        """/etc/mysql and the datadir's option files (mysqld-auto.cnf), byte for byte."""
        datadir = {}
        for path in sorted(self.datadir.glob("*.cnf")):
            st = path.stat()
            mode = st.st_mode & 0o7777
            datadir[path.name] = Entry("file", mode, st.st_uid, st.st_gid, path.read_bytes())
        return {"etc": record_tree(self.root / "etc/mysql"), "datadir": datadir}

    def differences(self) -> list[str]:
        """What differs from this boot's baseline, by path."""
        now = self.record()
        found = []
        for part, base in self._baseline.items():
            for name in sorted(set(base) | set(now[part])):
                if base.get(name) != now[part].get(name):
                    found.append(f"{part}: {name}")
        return found

    def put_back(self) -> None:
        """Restore the baseline files and restart the server (after a test that failed)."""
        restore_tree(self._baseline["etc"], self.root / "etc/mysql")
        for name in set(self.record()["datadir"]) - set(self._baseline["datadir"]):
            (self.datadir / name).unlink()
        for name, entry in self._baseline["datadir"].items():
            path = self.datadir / name
            path.write_bytes(entry.data)
            os.chown(path, entry.uid, entry.gid)
            path.chmod(entry.mode)
        self.run("systemctl", "restart", self.spec.service, timeout=180)
        self.wait_for_server()

    # -- how a client reaches it ---------------------------------------------------------

    @property
    def target(self) -> str:
        """The CLI target: root over SSH on this host's port."""
        return f"root@127.0.0.1:{self.ssh_port}"

    def host_key_fingerprint(self) -> str:
        """SHA256:… of this boot's host key, as ssh-keygen -lf prints it."""
        pub = self.root / "etc/ssh/ssh_host_ed25519_key.pub"
        return sh("ssh-keygen", "-lf", str(pub)).split()[1]

    def known_hosts_line(self) -> str:
        """A known_hosts line for this host's sshd."""
        kind, key = (self.root / "etc/ssh/ssh_host_ed25519_key.pub").read_text().split()[:2]
        return f"[127.0.0.1]:{self.ssh_port} {kind} {key}\n"


class LocalDebian:
    """This machine's own Debian 12 MariaDB 10.11 (SysV init script) through the test sshd.

    It answers like :class:`DebianHost`, so a lifecycle test runs the same on every host.
    """

    name = "bookworm"
    server_line = "10.11"
    flavour = "mariadb"
    manager = "sysv"
    service = "mariadb"

    def __init__(self, server: DebianMariaDB, sshd: SshServer) -> None:
        self.server = server
        self.sshd = sshd
        self.root = Path("/")
        self.client_key = sshd.client_key
        self._baseline = self.record()

    @property
    def target(self) -> str:
        """root over the test sshd."""
        return f"root@{self.sshd.host}:{self.sshd.port}"

    @property
    def instance_args(self) -> list[str]:
        """Other servers run here (private ones of other tests): name the Debian one."""
        return ["--instance", self.server.socket]

    def known_hosts_line(self) -> str:
        """The test sshd's known_hosts line."""
        return self.sshd.known_hosts_line()

    def sql(self, query: str) -> str:
        """One query as root over the socket."""
        return self.server.query(query).strip()

    def main_pid(self) -> int:
        """The server's pid (from its pid file)."""
        return int(Path("/run/mysqld/mysqld.pid").read_text().strip())

    def active(self) -> bool:
        """The init script's server answers."""
        return self.server.running()

    def record(self) -> dict[str, dict[str, Entry]]:
        """/etc/mysql byte for byte (MariaDB keeps no option file in its datadir)."""
        return {"etc": record_tree(ETC)}

    def differences(self) -> list[str]:
        """What differs from the baseline under /etc/mysql."""
        now = self.record()["etc"]
        base = self._baseline["etc"]
        return [f"etc: {n}" for n in sorted(set(base) | set(now)) if base.get(n) != now.get(n)]

    def put_back(self) -> None:
        """Restore /etc/mysql and restart through the init script."""
        self.server.ensure_pristine()


def put_back_if_changed(host: DebianHost | LocalDebian) -> str:
    """ "" when ``host`` is as found with its server up; else puts it back and says what was
    wrong (a byte changed under /etc/mysql or in the datadir's option files, the server down)."""
    changed, up = host.differences(), host.active()
    if not changed and up:
        return ""
    host.put_back()
    differ = "; ".join(changed) + " differ" if changed else ""
    return differ + ("" if up else " the server is down")
