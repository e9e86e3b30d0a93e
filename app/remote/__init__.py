"""Transports: run commands and move files on a target (the only paramiko user)."""

import sys as _sys

# paramiko's config module imports invoke at once (~0.2 s of asyncio and unittest.mock),
# though only ssh_config's `Match exec` needs it: paramiko loads with it hidden, and
# :func:`app.remote.sshconfig.resolve_host` brings it in for a config that has such a line.
if "paramiko" not in _sys.modules and "invoke" not in _sys.modules:
    _sys.modules["invoke"] = None  # type: ignore[assignment]
    try:
        import paramiko.config  # noqa: F401
    except ImportError:  # no paramiko (this computer's transport alone needs none)
        pass
    finally:
        del _sys.modules["invoke"]
