"""Option files: read them as the server does, write InnoTune's settings, prove they win.

Where the settings go (house style, do 3):

* into a drop-in in the include directory the server reads **last**, under a name that
  sorts after every file there that sets the same keys (``99-innotune.cnf``, else
  ``zz-innotune.cnf``...);
* with no include directory, into the main file, touching only the lines that change
  (:func:`app.optionfiles.set_option`); a file holding a password is never rewritten
  (a later top-level file is created instead, or the change is refused).

On the would-be content (the job on the target writes it) the effective values are
recomputed, and where the server binary is on the host it is asked too
(``<binary> --verbose --help`` with the instance's own arguments). A later file,
``mysqld-auto.cnf`` or a command-line argument that would beat InnoTune's value is
reported with its fix; it is never left silent.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.describe.actions import (
    Action,
    ApplyError,
    Command,
    FileWrite,
    Host,
    Persisted,
    late_name,
    read_file_or_none,
    stat_files,
)
from app.domain.container import Container
from app.domain.instance import ServerInstance
from app.domain.plan import Change
from app.optionfiles import (
    Node,
    OptionFileError,
    Reader,
    holds_secrets,
    parse,
    parse_argv,
    remove_option_line,
    render,
    resolve,
    set_option,
    set_server_option,
)
from app.optionfiles.binary import BinaryAnswer, ask_binary, binary_present
from app.optionfiles.editing import SWITCHED_OFF_BY_SKIP
from app.optionfiles.serverview import ServerView, defaults_switches, read_view, user_home
from app.optionfiles.serverview import host_reader as _reader
from app.targetjob.values import parse_bool, same_value

GROUP = "mysqld"  # read by every MySQL and MariaDB server
REMOVED_NOTE = "obsolete lines removed"  # the note of a file InnoTune only removed lines from
STEM = "innotune"
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


# -- writing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Destination:
    """Where InnoTune's settings go."""

    path: str
    kind: str  # drop-in or main
    why: str


def _overlay(reader: Reader, path: str, data: bytes) -> Reader:
    """``reader`` as it would be with ``path`` holding ``data``."""
    directory = posixpath.dirname(path)
    name = posixpath.basename(path)

    def read(p: str) -> Node:
        if p == path:
            return Node("file", data=data)
        node = reader(p)
        if node.kind == "dir" and (p.rstrip("/") or "/") == directory and name not in node.names:
            return dataclasses.replace(node, names=(*node.names, name))
        return node

    return read


def _caching(reader: Reader) -> Reader:
    cache: dict[str, Node] = {}

    def read(p: str) -> Node:
        if p not in cache:
            cache[p] = reader(p)
        return cache[p]

    return read


def _key_of(text: str) -> str:
    return resolve(text).name


def not_durable(container: Container, where: str) -> ApplyError:
    """The refusal for a file only the container's own layer would keep."""
    return ApplyError(
        f"The container {container.name} has no configuration directory kept on the host "
        f"(a mounted host directory or volume; {where}): a file written inside the container "
        "is lost when the container is recreated, so InnoTune does not write one there.",
        "Export the durable way and apply it when you choose: innotune export TARGET "
        f"--instance {container.name} --compose DIR writes a compose override that mounts "
        "InnoTune's file from the host (and the same settings as options of the server's "
        "command).",
    )


def choose_destination(
    view: ServerView, reader: Reader, keys: Sequence[str], container: Container | None = None
) -> Destination:
    """The drop-in in the directory read last, or the main file; see the module docstring.

    In a container: the drop-in in the directory read last among those a host directory is
    mounted on (a file there is kept when the container is recreated).

    Raises:
        ApplyError: no file can take the settings without rewriting a file with secrets, or
            (in a container) none is on a mounted host directory.
    """
    wanted = set(keys)
    dirs = [d.rstrip("/") or "/" for d in view.reading.directories]
    mounted = ""
    if container is not None:
        dirs = [d for d in dirs if container.bind_for(d) is not None]
        if not dirs:
            read = ", ".join(view.reading.directories) or "no include directory"
            raise not_durable(container, f"it reads {read}")
        bind = container.bind_for(dirs[-1])
        assert bind is not None
        mounted = f"; {bind.words} is mounted there, so it is kept"
    if dirs:
        last = dirs[-1]
        names = [n for n in reader(last).names if n.endswith(".cnf")]
        setting_same = sorted(
            {
                posixpath.basename(a.file)
                for a in view.reading.args
                if posixpath.dirname(a.file) == last and _key_of(a.text) in wanted
            }
        )
        ours = sorted(n for n in names if STEM in n)
        mine = [n for n in ours if all(n.encode() > o.encode() for o in setting_same if o != n)]
        name = mine[-1] if mine else late_name(STEM, ".cnf", setting_same)
        later = ", ".join(setting_same)
        which = "read last of those mounted from the host" if container else "the server reads last"
        why = f"the drop-in directory {which} ({last})" + (
            f"; named to sort after {later}, which set the same options" if later else ""
        )
        return Destination(f"{last}/{name}", "drop-in", why + mounted)
    existing = [t.path for t in view.tops if t.path in view.reading.parsed]
    home = view.home.rstrip("/")
    global_tops = [
        t.path
        for t in view.tops
        if not t.path.startswith("~") and not (home not in ("", "~") and t.path.startswith(home))
    ]
    candidates = [p for p in existing if p in global_tops]
    if view.cmdline.defaults_file:
        candidates = [view.cmdline.defaults_file]
    if not candidates and global_tops:
        return Destination(global_tops[0], "main", "no option file exists yet; creating it")
    if not candidates:
        raise ApplyError(
            "The server reads no option file InnoTune could write (it runs with --no-defaults).",
            "Set the values on the server's command line instead.",
        )
    main = candidates[-1]
    parsed = view.reading.parsed.get(main)
    if parsed is not None and holds_secrets(parsed):
        after = global_tops[global_tops.index(main) + 1 :] if main in global_tops else []
        free = [p for p in after if p not in view.reading.parsed]
        if free and not view.cmdline.defaults_file:
            return Destination(
                free[0],
                "main",
                f"{main} holds a password, so it is not rewritten; {free[0]} is read after it",
            )
        raise ApplyError(
            f"{main} holds a password and has no include directory, so InnoTune will not "
            "rewrite it.",
            f"Add '!includedir <dir>' at the end of {main} yourself (or move the password to "
            "the client's own ~/.my.cnf), then preview again.",
        )
    return Destination(main, "main", "no include directory: the main file, only changed lines")


def _new_file_attrs(host: Host, view: ServerView, dest: Destination) -> tuple[str, str]:
    """Mode and owner for a new file: those of its neighbours, never world-writable."""
    directory = posixpath.dirname(dest.path)
    neighbours = sorted(
        {f for f in view.reading.parsed if posixpath.dirname(f) == directory and f != dest.path}
    )
    if not neighbours:
        neighbours = [t.path for t in view.tops if t.path in view.reading.parsed][:1]
    found = stat_files(host, neighbours)
    if not found:
        return "0644", ""
    counts: dict[tuple[str, str], int] = {}
    for attrs in found.values():
        counts[attrs] = counts.get(attrs, 0) + 1
    mode, owner = max(counts, key=lambda k: counts[k])
    mode = f"{int(mode, 8) & ~0o002 & 0o7777:04o}"
    return mode, owner


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
    if not _KEY.match(key):
        raise ApplyError(f"Not a server variable name InnoTune writes: {key!r}.")
    if choice not in PERSISTED_CHOICES:
        raise ApplyError(f"Unknown choice for persisted values: {choice!r}.")
    if choice == "persist" and not re.fullmatch(r"[A-Za-z0-9_.,/+-]*", value):
        raise ApplyError(f"{key}: InnoTune does not send the value {value!r}.")
    return Persisted(key, value, choice)


def _persisted_note(
    persisted: dict[str, tuple[str, str]], wanted: dict[str, str], choice: str
) -> str:
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


@dataclass(frozen=True)
class _Planned:
    action: Action
    view: ServerView | None
    reader: Reader | None
    wanted: dict[str, str]
    help_files: tuple[str, ...] = ()


def _offline(changes: Sequence[Change]) -> Action:
    keys = ", ".join(c.key for c in changes)
    return Action(
        applier="optionfile",
        change_ids=tuple(c.id for c in changes),
        summary="option files not read: no live connection",
        unsupported=(
            "Option-file changes cannot be previewed from saved facts: InnoTune must read the "
            f"files the server reads to show the diff ({keys}). Give a TARGET to preview them.",
        ),
        restart_needed=any(c.target == "option_file" for c in changes),
        option_lines=tuple(
            (c.key, c.proposed) for c in changes if c.target in ("option_file", "dynamic")
        ),
    )


def _line_of(change: Change) -> int:
    """The line number an ``option_remove`` change is about (its id ends in ``:LINE``)."""
    try:
        return int(change.id.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise ApplyError(f"{change.id}: no line number in a line removal.") from None


def _remove_lines(
    removals: Sequence[Change], host: Host
) -> tuple[dict[str, tuple[bytes, bytes, tuple[str, str]]], list[str], list[Change]]:
    """Each file's bytes before and after removing the lines; what could not be removed.

    Returns:
        path -> (before, after, (mode, owner)); the reasons for lines left in place; the
        removals done.
    """
    edits: dict[str, tuple[bytes, bytes, tuple[str, str]]] = {}
    unsupported: list[str] = []
    done: list[Change] = []
    by_path: dict[str, list[Change]] = {}
    for change in removals:
        by_path.setdefault(change.path or "", []).append(change)
    for path, group in by_path.items():
        if not path.startswith("/"):
            unsupported.extend(f"{c.id}: no option file named." for c in group)
            continue
        before = read_file_or_none(host, path)
        if before is None:
            unsupported.extend(
                f"{c.id}: {path} no longer exists; nothing to remove." for c in group
            )
            continue
        option_file = parse(before, path)
        if holds_secrets(option_file):
            unsupported.extend(
                f"{path} holds a password, so InnoTune does not rewrite it: delete line "
                f"{_line_of(c)} ({c.current}) yourself."
                for c in group
            )
            continue
        # From the last line up, so the line numbers of the others stay as read.
        for change in sorted(group, key=_line_of, reverse=True):
            try:
                option_file = remove_option_line(option_file, _line_of(change), change.key)
            except ValueError as exc:
                unsupported.append(f"{exc}; the file changed since the inspection: plan again.")
                continue
            done.append(change)
        after = render(option_file)
        if after != before:
            stats = stat_files(host, [path])
            edits[path] = (before, after, stats.get(path, ("0644", "")))
    return edits, unsupported, done


def _removal_action(removals: Sequence[Change], host: Host) -> _Planned:
    """Only lines to remove: no drop-in, no restart."""
    edits, unsupported, done = _remove_lines(removals, host)
    files = tuple(
        FileWrite(path, before, after, mode, owner, "option_file", note=REMOVED_NOTE)
        for path, (before, after, (mode, owner)) in edits.items()
    )
    summary = "remove " + ", ".join(f"{c.key} ({c.path}:{_line_of(c)})" for c in done)
    return _Planned(
        Action(
            applier="optionfile",
            change_ids=tuple(c.id for c in done),
            summary=summary if done else "no option-file lines removed",
            files=files,
            unsupported=tuple(unsupported),
        ),
        None,
        None,
        {},
    )


def _plan(changes: Sequence[Change], host: Host, container: Container | None = None) -> _Planned:
    removals = [c for c in changes if c.target == "option_remove"]
    changes = [c for c in changes if c.target in ("option_file", "dynamic")]
    ids = tuple(c.id for c in changes)
    if not changes and not removals:
        return _Planned(Action("optionfile", ids, "no option-file changes"), None, None, {})
    if not host.live:  # nothing is read: the facts' server is not needed
        return _Planned(_offline([*changes, *removals]), None, None, {})
    server = host.facts.server
    if server is None:
        raise ApplyError("The facts hold no server; option files cannot be planned.")
    if not changes:
        return _removal_action(removals, host)
    assert host.transport is not None
    transport = host.transport
    instance = server.instance
    bad = [c.key for c in changes if not _KEY.match(c.key)]
    if bad:
        raise ApplyError(f"Not a server variable name InnoTune writes: {', '.join(bad)}.")
    edits, removal_notes, removed = _remove_lines(removals, host)
    reader = _caching(_reader(transport, host.sudo))
    for path, (_, after_removal, _) in edits.items():
        reader = _caching(_overlay(reader, path, after_removal))
    have_binary = binary_present(transport, instance.binary)
    home = user_home(transport, instance.user)
    help_files = list(server.option_files)
    cmdline = parse_argv(instance.argv or (instance.binary,))
    current: BinaryAnswer | None = None
    if have_binary:
        current = ask_binary(
            transport,
            instance.binary,
            [*defaults_switches(cmdline), *cmdline.checking_args()],
            sudo=host.sudo,
        )
        help_files = list(current.default_files) or help_files
    try:
        view = read_view(
            reader,
            instance,
            server.flavour,
            server.version,
            help_files=help_files,
            home=home,
            datadir=server.datadir,
        )
    except OptionFileError as exc:
        raise ApplyError(
            f"InnoTune will not write option files: {exc.problem}",
            exc.fix
            or "Fix the file first; nothing is written from a file InnoTune could not fully read.",
        ) from exc
    unsupported: list[str] = []
    accepted: list[Change] = []
    known = current.table if current is not None and current.table else None
    if current is not None and known is None:
        # The current files make the binary fail: ask it with no files for what it knows.
        known = ask_binary(transport, instance.binary, ["--no-defaults"], sudo=host.sudo).table
        known = known or None
    for change in changes:
        if known is not None and change.key not in known:
            unsupported.append(
                f"{change.key}: {instance.binary} does not know this variable; not written."
            )
        else:
            accepted.append(change)
    dest = choose_destination(view, reader, [c.key for c in accepted], container)
    before = read_file_or_none(host, dest.path)
    start = edits[dest.path][1] if dest.path in edits else before
    option_file = parse(start or b"", dest.path)
    if before is not None and holds_secrets(option_file):
        raise ApplyError(
            f"{dest.path} holds a password; InnoTune never rewrites such a file.",
            "Move the password to the client's own option file, then preview again.",
        )
    try:
        for change in accepted:
            # set_option rewrites an existing line for the same option in place, whatever
            # its spelling; the key below is only used for a new line.
            if change.key in SWITCHED_OFF_BY_SKIP:  # skip-log-bin: every server knows it
                option_file = set_server_option(option_file, GROUP, change.key, change.proposed)
                continue
            key = change.key if known is not None else f"loose-{change.key}"
            option_file = set_option(option_file, GROUP, key, change.proposed)
    except (OptionFileError, ValueError) as exc:
        raise ApplyError(f"Cannot edit {dest.path}: {exc}") from exc
    after = render(option_file)
    if before is not None:
        stats = stat_files(host, [dest.path])
        mode, owner = stats.get(dest.path, ("0644", ""))
    else:
        mode, owner = _new_file_attrs(host, view, dest)
    notes = [dest.why]
    if known is None:
        notes.append(
            "written with loose- because the server binary could not be asked which "
            "variables this version knows"
        )
    files: tuple[FileWrite, ...] = ()
    if after != (before or b""):
        files = (
            FileWrite(
                path=dest.path,
                before=before,
                after=after,
                mode=mode,
                owner=owner,
                purpose="option_file",
                note="; ".join(notes),
            ),
        )
    files += tuple(
        FileWrite(path, was, now, m, o, "option_file", note=REMOVED_NOTE)
        for path, (was, now, (m, o)) in edits.items()
        if path != dest.path
    )
    unsupported += removal_notes
    wanted = {c.key: c.proposed for c in accepted}
    overlay = _overlay(reader, dest.path, after)
    try:
        would = read_view(
            overlay,
            instance,
            server.flavour,
            server.version,
            help_files=help_files,
            home=home,
            datadir=server.datadir,
        )
    except OptionFileError as exc:
        raise ApplyError(f"With InnoTune's change the server would refuse: {exc.problem}") from exc
    # What the server itself would complain about (include loops, rejected lines in an
    # included file, missing includes): shown, with file and line, beside the overrides.
    warnings = [f"option files: {p}" for p in view.reading.problems]
    persisted = persisted_winners(would, wanted)
    warnings += check_winners(
        would, dest.path, {k: v for k, v in wanted.items() if k not in persisted}
    )
    persist_values = tuple(
        persisted_value(key, wanted[key], host.persisted) for key in sorted(persisted)
    )
    if persisted:
        notes.append(_persisted_note(persisted, wanted, host.persisted))
    if have_binary:
        answer = ask_binary(
            transport,
            instance.binary,
            ["--no-defaults", *would.public_file_args(), *would.cmdline.checking_args()],
            sudo=host.sudo,
        )
        warnings += _binary_warnings(answer, wanted, would, warnings)
    needs_restart = any(c.target == "option_file" for c in accepted)
    restart_argv = instance.restart_argv()
    restart = None
    if needs_restart and files:
        if restart_argv:
            restart = Command(tuple(restart_argv), "restart the server so the new values apply")
        else:
            warnings.append(
                f"The server was started by hand ({instance.label}); InnoTune cannot restart it "
                "for you. Restart it the way it was started."
            )
    summary = (
        f"{'create' if before is None else 'edit'} {dest.path}: "
        + ", ".join(f"{k} = {v}" for k, v in wanted.items())
        if files
        else "option files already hold these values"
    )
    if persisted:
        # The note belongs to InnoTune's own file (or, when that holds the values already,
        # to the summary).
        ours = [f for f in files if f.path == dest.path]
        if ours:
            files = tuple(
                dataclasses.replace(f, note="; ".join(notes)) if f.path == dest.path else f
                for f in files
            )
        else:
            summary += f"; {notes[-1]}"
    if removed:
        summary += "; remove " + ", ".join(f"{c.key} ({c.path}:{_line_of(c)})" for c in removed)
    action = Action(
        applier="optionfile",
        change_ids=tuple(c.id for c in (*accepted, *removed)),
        summary=summary,
        files=files,
        persisted=persist_values,
        server_files=tuple(sorted({path for path, _ in persisted.values()})),
        warnings=tuple(warnings),
        unsupported=tuple(unsupported),
        restart_needed=needs_restart and bool(files),
        restart=restart,
        option_lines=tuple(wanted.items()),
    )
    return _Planned(action, would, overlay, wanted, tuple(help_files))


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


def _binary_warnings(
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


def describe(changes: Sequence[Change], host: Host) -> list[Action]:
    """The option-file part of ``changes`` (option_file and dynamic targets) the job writes.

    Args:
        changes: the plan's changes; other targets are ignored.
        host: the facts and the live connection.

    Returns:
        One :class:`Action` (none when no change is for the option files): each file with
        its full new content, the restart, and what would beat InnoTune's values (with
        its fix).

    Raises:
        ApplyError: the files cannot be read fully, or the server would refuse them.
    """
    server = host.facts.server
    container = server.instance.container if server is not None else None
    if container is None or not host.live:
        action = _plan(changes, host).action
    else:
        inside = dataclasses.replace(host, transport=host.server_transport or host.transport)
        action = on_the_host(_plan(changes, inside, container).action, container)
    return [action] if action.change_ids or action.unsupported else []


def on_the_host(action: Action, container: Container) -> Action:
    """The container's files as the host's job writes them: the mounted host directory's.

    Raises:
        ApplyError: a file is not on a mounted host directory (lost when recreated).
    """
    files = []
    for write in action.files:
        bind = container.bind_for(write.path)
        host_path = bind.host_path(write.path) if bind is not None else None
        if host_path is None:
            raise not_durable(container, f"{write.path} is in the image")
        note = f"the container reads it as {write.path}"
        files.append(
            dataclasses.replace(
                write,
                path=host_path,
                # The container's user names are not the host's: the job's default owner.
                owner="" if write.before is None else write.owner,
                note="; ".join(n for n in (write.note, note) if n),
            )
        )
    return dataclasses.replace(action, files=tuple(files))


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
        warnings += _binary_warnings(current, wanted, view, warnings)
    return warnings
