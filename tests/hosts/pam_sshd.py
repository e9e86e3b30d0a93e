"""An sshd that logs in by keyboard-interactive (PAM) questions, not plain passwords.

PAM's pam_unix asks "Password: " (not echoed), as a one-time-code module would ask its own
question: the real thing for testing login questions end to end. Debian's PAM "sshd"
service is used as is; nothing under /etc is changed.
"""

from __future__ import annotations

from pathlib import Path

from tests.hosts.sshd import SshServer


def start_pam_sshd(servers: list[SshServer], workdir: Path) -> SshServer:
    """Start one in ``workdir`` (added to ``servers``, which the caller stops).

    Its ``workdir / "known_hosts"`` holds the server's key, for a client that must not
    be asked about it.
    """
    server = SshServer(workdir)
    server.password_authentication = False
    server.kbd_interactive = True
    servers.append(server)
    server.start()
    (workdir / "known_hosts").write_text(server.known_hosts_line())
    return server
