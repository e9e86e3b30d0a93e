"""Relays that join a stream to the server's Unix socket on the target.

paramiko cannot forward a Unix socket, so InnoTune runs a tiny relay on the
target and speaks the MySQL protocol through its stdin/stdout. Run under sudo,
the relay connects as root, and MariaDB's unix_socket / MySQL's auth_socket then
log it in as the database root account with no password: the relay grants
sudo-level database access, so it is only used when sudo is.
"""

from __future__ import annotations

# Pumps bytes between stdin/stdout and the socket in argv[1] until either side closes.
PYTHON_RELAY = r"""
import os, select, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
i, o, f = sys.stdin.fileno(), sys.stdout.fileno(), s.fileno()
while True:
    r = select.select([i, f], [], [])[0]
    if i in r:
        d = os.read(i, 65536)
        if not d:
            break
        s.sendall(d)
    if f in r:
        d = s.recv(65536)
        if not d:
            break
        while d:
            d = d[os.write(o, d):]
"""

# Relay programs in order of preference; the first one the target has is used.
RELAYS = ("socat", "python3")


def relay_argv(kind: str, socket_path: str) -> list[str]:
    """The command line of relay ``kind`` for ``socket_path`` (an argv list, never a string)."""
    if kind == "socat":
        return ["socat", "-", f"UNIX-CONNECT:{socket_path}"]
    if kind == "python3":
        return ["python3", "-c", PYTHON_RELAY, socket_path]
    raise ValueError(f"unknown relay {kind!r}")
