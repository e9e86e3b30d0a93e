"""Where InnoTune's option-file settings go, and where a container's files are on the host.

* into a drop-in in the include directory the server reads **last**, under a name that
  sorts after every file there that sets the same keys (``99-innotune.cnf``, else
  ``zz-innotune.cnf``...);
* with no include directory, into the main file, touching only the lines that change
  (:func:`app.optionfiles.set_option`); a file holding a password is never rewritten
  (a later top-level file is created instead, or the change is refused).

In a container, only a directory mounted from the host keeps a file when the container is
recreated.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from app.describe.actions import Action, ApplyError, Host, late_name, stat_files
from app.domain.container import Container
from app.optionfiles import Reader, holds_secrets, resolve
from app.optionfiles.serverview import ServerView

STEM = "innotune"


@dataclass(frozen=True)
class Destination:
    """Where InnoTune's settings go."""

    path: str
    kind: str  # drop-in or main
    why: str


def _key_of(text: str) -> str:
    return resolve(text).name


def not_durable(container: Container, where: str) -> ApplyError:
    """The refusal for a file only the container's own layer would keep."""
    return ApplyError(
        f"The container {container.name} has no configuration directory kept on the host "
        f"(a mounted host directory or volume; {where}): a file written inside the container "
        "is lost when the container is recreated, so InnoTune does not write one there.",
        "Export the durable way and apply it when you choose: innotune export TARGET "
        f"--instance {container.name} --compose DIR writes InnoTune's file with "
        f"{_durable_words(container)}.",
        "Export the durable way and apply it when you choose: Export, then The durable way for "
        f"this container, writes InnoTune's file with {_durable_words(container)}.",
    )


def _durable_words(container: Container) -> str:
    if container.compose_project:
        return "a compose override that mounts it from the host"
    return f"a script that recreates {container.name} with it mounted from the host"


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


def new_file_attrs(host: Host, view: ServerView, dest: Destination) -> tuple[str, str]:
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
