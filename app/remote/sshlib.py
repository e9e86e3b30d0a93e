"""paramiko, loaded the one way app/remote loads it: without invoke.

paramiko's config module imports invoke at once (~0.2 s of asyncio and unittest.mock),
though only ssh_config's `Match exec` needs it: paramiko loads with it hidden, and
:func:`app.remote.sshconfig.resolve_host` brings it in for a config that has such a line.
Only the SSH modules import this one, so a command on this computer loads no paramiko.
"""

import sys

if "paramiko" not in sys.modules and "invoke" not in sys.modules:
    sys.modules["invoke"] = None  # type: ignore[assignment]
    try:
        import paramiko.config  # noqa: F401
    finally:
        del sys.modules["invoke"]

import paramiko  # noqa: E402 - after invoke is hidden

__all__ = ["paramiko"]
