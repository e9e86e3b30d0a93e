"""A real OpenSSH server on 127.0.0.1 with generated keys and three kinds of user.

- ``root``: key login;
- ``innotune-pw``: key or password login, sudo with a password;
- ``innotune-np``: key login, sudo with NOPASSWD.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from app.practice.server import free_port
from tests.hosts.util import DROP_LOOP_MOUNTS, pid_alive, sh, shared_state, wait_port

SUDO_PW_USER = "innotune-pw"
SUDO_NP_USER = "innotune-np"
SUDOERS_FILE = Path("/etc/sudoers.d/innotune-tests")


# Several test sessions (developers, helpers, CI) may run at once on one machine. They share
# the accounts: the first creates them, later ones reuse their passwords, the last removes
# them. The state is root-only and outside the directories the leak scan reads.
USERS_STATE = Path("/var/lib/innotune-tests/users.json")


def _exists(user: str) -> bool:
    return subprocess.run(["id", user], capture_output=True).returncode == 0


@dataclass
class SshUsers:
    """The test accounts and their secrets (shared by the test sessions running now)."""

    pw_user: str = SUDO_PW_USER
    np_user: str = SUDO_NP_USER
    pw_password: str = field(default_factory=lambda: "pw-" + secrets.token_hex(12))
    np_password: str = field(default_factory=lambda: "np-" + secrets.token_hex(12))

    def create(self) -> None:
        """Make sure both accounts and their sudo rules exist; join the sessions using them."""
        with shared_state(USERS_STATE) as state:
            pids = [p for p in state.get("pids", []) if pid_alive(p)]  # type: ignore[attr-defined]
            shared = bool(pids) and all(_exists(u) for u in (self.pw_user, self.np_user))
            if shared and state.get("pw") and state.get("np"):
                self.pw_password, self.np_password = str(state["pw"]), str(state["np"])
            else:
                self._make_accounts()
            if os.getpid() not in pids:
                pids.append(os.getpid())
            state.update(pids=pids, pw=self.pw_password, np=self.np_password)

    def _make_accounts(self) -> None:
        for user, password in ((self.pw_user, self.pw_password), (self.np_user, self.np_password)):
            if not _exists(user):
                sh("useradd", "--create-home", "--shell", "/bin/bash", user)
            sh("chpasswd", input=f"{user}:{password}\n")
        rules = (
            f"{self.pw_user} ALL=(ALL:ALL) ALL\n"
            f"{self.np_user} ALL=(ALL:ALL) NOPASSWD: ALL\n"
            "Defaults:innotune-pw !lecture, timestamp_timeout=0\n"
        )
        tmp = SUDOERS_FILE.with_name(".innotune-tests.tmp")
        tmp.write_text(rules)
        tmp.chmod(0o440)
        sh("visudo", "-cf", str(tmp))
        tmp.rename(SUDOERS_FILE)

    def remove(self, leaving: int | None = None) -> None:
        """Leave; the last session using the accounts removes them and the sudo rules.

        ``leaving`` is the session that leaves (this one by default); ``0`` when none does
        and only the sessions that died are let go (tests/hosts/reaper.py).
        """
        leaving = os.getpid() if leaving is None else leaving
        with shared_state(USERS_STATE) as state:
            pids = [p for p in state.get("pids", []) if pid_alive(p) and p != leaving]  # type: ignore[attr-defined]
            if pids:
                state["pids"] = pids
                return
            state.clear()
            SUDOERS_FILE.unlink(missing_ok=True)
            for user in (self.pw_user, self.np_user):
                subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
                subprocess.run(["userdel", "--remove", user], capture_output=True)


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (children, grandchildren…), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class SshServer:
    """One sshd process with its own config, host key and authorized keys."""

    def __init__(self, workdir: Path, port: int | None = None, host_key: Path | None = None):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.host_key = host_key or self.workdir / "ssh_host_ed25519_key"
        self.client_key = self.workdir / "client_ed25519"
        # sshd reads authorized keys as the user logging in, and pytest's temp tree is
        # root-only, so this one file lives in a world-readable directory of its own.
        self.keys_dir = Path(f"/run/innotune-tests-sshd-{self.port}")
        self.authorized_keys = self.keys_dir / "authorized_keys"
        self.config = self.workdir / "sshd_config"
        self.log = self.workdir / "sshd.log"
        self.extra_config = ""
        # sshd takes the first value of a keyword, so these two cannot be overridden
        # through extra_config. Keyboard-interactive goes through PAM's "sshd" service
        # (pam_unix asks "Password: "): a real prompt, with nothing in /etc/pam.d changed.
        self.password_authentication = True
        self.kbd_interactive = False
        # Programs to hide from every session of this sshd (a mount namespace bind-mounts
        # /dev/null over them), to test hosts that lack, say, socat.
        self.hide_programs: list[str] = []
        self._proc: subprocess.Popen[bytes] | None = None

    def prepare(self) -> None:
        """Generate the keys and the config."""
        if not self.host_key.exists():
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.host_key))
        if not self.client_key.exists():
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.client_key))
        self.keys_dir.mkdir(mode=0o755, exist_ok=True)
        self.authorized_keys.write_text(Path(f"{self.client_key}.pub").read_text())
        self.authorized_keys.chmod(0o644)
        self.config.write_text(
            f"Port {self.port}\n"
            f"ListenAddress {self.host}\n"
            f"HostKey {self.host_key}\n"
            f"PidFile {self.workdir / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.authorized_keys}\n"
            "PermitRootLogin prohibit-password\n"
            f"PasswordAuthentication {'yes' if self.password_authentication else 'no'}\n"
            f"KbdInteractiveAuthentication {'yes' if self.kbd_interactive else 'no'}\n"
            "UsePAM yes\n"
            "StrictModes no\n"
            "AllowTcpForwarding yes\n"
            "MaxStartups 100\n"
            "Subsystem sftp internal-sftp\n"
            "LogLevel VERBOSE\n" + self.extra_config
        )

    def start(self) -> None:
        """Start sshd in the foreground of its own process and wait for its port."""
        self.prepare()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        sh("/usr/sbin/sshd", "-t", "-f", str(self.config))
        with open(self.log, "ab") as log:
            argv = ["/usr/sbin/sshd", "-D", "-e", "-f", str(self.config)]
            if self.hide_programs:
                masks = " && ".join(
                    f"mount --bind /dev/null {shlex.quote(p)}" for p in self.hide_programs
                )
                argv = [
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-c",
                    f"{DROP_LOOP_MOUNTS}; {masks} && exec {shlex.join(argv)}",
                ]
            self._proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        wait_port(self.host, self.port)

    def stop(self) -> None:
        """Stop sshd and every session it started."""
        self.authorized_keys.unlink(missing_ok=True)
        if self.keys_dir.exists():
            self.keys_dir.rmdir()
        if self._proc is None:
            return
        # Per-connection sshd processes leave the process group (setsid), so find every
        # descendant first: once the listener dies they are re-parented and lost from view.
        family = descendants(self._proc.pid)
        try:
            os.killpg(self._proc.pid, 15)
        except ProcessLookupError:
            pass
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 15)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, 9)
            self._proc.wait(timeout=10)
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        self._proc = None

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes of this server (not the listener itself)."""
        if self._proc is None:
            return []
        found = []
        for pid in descendants(self._proc.pid):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                    found.append(pid)
            except OSError:
                continue
        return found

    @property
    def running(self) -> bool:
        """True while the sshd process runs."""
        return self._proc is not None and self._proc.poll() is None

    def host_key_fingerprint(self) -> str:
        """The host key's fingerprint exactly as ``ssh-keygen -lf`` prints it (SHA256:...)."""
        return sh("ssh-keygen", "-lf", f"{self.host_key}.pub").split()[1]

    def known_hosts_line(self) -> str:
        """A known_hosts line for this server."""
        key = Path(f"{self.host_key}.pub").read_text().split()
        return f"[{self.host}]:{self.port} {key[0]} {key[1]}\n"
