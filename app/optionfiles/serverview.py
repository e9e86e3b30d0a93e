"""The server's view of its options: every file it reads, its command line, what wins.

Read as the instance itself reads them: its ``--defaults-file`` or the default search
order, its option groups, includes, the argv that beats the files, and MySQL's
``datadir/mysqld-auto.cnf`` (``SET PERSIST``), which beats both.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from app.domain.instance import ServerInstance
from app.optionfiles.effective import (
    CommandLine,
    Setting,
    effective,
    parse_argv,
    parse_persisted,
    resolve,
)
from app.optionfiles.readers import Reader, transport_reader
from app.optionfiles.reading import Arg, OptionFileError, Reading, read_config
from app.optionfiles.search import TopFile, search_order, server_groups
from app.remote.transport import Transport

_SECRET_NAME = re.compile(r"passw(or)?d|_auth$|secret|token|credential")


def host_reader(transport: Transport, sudo: bool) -> Reader:
    """A :data:`Reader` of the host's files through ``transport`` (under sudo when asked)."""
    # CommandResult is frozen; the reader's protocol declares plain attributes. Same shape.
    return transport_reader(cast(Any, transport), sudo=sudo)


@dataclass(frozen=True)
class ServerView:
    """Every option file the instance reads, its command line and the effective values."""

    instance: ServerInstance
    flavour: str
    version: str
    cmdline: CommandLine
    groups: tuple[str, ...]
    tops: tuple[TopFile, ...]
    home: str
    reading: Reading
    persisted: tuple[Arg, ...] | None
    persisted_path: str | None
    settings: dict[str, Setting]

    def file_args(self) -> list[str]:
        """The arguments the files give, in order (``my_print_defaults``)."""
        return [arg.text for arg in self.reading.args]

    def public_file_args(self) -> list[str]:
        """:meth:`file_args` without any that may hold a secret.

        These go on a command line (visible in ``ps``) when the binary is asked about the
        would-be files; a password or SST credential must never be put there, and none
        of them changes how the server reads a tuning variable.
        """
        return [a for a in self.file_args() if not _SECRET_NAME.search(resolve(a).name)]


def defaults_switches(cmdline: CommandLine) -> list[str]:
    """The instance's option-file switches, in the order the server wants them (first)."""
    if cmdline.no_defaults:
        return ["--no-defaults"]
    out = []
    if cmdline.defaults_file:
        out.append(f"--defaults-file={cmdline.defaults_file}")
    if cmdline.extra_file:
        out.append(f"--defaults-extra-file={cmdline.extra_file}")
    if cmdline.group_suffix:
        out.append(f"--defaults-group-suffix={cmdline.group_suffix}")
    return out


def user_home(transport: Transport, user: str) -> str:
    """The home directory of the server's OS user (for ``~/.my.cnf``), or ``~``."""
    if not user or not re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*", user):
        return "~"
    result = transport.run(["getent", "passwd", user])
    fields = result.out.strip().split(":")
    return fields[5] if result.ok and len(fields) > 5 and fields[5] else "~"


def read_view(
    reader: Reader,
    instance: ServerInstance,
    flavour: str,
    version: str,
    *,
    help_files: Sequence[str] = (),
    home: str = "~",
    datadir: str | None = None,
) -> ServerView:
    """Read the instance's option files as the server does.

    Raises:
        OptionFileError: the server would refuse its files, or one cannot be read.
    """
    cmdline = parse_argv(instance.argv or (instance.binary,))
    family = "mysql" if flavour in ("mysql", "percona") else "mariadb"
    groups = tuple(server_groups(family, version, cmdline.group_suffix or ""))
    # A --defaults-file in the facts but not in argv (a unit's ExecStart seen elsewhere).
    defaults_file = cmdline.defaults_file or instance.defaults_file
    if defaults_file and not cmdline.defaults_file and not cmdline.no_defaults:
        cmdline = dataclasses.replace(cmdline, defaults_file=defaults_file)
    files = [f for f in help_files if f != defaults_file]
    tops = tuple(
        search_order(
            family,
            defaults_file=cmdline.defaults_file,
            extra_file=cmdline.extra_file,
            no_defaults=cmdline.no_defaults,
            home=home,
            help_files=files or None,
        )
    )
    reading = read_config(reader, tops, groups, home=home)
    persisted: tuple[Arg, ...] | None = None
    persisted_path = None
    if family == "mysql" and datadir:
        persisted_path = posixpath.join(datadir, "mysqld-auto.cnf")
        try:
            node = reader(persisted_path)
        except OSError as exc:
            raise OptionFileError(
                f"Cannot read {persisted_path}: {exc.strerror or exc}.",
                "Give InnoTune sudo rights: SET PERSIST values there beat the option files.",
                path=persisted_path,
            ) from exc
        if node.kind == "file":
            persisted = tuple(parse_persisted(node.data, persisted_path))
    settings = effective(reading.args, argv=cmdline, persisted=persisted)
    return ServerView(
        instance=instance,
        flavour=flavour,
        version=version,
        cmdline=cmdline,
        groups=groups,
        tops=tops,
        home=home,
        reading=reading,
        persisted=persisted,
        persisted_path=persisted_path,
        settings=settings,
    )
