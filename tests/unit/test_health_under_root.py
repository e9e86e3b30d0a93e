"""A container's socket reached from the host through /proc/PID/root, its symlinks followed.

Debian's /var/run is an absolute symlink to /run: through /proc/PID/root the kernel would
resolve it against the host's root, and greet the host's own server (or none).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from app.targetjob.health import under_root


def test_an_absolute_symlink_stays_inside_the_containers_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "run" / "mysqld").mkdir(parents=True)
    (root / "var").mkdir()
    os.symlink("/run", root / "var" / "run")  # as in Debian's images
    os.symlink("../run/mysqld", root / "var" / "mysqld-rel")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(root / "run" / "mysqld" / "mysqld.sock"))
        found = under_root(str(root), "/var/run/mysqld/mysqld.sock")
        assert found == f"{root}/run/mysqld/mysqld.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            sock.listen(1)
            client.connect(found)  # the container's socket, not the host's
    finally:
        sock.close()
    assert under_root(str(root), "/var/mysqld-rel/x.sock") == f"{root}/run/mysqld/x.sock"
    assert under_root(str(root), "/no/such/./dir/../s.sock") == f"{root}/no/such/s.sock"
    # A loop of links ends instead of spinning.
    os.symlink("/loop", root / "loop")
    assert under_root(str(root), "/loop/s.sock").startswith(str(root))
