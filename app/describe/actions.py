"""What an applier describes, as a value: files with their full new content, typed values.

Appliers only describe: each one's ``describe(changes, host) -> list[Action]`` (found in
:mod:`app.describe.registry` by target kind) returns :class:`Action` values, read from the
host but changing nothing. The preview is rendered from these Actions, the runner builds
the job's bundle from the same ones and the export writes them for a fleet; the job on the
target (:mod:`app.targetjob`) is the only code that makes the change. Values stay typed
(name, value, kind) all the way: the SQL the preview shows is spelled by the same function
the job spells it with (:func:`app.targetjob.values.set_global`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.words import sentence
from app.remote.transport import Transport, shell_line
from app.targetjob.values import persist_sql, set_global


class ApplyError(InnoTuneError):
    """A change cannot be made safely; nothing was written for it."""


def sha256(data: bytes | None) -> str | None:
    """Hex sha256 of ``data``, or None for an absent file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class FileWrite:
    """A file an applier writes: its content now (None: absent) and its full new content."""

    path: str
    before: bytes | None
    after: bytes
    mode: str  # octal, e.g. "0644"; for an existing file the mode it keeps
    owner: str  # "user:group", or "" to leave it to the writer
    purpose: str  # option_file, udev, sysctl
    note: str = ""
    read: bool = True  # False: no live host, so ``before`` is a guess (shown as new)

    @property
    def sha256_before(self) -> str | None:
        """The checksum the apply step compares against before it writes."""
        return sha256(self.before)

    @property
    def creates(self) -> bool:
        """True when the file does not exist yet."""
        return self.before is None

    def diff(self) -> str:
        """A unified diff from the current content to the new one."""
        from app.optionfiles.editing import unified_diff

        return unified_diff(self.before or b"", self.after, self.path)


@dataclass(frozen=True)
class Command:
    """A command as an argv list (never a shell string), and why it runs."""

    argv: tuple[str, ...]
    why: str
    sudo: bool = True

    def line(self) -> str:
        """The command quoted for a POSIX shell, exactly as it will run."""
        return shell_line(self.argv)


@dataclass(frozen=True)
class ValueChange:
    """A setting's current and new value, whether it applies live, and how it persists."""

    kind: str  # sysfs, sysctl, dynamic
    key: str
    current: str | None
    new: str
    live: bool
    persistent: str  # where it is kept across reboots/restarts, or why it is not
    device: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Persisted:
    """A value MySQL keeps in mysqld-auto.cnf that would beat the option file.

    ``how`` is ``reset`` (RESET PERSIST: the option file then wins) or ``persist``
    (SET PERSIST_ONLY InnoTune's ``value`` there too).
    """

    key: str
    value: str
    how: str

    def sql(self) -> str:
        """The statement the job runs for it (spelled on the target the same way)."""
        return persist_sql(self.key, self.value, self.how)


@dataclass(frozen=True)
class Action:
    """What one applier does (or would do) for one or more changes of the plan.

    Attributes:
        applier: optionfile, dynamic, sysfs, sysctl or udev.
        change_ids: the plan changes it covers.
        summary: one line for people.
        files: files written, each with its full new content.
        commands: commands the job runs, in order (after the live values).
        persisted: values in mysqld-auto.cnf (MySQL) to reset or persist after the live
            ones: a value persisted there would otherwise beat the option file.
        server_files: files the server itself rewrites because of those statements
            (mysqld-auto.cnf); snapshotted and put back byte for byte on rollback.
        values: current → new values of settings, typed: the job writes the sysfs and
            sysctl ones live (:func:`app.targetjob.values.live_write`) and sets the dynamic
            ones with SET GLOBAL (:attr:`statements`).
        option_lines: the ``[mysqld]`` settings the option files carry, key and value (also
            when the files could not be read: the export writes them into its drop-in).
        warnings: what would override or undo the change, each with its fix.
        unsupported: changes this host cannot take ("not supported on this host").
        restart_needed: the server must restart for the change to take effect.
        restart: how the job restarts the server (after every file is written).
    """

    applier: str
    change_ids: tuple[str, ...]
    summary: str
    files: tuple[FileWrite, ...] = ()
    commands: tuple[Command, ...] = ()
    persisted: tuple[Persisted, ...] = ()
    server_files: tuple[str, ...] = ()
    values: tuple[ValueChange, ...] = ()
    option_lines: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    restart_needed: bool = False
    restart: Command | None = None

    @property
    def statements(self) -> tuple[str, ...]:
        """The SET GLOBAL of each dynamic value, as the job spells and sends it."""
        return tuple(set_global(v.key, v.new) for v in self.values if v.kind == "dynamic")

    @property
    def persist_statements(self) -> tuple[str, ...]:
        """``RESET PERSIST``/``SET PERSIST_ONLY`` run after the live values (MySQL)."""
        return tuple(p.sql() for p in self.persisted)

    @property
    def empty(self) -> bool:
        """True when the action changes nothing."""
        return not (self.files or self.commands or self.persisted or self.values)


@dataclass
class Host:
    """What the describers work on: the facts, and the live connection when there is one.

    Without a ``transport`` (a preview from saved facts) describers describe what they can
    from the facts and say what they could not read.
    """

    facts: HostFacts
    transport: Transport | None = None
    session: Any = None  # app.mysql.session.Session when logged in
    sudo: bool = False
    # A value persisted in mysqld-auto.cnf (MySQL's SET PERSIST) beats the option files:
    # "reset" removes it (RESET PERSIST), "persist" persists InnoTune's value there too.
    persisted: str = "reset"
    # Where the server's own option files are read when not through ``transport``: a server
    # in a container reads the container's files (its engine's exec); the job still writes
    # on the host, into a bind-mounted directory.
    server_transport: Any = None

    @property
    def live(self) -> bool:
        """True when files and values can be read on the host."""
        return self.transport is not None


def read_file_or_none(host: Host, path: str) -> bytes | None:
    """The bytes of ``path`` on the host, or None when it does not exist.

    Raises:
        ApplyError: it exists but cannot be read (never decide on a file we could not read).
    """
    assert host.transport is not None
    script = 'if [ -e "$1" ]; then printf F; cat -- "$1"; else printf M; fi'
    result = host.transport.run(["sh", "-c", script, "sh", path], sudo=host.sudo)
    if not result.ok:
        raise ApplyError(
            sentence(f"Cannot read {path}: {result.err.strip() or 'permission denied'}"),
            "Give InnoTune sudo rights; nothing is changed from a file it could not read.",
        )
    if result.stdout.startswith(b"M"):
        return None
    return result.stdout[1:]


def stat_files(host: Host, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``path → (mode, "user:group")`` for the paths that exist (symlinks followed)."""
    if not paths or host.transport is None:
        return {}
    script = 'for p in "$@"; do [ -e "$p" ] && stat -L -c "%a %U:%G %n" -- "$p"; done; true'
    result = host.transport.run(["sh", "-c", script, "sh", *paths], sudo=host.sudo)
    found: dict[str, tuple[str, str]] = {}
    for line in result.out.splitlines():
        mode, _, rest = line.partition(" ")
        owner, _, path = rest.partition(" ")
        if mode and path:
            found[path] = (mode.rjust(4, "0"), owner)
    return found


def late_name(stem: str, ext: str, later: Sequence[str]) -> str:
    """A file name that sorts (byte order) after every name in ``later``.

    ``99-<stem><ext>`` when nothing sorts after it, else ``zz-``, ``zzz-``... so that the
    name still reads as InnoTune's. Falls back to the last candidate (the caller's
    override check then reports the file that still wins).
    """
    candidates = [f"99-{stem}{ext}"] + [f"{'z' * n}-{stem}{ext}" for n in range(2, 6)]
    for name in candidates:
        if all(name.encode() > other.encode() for other in later):
            return name
    return candidates[-1]


def restart_carried(actions: Sequence[Action]) -> list[str]:
    """Dynamic variables the option files also carry, by name.

    Whenever the job restarts the server it does not set these live first: the restart
    applies them from the option files, once (see the job's "not set live"). The preview
    and the job's bundle both take this list from here.
    """
    in_files = {i for a in actions if a.applier == "optionfile" for i in a.change_ids}
    return sorted(
        {
            v.key
            for a in actions
            if a.applier == "dynamic" and a.change_ids and set(a.change_ids) <= in_files
            for v in a.values
            if v.kind == "dynamic"
        }
    )
