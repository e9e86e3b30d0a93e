"""Whether InnoTune's option-file values win: a later file, the command line, mysqld-auto.cnf.

The server's reading is recomputed (on the would-be content before the job, on the files
after it), and where the server binary is on the host it is asked too (``<binary>
--verbose --help`` with the instance's own arguments). A value that would be beaten is
reported with its fix; it is never left silent.
"""

from __future__ import annotations

import re

from app.describe.actions import ApplyError, Host, Persisted
from app.domain.instance import ServerInstance
from app.optionfiles import parse_argv, resolve
from app.optionfiles.binary import BinaryAnswer, ask_binary, binary_present
from app.optionfiles.editing import SWITCHED_OFF_BY_SKIP
from app.optionfiles.serverview import ServerView, defaults_switches, read_view, user_home
from app.optionfiles.serverview import host_reader as _reader
from app.targetjob.values import parse_bool, same_value

VARIABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # a server variable InnoTune writes


def _where_argv_comes_from(instance: ServerInstance) -> str:
    if instance.started_by == "systemd" and instance.service:
        return f"the unit's ExecStart (systemctl edit {instance.service})"
    if instance.started_by == "sysv" and instance.service:
        return f"the init script /etc/init.d/{instance.service} or its defaults file"
    if instance.started_by == "mysqld_safe":
        return "the mysqld_safe command line or its [mysqld_safe] options"
    return "the command that starts the server"


def check_winners(
    view: ServerView, path: str, wanted: dict[str, str], *, before: ServerView | None = None
) -> list[str]:
    """A warning, with its fix, for each of ``wanted`` that InnoTune's ``path`` does not set.

    Args:
        view: the server's reading with InnoTune's file in place (or as it would be).
        path: InnoTune's file.
        wanted: option name → the value InnoTune writes.
        before: unused; reserved for naming what changed.
    """
    del before
    warnings = []
    for key, value in wanted.items():
        setting = view.settings.get(key)
        if setting is None:
            warnings.append(
                f"{key}: the server would not read InnoTune's line in {path} (no group it "
                "reads?) — the value would not change."
            )
            continue
        src = setting.source
        if src.kind == "file" and src.file == path:
            if not same_value(setting.value, value):
                warnings.append(f"{key}: {path} would give {setting.value}, not {value}.")
            continue
        shown = setting.value if setting.value is not None else "(on)"
        if src.kind == "file":
            fix = (
                f"Remove line {src.line} of {src.file} (or set it to {value} there): it is read "
                f"after {path}."
            )
        elif src.kind == "command line":
            fix = (
                f"Remove {setting.text} from {_where_argv_comes_from(view.instance)}: the "
                "command line beats every option file."
            )
        else:
            fix = (
                f"Run RESET PERSIST {key} (or SET PERSIST {key} = {value}): mysqld-auto.cnf "
                "beats the option files."
            )
        warnings.append(
            f"{key}: InnoTune writes {value} in {path}, but {src} sets {shown}, which wins. " + fix
        )
    return warnings


PERSISTED_CHOICES = ("reset", "persist")


def persisted_winners(view: ServerView, wanted: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The keys of ``wanted`` whose value comes from mysqld-auto.cnf: key → (file, value)."""
    found = {}
    for key in wanted:
        setting = view.settings.get(key)
        if setting is not None and setting.source.kind == "persisted":
            found[key] = (setting.source.file or "mysqld-auto.cnf", setting.value or "")
    return found


def persisted_value(key: str, value: str, choice: str) -> Persisted:
    """``reset`` (RESET PERSIST: the option file then wins) or ``persist`` InnoTune's value.

    PERSIST_ONLY writes mysqld-auto.cnf without touching the live value: the job sets that
    with SET GLOBAL (or the restart does), as for any other change.
    """
    if not VARIABLE_NAME.match(key):
        raise ApplyError(f"Not a server variable name InnoTune writes: {key!r}.")
    if choice not in PERSISTED_CHOICES:
        raise ApplyError(f"Unknown choice for persisted values: {choice!r}.")
    if choice == "persist" and not re.fullmatch(r"[A-Za-z0-9_.,/+-]*", value):
        raise ApplyError(f"{key}: InnoTune does not send the value {value!r}.")
    return Persisted(key, value, choice)


def persisted_note(
    persisted: dict[str, tuple[str, str]], wanted: dict[str, str], choice: str
) -> str:
    """The note on InnoTune's file: what mysqld-auto.cnf holds, and what the choice does there."""
    path = next(iter(persisted.values()))[0]
    items = ", ".join(f"{k} = {v}" for k, (_, v) in sorted(persisted.items()))
    if choice == "reset":
        what = "RESET PERSIST removes them there, so this file's values apply at every start"
    else:
        what = "SET PERSIST_ONLY writes InnoTune's values there too"
    return (
        f"{path} (SET PERSIST) holds {items}, which would beat this file; {what} "
        f"({path} is in the snapshot and is put back byte for byte on rollback)"
    )


def _blame(error: str, view: ServerView) -> str:
    """`` (file:line)`` of the last argument an error message of the server is about."""
    flat = error.replace("-", "_")
    where = ""
    for arg in view.reading.args:
        meaning = resolve(arg.text)
        said = arg.text.lstrip("-")
        about_it = said in error or (
            f"'{meaning.name}" in flat and (meaning.value is None or f"'{meaning.value}'" in error)
        )
        if about_it:
            where = f" ({arg.file}:{arg.line})"
    return where


def binary_warnings(
    answer: BinaryAnswer, wanted: dict[str, str], view: ServerView, known: list[str]
) -> list[str]:
    """The binary's view; keys already explained in ``known`` warnings are not repeated."""
    warnings = []
    for error in answer.errors:
        where = _blame(error, view)
        warnings.append(f"The server binary rejects the options{where}: {error}")
    if not answer.table:
        return warnings
    for key, value in wanted.items():
        if any(w.startswith(f"{key}:") for w in known):
            continue
        printed = answer.table.get(key)
        if key in SWITCHED_OFF_BY_SKIP and printed is not None and parse_bool(printed) is None:
            continue  # MySQL prints log-bin's file name there ("(No default value)"), not ON/OFF
        if printed is None:
            warnings.append(f"{key}: the server binary does not list it; check the plugin loads.")
        elif not same_value(printed, value):
            warnings.append(
                f"{key}: the server binary says it would be {printed}, not {value} "
                "(a value it rounds or rejects?)."
            )
    return warnings


def verify(host: Host, path: str, wanted: dict[str, str]) -> list[str]:
    """Re-read the files as the server does: does ``path`` give every value in ``wanted``?

    A later file, the command line or
    ``mysqld-auto.cnf`` that beats InnoTune's value yields a warning with its fix. Where
    the server binary is on the host it is asked too, with the instance's own arguments.

    Returns:
        The warnings; empty when InnoTune's values win.
    """
    server = host.facts.server
    assert server is not None and host.transport is not None
    instance = server.instance
    help_files = list(server.option_files)
    cmdline = parse_argv(instance.argv or (instance.binary,))
    have_binary = binary_present(host.transport, instance.binary)
    if have_binary:
        current = ask_binary(
            host.transport,
            instance.binary,
            [*defaults_switches(cmdline), *cmdline.checking_args()],
            sudo=host.sudo,
        )
        help_files = list(current.default_files) or help_files
    view = read_view(
        _reader(host.transport, host.sudo),
        instance,
        server.flavour,
        server.version,
        help_files=help_files,
        home=user_home(host.transport, instance.user),
        datadir=server.datadir,
    )
    warnings = check_winners(view, path, wanted)
    if have_binary:
        warnings += binary_warnings(current, wanted, view, warnings)
    return warnings
