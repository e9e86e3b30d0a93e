"""The frozen program (``make dist``) runs: --version, --self-test, inspect over SSH, install.

Marked ``dist``: plain ``pytest`` deselects these; ``make test-dist`` builds the bundle when the
sources are newer and runs them. INNOTUNE_FROZEN names another build to test.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from app import __version__
from tests.hosts.debian_mariadb import DebianMariaDB
from tests.hosts.hidelib import run_without_library
from tests.hosts.sshd import SshServer
from tests.hosts.util import need

pytestmark = pytest.mark.dist

ROOT = Path(__file__).resolve().parents[2]
FROZEN = Path(os.environ.get("INNOTUNE_FROZEN", ROOT / "dist" / "innotune" / "innotune"))


def _tarball() -> Path:
    found = sorted((ROOT / "dist").glob(f"innotune-{__version__}-linux-*.tar.gz"))
    need(bool(found), "no tarball in dist/: run make dist")
    return found[-1]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: a private HOME and data directory, no display unless given."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    return env


def _run(
    argv: list[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def frozen() -> Path:
    need(FROZEN.is_file() and os.access(FROZEN, os.X_OK), f"no frozen build at {FROZEN}: make dist")
    return FROZEN


def test_version(frozen: Path, tmp_path: Path) -> None:
    out = _run([str(frozen), "--version"], _env(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"InnoTune {__version__}"


def test_self_test_offscreen(frozen: Path, tmp_path: Path) -> None:
    out = _run([str(frozen), "--self-test"], _env(tmp_path, QT_QPA_PLATFORM="offscreen"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(frozen," in out.stdout
    assert "platform offscreen" in out.stdout
    pages = "Connect, Inspect, Recommendation, Trade-offs, Preview, Apply, Verify, Done"
    assert f"pages: {pages}" in out.stdout
    assert "paramiko 5" in out.stdout or "paramiko " in out.stdout
    assert out.stdout.rstrip().endswith("self-test passed")
    # The self-test hides the window rather than closing it: no geometry saved as the user's.
    assert not list((tmp_path / "config").rglob("*.conf"))


def test_self_test_under_xvfb_uses_the_xcb_plugin(frozen: Path, tmp_path: Path) -> None:
    xvfb = shutil.which("xvfb-run")
    need(xvfb is not None, "xvfb-run is not installed (apt install xvfb xauth)")
    out = _run(
        [str(xvfb), "-a", str(frozen), "--self-test"],
        _env(tmp_path, QT_QPA_PLATFORM="xcb"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "platform xcb" in out.stdout


def test_runs_without_system_libxcb_cursor(frozen: Path, tmp_path: Path) -> None:
    # G.38: a desktop without libxcb-cursor0. The bundle carries its own copy (PyInstaller
    # collects the xcb helper libraries, not libxcb itself), so the window still opens.
    xvfb = shutil.which("xvfb-run")
    need(xvfb is not None, "xvfb-run is not installed (apt install xvfb xauth)")
    env = _env(tmp_path, QT_QPA_PLATFORM="xcb")
    out = run_without_library(
        "libxcb-cursor.so.0", [str(xvfb), "-a", str(frozen), "--self-test"], env
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "platform xcb" in out.stdout


def test_missing_system_library_is_named_before_qt_starts(frozen: Path, tmp_path: Path) -> None:
    # libEGL is never bundled (it must match the system's GPU driver).
    env = _env(tmp_path, QT_QPA_PLATFORM="xcb", DISPLAY=":97")
    out = run_without_library("libEGL.so.1", [str(frozen)], env)
    assert out.returncode == 3, out.stderr
    assert "these system libraries are missing:\n  - libEGL.so.1\n" in out.stderr
    assert "sudo apt install libegl1\n" in out.stderr
    assert "Could not load the Qt platform plugin" not in out.stderr


def test_inspect_over_ssh_from_the_frozen_program(
    frozen: Path, sshd: SshServer, debian_mariadb: DebianMariaDB, tmp_path: Path
) -> None:
    kh = tmp_path / "kh"
    kh.write_text(sshd.known_hosts_line())
    out = _run(
        [
            str(frozen),
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
        _env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    version = debian_mariadb.query("SELECT @@version").strip()
    assert f"Server: {version} (mariadb)" in out.stdout
    assert "started by a SysV init script (mariadb)" in out.stdout
    assert "Write path of /var/lib/mysql:" in out.stdout
    # Logs go to the platform's data directory (QStandardPaths), here under XDG_DATA_HOME.
    assert list((tmp_path / "xdg" / "InnoTune" / "logs").iterdir())


def test_apply_job_source_travels_as_source(frozen: Path) -> None:
    # The apply runner zips the job package's own source files and ships them to the target.
    package = ROOT / "app" / "targetjob"
    for source in sorted(package.glob("*.py")):
        bundled = frozen.parent / "_internal" / "app" / "targetjob" / source.name
        ast.parse(bundled.read_bytes())  # source, not bytecode
        if frozen == ROOT / "dist" / "innotune" / "innotune":  # built from this checkout
            assert bundled.read_bytes() == source.read_bytes()


def test_bundle_leaves_out_unused_qt(frozen: Path) -> None:
    internal = frozen.parent / "_internal"
    names = {p.name for p in internal.rglob("*")}
    for unused in (
        "libQt6WebEngineCore.so.6",
        "libQt6Qml.so.6",
        "libQt6Quick.so.6",
        "libQt6Pdf.so.6",
        "libQt6Multimedia.so.6",
        "libQt63DCore.so.6",
        "libgtk-3.so.0",  # the GTK theme plug-in's, dropped with it
        "QtOpenGL.abi3.so",  # a binding InnoTune never imports
        "QtNetwork.abi3.so",
    ):
        assert unused not in names
    for used in ("libQt6Charts.so.6", "libqxcb.so", "libqoffscreen.so", "libqwayland.so"):
        assert used in names
    assert not list(internal.rglob("PySide6/Qt/translations/*.qm"))


def _mib(path: Path) -> float:
    """Bytes of the files under ``path`` (links not followed), in MiB."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.lstat().st_size for p in files if not p.is_symlink()) / 2**20


def test_the_download_is_small(frozen: Path) -> None:
    """The bundle users download: at most 150 MiB unpacked and 70 MiB as the archive."""
    unpacked = _mib(frozen.parent)
    assert 20 < unpacked <= 150, f"{unpacked:.0f} MiB unpacked"
    packed = _mib(_tarball())
    assert packed <= 70, f"{packed:.0f} MiB packed"


def test_tarball_installs_for_the_user_and_system_wide(frozen: Path, tmp_path: Path) -> None:
    tarball = _tarball()
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path / "unpacked", filter="tar")
    (top,) = (tmp_path / "unpacked").iterdir()
    home = tmp_path / "home"
    home.mkdir()
    env = _env(tmp_path)
    env.pop("XDG_DATA_HOME")
    user = _run(["sh", str(top / "install.sh")], env)
    assert user.returncode == 0, user.stderr
    installed = home / ".local" / "opt" / "innotune" / "innotune"
    link = home / ".local" / "bin" / "innotune"
    assert link.resolve() == installed
    desktop = home / ".local" / "share" / "applications" / "innotune.desktop"
    assert f"Exec={installed}\n" in desktop.read_text()
    assert (home / ".local/share/icons/hicolor/48x48/apps/innotune.png").is_file()
    assert (home / ".local/share/icons/hicolor/scalable/apps/innotune.svg").is_file()
    if shutil.which("desktop-file-validate"):
        check = _run(["desktop-file-validate", str(desktop)], env)
        assert check.returncode == 0, check.stdout + check.stderr
    version = _run([str(link), "--version"], env)
    assert version.stdout.strip() == f"InnoTune {__version__}"

    removed = _run(["sh", str(top / "install.sh"), "--uninstall"], env)
    assert removed.returncode == 0, removed.stderr
    assert not installed.exists() and not link.exists() and not desktop.exists()

    root = tmp_path / "root"
    system = _run(["sh", str(top / "install.sh"), "--system"], dict(env, DESTDIR=str(root)))
    assert system.returncode == 0, system.stderr
    assert os.readlink(root / "usr/local/bin/innotune") == "/opt/innotune/innotune"
    assert (root / "opt/innotune/innotune").is_file()
    entry = (root / "usr/share/applications/innotune.desktop").read_text()
    assert "Exec=/opt/innotune/innotune\n" in entry
    assert (root / "usr/share/icons/hicolor/256x256/apps/innotune.png").is_file()
