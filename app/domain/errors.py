"""Errors every layer raises, each naming what is wrong and what to do about it."""

from __future__ import annotations


class InnoTuneError(Exception):
    """An error a person can act on: what went wrong, and what to do next.

    ``fix`` is worded for the command line (its flags); ``window_fix``, when the window
    offers another way (a box on the page, a dialog), is the same advice for the wizard,
    which shows it instead. No command-line flag is shown in the window.
    """

    def __init__(self, problem: str, fix: str = "", window_fix: str | None = None) -> None:
        super().__init__(problem if not fix else f"{problem} {fix}")
        self.problem = problem
        self.fix = fix
        self.window_fix = fix if window_fix is None else window_fix


class TargetError(InnoTuneError):
    """The target string or the connection options are malformed."""


class ConnectError(InnoTuneError):
    """The host could not be reached or would not let us in."""


class HostKeyUnknown(ConnectError):
    """The host offered a key we have never seen: the caller must ask the user.

    This is a question, not a failure: the UI shows the fingerprint and, if the
    user accepts it, connects again with the key trusted.
    """

    def __init__(self, host: str, key_type: str, fingerprint: str, key_line: str) -> None:
        super().__init__(
            f"The host key of {host} is not known: {key_type} {fingerprint}.",
            "Check this fingerprint with the server's administrator (ssh-keygen -lf "
            "/etc/ssh/ssh_host_*_key.pub on the server), then accept it.",
        )
        self.host = host
        self.key_type = key_type
        self.fingerprint = fingerprint
        self.key_line = key_line


class HostKeyChanged(ConnectError):
    """The host offered a key different from the one on record: never connect."""

    def __init__(self, host: str, known: str, offered: str) -> None:
        super().__init__(
            f"The host key of {host} has CHANGED: on record {known}, offered now {offered}. "
            "Someone may be intercepting the connection.",
            "Do not continue unless the server's administrator confirms the key was replaced; "
            "then remove the old line from your known-hosts file.",
        )
        self.host = host
        self.known = known
        self.offered = offered


class HostKeyRevoked(ConnectError):
    """The host offered a key marked @revoked in known_hosts."""


class AuthError(ConnectError):
    """The login was refused."""


class SudoError(InnoTuneError):
    """sudo is missing, refused, or wants a password we do not have."""


class CommandError(InnoTuneError):
    """A remote or local command failed."""

    def __init__(self, problem: str, fix: str = "", *, exit_status: int = -1, stderr: str = ""):
        super().__init__(problem, fix)
        self.exit_status = exit_status
        self.stderr = stderr


class CommandTimeout(CommandError):
    """A command ran past its deadline."""


class DatabaseError(InnoTuneError):
    """The database could not be reached or refused a query."""


class OnGuiThreadError(RuntimeError):
    """A blocking call was made on the GUI thread; it must run in a worker."""
