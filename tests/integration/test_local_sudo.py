"""LocalTransport's sudo as a non-root user: the password goes to sudo only, never the command."""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.sshd import SshUsers

ROOT = Path(__file__).parents[2]

SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from app.domain.errors import SudoError
from app.remote.local import LocalTransport
password = sys.stdin.readline().rstrip("\\n")
transport = LocalTransport(sudo_password=password)
try:
    result = transport.run(["cat"], sudo=True, input=b"the-data")
    print("OUT:" + result.out + "|ERR:" + result.err.strip())
except SudoError as exc:
    print("SUDOERROR:" + exc.problem)
"""


@pytest.fixture(scope="module")
def readable_copy() -> Iterator[Path]:
    """The package copied where the unprivileged test users can read it."""
    base = Path(tempfile.mkdtemp(prefix="innotune-local-sudo-"))
    base.chmod(0o755)
    shutil.copytree(ROOT / "app", base / "app", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["chmod", "-R", "a+rX", str(base)], check=True)
    yield base
    shutil.rmtree(base)


def _as_user(user: str, password: str, base: Path) -> str:
    proc = subprocess.run(
        ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", SCRIPT, str(base)],
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_nopasswd_user_given_a_password_never_sends_it(
    ssh_users: SshUsers, readable_copy: Path
) -> None:
    out = _as_user(ssh_users.np_user, ssh_users.np_password, readable_copy)
    assert out.startswith("OUT:the-data|")
    assert ssh_users.np_password not in out


def test_password_user_right_and_wrong(ssh_users: SshUsers, readable_copy: Path) -> None:
    out = _as_user(ssh_users.pw_user, ssh_users.pw_password, readable_copy)
    assert out.startswith("OUT:the-data|"), out
    assert ssh_users.pw_password not in out
    wrong = _as_user(ssh_users.pw_user, "not-the-password", readable_copy)
    assert wrong.startswith("SUDOERROR:"), wrong


def test_user_without_sudo_rights_is_told_so(readable_copy: Path) -> None:
    user, password = "innotune-ns", "ns-" + secrets.token_hex(8)
    subprocess.run(["useradd", "--create-home", user], check=True, capture_output=True)
    try:
        subprocess.run(["chpasswd"], input=f"{user}:{password}\n", text=True, check=True)
        out = _as_user(user, password, readable_copy)
        assert out.startswith("SUDOERROR:This user may not use sudo"), out
    finally:
        subprocess.run(["userdel", "--remove", user], capture_output=True)
