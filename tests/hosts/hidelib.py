"""Run a command as on a host that lacks one shared library (G.38: no libxcb-cursor0).

A private mount namespace (``unshare -m``, root) binds /dev/null over the library's file, so the
dynamic loader finds the name but cannot load it, as when the package is not installed; the
rest of the machine, and every other process, still sees the real file.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from tests.hosts.util import need, need_root

LIBDIRS = (Path("/usr/lib/x86_64-linux-gnu"), Path("/lib/x86_64-linux-gnu"), Path("/usr/lib64"))


def run_without_library(
    soname: str, argv: list[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``soname`` unloadable; stdin is /dev/null."""
    need_root()
    need(shutil.which("unshare") is not None, "unshare (util-linux) is not installed")
    found = [d / soname for d in LIBDIRS if (d / soname).exists()]
    need(bool(found), f"{soname} is not installed here, so it cannot be hidden")
    real = found[0].resolve()
    script = f"mount --bind /dev/null {shlex.quote(str(real))} && exec {shlex.join(argv)}"
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )
