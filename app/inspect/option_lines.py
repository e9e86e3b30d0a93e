"""The option files the server reads, and the options their lines give it."""

from __future__ import annotations

from typing import Any, cast

from app.domain.instance import ServerInstance
from app.domain.serverfacts import OptionLine
from app.optionfiles import (
    TopFile,
    batch_reader,
    parse_argv,
    read_config,
    resolve,
    search_order,
    server_groups,
)
from app.remote.transport import Transport

# Where Debian, Ubuntu and the EL family keep their drop-in option files.
INCLUDE_DIRS = (
    "/etc/mysql/conf.d",
    "/etc/mysql/mariadb.conf.d",
    "/etc/mysql/mysql.conf.d",
    "/etc/my.cnf.d",
)


def option_tops(
    instance: ServerInstance, flavour: str, option_files: tuple[str, ...]
) -> list[TopFile]:
    """The files the server reads on its own, in order (the binary's list when known)."""
    cmdline = parse_argv(instance.argv or (instance.binary,))
    family = "mysql" if flavour in ("mysql", "percona") else "mariadb"
    defaults_file = cmdline.defaults_file or instance.defaults_file
    return list(
        search_order(
            family,
            defaults_file=defaults_file,
            extra_file=cmdline.extra_file,
            no_defaults=cmdline.no_defaults,
            home="~",
            help_files=[f for f in option_files if f != defaults_file] or None,
        )
    )


def read_option_lines(
    transport: Transport,
    instance: ServerInstance,
    flavour: str,
    version: str,
    option_files: tuple[str, ...],
    batch: bytes = b"",
) -> tuple[OptionLine, ...]:
    """The options the server's option files give it, each with its file and line.

    ``batch`` is the output of :func:`app.optionfiles.batch_argv` over the likely files, run
    earlier with other commands; a file it lacks is read on its own.

    Read as the server reads them (its groups, includes, ``!includedir``), without sudo: a
    file the login cannot read raises, and the caller records it as unknown.

    Raises:
        OptionFileError: a file cannot be read, or the server would refuse the files.
    """
    cmdline = parse_argv(instance.argv or (instance.binary,))
    family = "mysql" if flavour in ("mysql", "percona") else "mariadb"
    groups = server_groups(family, version, cmdline.group_suffix or "")
    tops = option_tops(instance, flavour, option_files)
    # CommandResult is frozen; the reader's protocol declares plain attributes. Same shape.
    reading = read_config(batch_reader(cast(Any, transport), batch), tops, groups)
    lines = []
    for arg in reading.args:
        meaning = resolve(arg.text)
        lines.append(
            OptionLine(
                name=meaning.name.replace("-", "_"),
                value=meaning.value,
                file=arg.file,
                line=arg.line,
                text=arg.text.lstrip("-"),
            )
        )
    return tuple(lines)
