"""Option files: the Action that writes InnoTune's settings where the server reads them.

The settings go where :mod:`app.describe.optiondestination` chooses; obsolete lines go as
:mod:`app.describe.optionremoval` removes them. On the would-be content (the job on the
target writes it) the effective values are recomputed, and whatever would beat InnoTune's
value is reported with its fix (:mod:`app.describe.optionwinners`); it is never left silent.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from app.describe.actions import (
    Action,
    ApplyError,
    Command,
    FileWrite,
    Host,
    read_file_or_none,
    stat_files,
)
from app.describe.optiondestination import choose_destination, new_file_attrs, on_the_host
from app.describe.optionremoval import line_of, remove_lines
from app.describe.optionwinners import (
    VARIABLE_NAME,
    binary_warnings,
    check_winners,
    persisted_note,
    persisted_value,
    persisted_winners,
)
from app.domain.container import Container
from app.domain.plan import Change
from app.optionfiles import (
    Node,
    OptionFileError,
    Reader,
    holds_secrets,
    parse,
    parse_argv,
    render,
    set_option,
    set_server_option,
)
from app.optionfiles.binary import BinaryAnswer, ask_binary, binary_present
from app.optionfiles.editing import SWITCHED_OFF_BY_SKIP
from app.optionfiles.serverview import ServerView, defaults_switches, read_view, user_home
from app.optionfiles.serverview import host_reader as _reader

GROUP = "mysqld"  # read by every MySQL and MariaDB server
REMOVED_NOTE = "obsolete lines removed"  # the note of a file InnoTune only removed lines from


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


def _removal_action(removals: Sequence[Change], host: Host) -> _Planned:
    """Only lines to remove: no drop-in, no restart."""
    edits, unsupported, done = remove_lines(removals, host)
    files = tuple(
        FileWrite(path, before, after, mode, owner, "option_file", note=REMOVED_NOTE)
        for path, (before, after, (mode, owner)) in edits.items()
    )
    summary = "remove " + ", ".join(f"{c.key} ({c.path}:{line_of(c)})" for c in done)
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
    bad = [c.key for c in changes if not VARIABLE_NAME.match(c.key)]
    if bad:
        raise ApplyError(f"Not a server variable name InnoTune writes: {', '.join(bad)}.")
    edits, removal_notes, removed = remove_lines(removals, host)
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
        mode, owner = new_file_attrs(host, view, dest)
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
        notes.append(persisted_note(persisted, wanted, host.persisted))
    if have_binary:
        answer = ask_binary(
            transport,
            instance.binary,
            ["--no-defaults", *would.public_file_args(), *would.cmdline.checking_args()],
            sudo=host.sudo,
        )
        warnings += binary_warnings(answer, wanted, would, warnings)
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
        summary += "; remove " + ", ".join(f"{c.key} ({c.path}:{line_of(c)})" for c in removed)
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
