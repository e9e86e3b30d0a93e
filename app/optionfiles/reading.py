"""Reading option files the way mysqld/mariadbd does: file order, groups, includes.

The logic mirrors ``my_search_option_files`` and ``search_default_file_with_ext``
in ``mysys/my_default.c`` and was checked against ``my_print_defaults`` 10.11:

* an error in a top-level file (the ``--defaults-file``, ``/etc/my.cnf``, ...)
  aborts the server: "Fatal error in defaults handling";
* an error in an included file stops reading that file only; the including
  file goes on (the server prints the error and starts anyway);
* ``!include`` of a missing file is skipped silently; ``!includedir`` of a
  missing directory is an error; the directory's entries ending in ``.cnf``
  (dot files included) are read in byte order;
* includes nest at most 10 deep: a file that includes itself is read 11 times
  and the server warns; we do the same and also report the loop;
* a world-writable file is ignored with a warning.

Files are read through a :data:`Reader`, so the same code reads this computer
and a remote host. Where the server would silently skip a file that *we* may not
read, we refuse instead: a write must never rest on a file we could not read.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from app.domain.errors import InnoTuneError
from app.optionfiles.syntax import SPACE_BYTES, Kind, Line, OptionFile, parse, raw

MAX_INCLUDE_DEPTH = 10  # max_recursion_level in my_default.c
MAX_ARGS = 1_000_000  # an include fan-out loop could otherwise run for ever


class OptionFileError(InnoTuneError):
    """An option file cannot be read, or the server would refuse it."""

    def __init__(self, problem: str, fix: str = "", *, path: str = "", line: int = 0) -> None:
        super().__init__(problem, fix)
        self.path = path
        self.line = line


@dataclass(frozen=True)
class Node:
    """What a reader found at a path: a file with its bytes, a directory, or nothing."""

    kind: Literal["file", "dir", "missing"]
    data: bytes = b""
    names: tuple[str, ...] = ()
    world_writable: bool = False


Reader = Callable[[str], Node]
"""Returns the :class:`Node` at a path (following symlinks).

Raises ``PermissionError`` (or another ``OSError``) when the path exists but
cannot be read.
"""


def local_reader(path: str) -> Node:
    """Read a path on this computer."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Node("missing")
    if stat.S_ISDIR(st.st_mode):
        return Node("dir", names=tuple(os.listdir(path)))
    with open(path, "rb") as fh:
        data = fh.read()
    writable = bool(st.st_mode & stat.S_IWOTH) and stat.S_ISREG(st.st_mode)
    return Node("file", data=data, world_writable=writable)


class _Result(Protocol):
    exit_status: int
    stdout: bytes
    stderr: bytes


class _Runs(Protocol):
    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> _Result: ...


# One round trip per path, in POSIX sh (BusyBox hosts too). Output: "M\0", "D\0" + names each
# ending "\0", or "F<mode>\0" + the bytes. Anything we may not read exits non-zero: a path whose
# directory we cannot search is "unreadable", never "missing".
_READ_SCRIPT = r"""
p=$1
d=$(dirname -- "$p")
# A missing directory means a missing file, provided the nearest existing ancestor is
# searchable (else we cannot tell, and say so).
a=$d
while [ ! -e "$a" ] && [ "$a" != / ]; do a=$(dirname -- "$a"); done
if [ "$a" != "$d" ] && [ -x "$a" ]; then printf 'M\000'; exit 0; fi
if [ ! -x "$d" ]; then echo "cannot search $d" >&2; exit 13; fi
if [ -d "$p" ]; then
    if [ ! -r "$p" ] || [ ! -x "$p" ]; then echo "cannot list $p" >&2; exit 13; fi
    printf 'D\000'
    for f in "$p"/* "$p"/.*; do
        name=${f##*/}
        case $name in .|..) continue ;; esac
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\000' "$name"; fi
    done
elif [ -e "$p" ]; then
    printf 'F%s\000' "$(stat -L -c %a -- "$p")"
    cat -- "$p"
else
    printf 'M\000'
fi
"""


# Reads many paths in one command: each path's answer from _READ_SCRIPT as a header line and
# the answer in hex (od is POSIX), or the reason it failed; for a directory each *.cnf in it.
_BATCH_SCRIPT = r"""
r=$1; shift
one() {
    case $1 in *"
"*) return ;; esac
    if why=$(sh -c "$r" sh "$1" 2>&1 >/dev/null); then
        printf '@@path %s\n' "$1"
        sh -c "$r" sh "$1" | od -An -v -tx1
    else
        printf '@@fail %s\n' "$1"
        printf '%s\n' "$why" | head -n 1
    fi
}
dir() {
    if [ -d "$1" ] && [ -r "$1" ] && [ -x "$1" ]; then
        for f in "${1%/}"/*.cnf; do [ -e "$f" ] && one "$f"; done
    fi
}
for p in "$@"; do
    one "$p"
    dir "$p"
done
# What the files name with !include / !includedir, one level down.
for p in "$@"; do
    [ -f "$p" ] && [ -r "$p" ] || continue
    sed -n 's/^[[:space:]]*!include[[:space:]][[:space:]]*//p' "$p" | while IFS= read -r f; do
        one "$f"
    done
    sed -n 's/^[[:space:]]*!includedir[[:space:]][[:space:]]*//p' "$p" | while IFS= read -r d; do
        one "$d"
        dir "$d"
    done
done
"""


def batch_argv(paths: Sequence[str]) -> list[str]:
    """The one command that reads ``paths`` for :func:`batch_reader`."""
    return ["sh", "-c", _BATCH_SCRIPT, "sh", _READ_SCRIPT, *paths]


def _node(out: bytes, path: str) -> Node:
    tag, _, rest = out.partition(b"\0")
    if tag == b"M":
        return Node("missing")
    if tag == b"D":
        names = [n.decode("utf-8", "surrogateescape") for n in rest.split(b"\0") if n]
        return Node("dir", names=tuple(names))
    if tag.startswith(b"F"):
        mode = int(tag[1:] or b"0", 8)
        return Node("file", data=rest, world_writable=bool(mode & 0o002))
    raise OSError(f"unexpected answer while reading {path}")


def batch_reader(transport: _Runs, batch: bytes, *, sudo: bool = False) -> Reader:
    """A :data:`Reader` that answers from ``batch`` (the output of :func:`batch_argv`).

    A path the batch did not cover is read on its own, as :func:`transport_reader` does;
    one it could not read raises as that reader would.
    """
    known: dict[str, bytes | str] = {}
    current: str | None = None
    kind = "@@path"
    body: list[str] = []
    for line in batch.decode("utf-8", "surrogateescape").splitlines() + ["@@path "]:
        tag, _, rest = line.partition(" ")
        if tag in ("@@path", "@@fail"):
            if current is not None:
                known[current] = (
                    bytes.fromhex("".join(body))
                    if kind == "@@path"
                    else (" ".join(body).strip() or "permission denied")
                )
            current, kind, body = rest, tag, []
        elif current is not None:
            body.append(line.replace(" ", "") if kind == "@@path" else line)
    single = transport_reader(transport, sudo=sudo)

    def read(path: str) -> Node:
        found = known.get(path, known.get(path.rstrip("/") or "/"))  # !includedir dir/
        if found is None:
            return single(path)
        if isinstance(found, str):
            raise PermissionError(13, found, path)
        return _node(found, path)

    return read


def transport_reader(transport: _Runs, *, sudo: bool = False) -> Reader:
    """A :data:`Reader` that reads through a Transport (local or SSH)."""

    def read(path: str) -> Node:
        result = transport.run(["sh", "-c", _READ_SCRIPT, "sh", path], sudo=sudo)
        out = result.stdout
        if result.exit_status != 0:
            reason = result.stderr.decode("utf-8", "replace").strip()
            raise PermissionError(13, reason or "permission denied", path)
        return _node(out, path)

    return read


@dataclass(frozen=True)
class TopFile:
    """A file the server reads on its own (not through an include).

    ``required`` files (``--defaults-file``, ``--defaults-extra-file``) must exist.
    """

    path: str
    required: bool = False


@dataclass(frozen=True)
class Arg:
    """One argument the option files give the server, and where it was written."""

    text: str
    file: str
    line: int
    group: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Problem:
    """Something a person should know about the option files."""

    file: str
    line: int
    message: str
    fatal: bool = False

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass
class Reading:
    """The outcome of reading every option file the server would read."""

    args: list[Arg] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # in the order read (repeats kept)
    parsed: dict[str, OptionFile] = field(default_factory=dict)
    directories: list[str] = field(default_factory=list)


def server_groups(flavour: str, version: str = "", suffix: str = "") -> list[str]:
    """The option groups the server reads, in the order it lists them.

    Args:
        flavour: ``"mariadb"`` or ``"mysql"``.
        version: e.g. ``"10.11.6"``; the ``X.Y`` part adds the versioned groups.
        suffix: ``--defaults-group-suffix``: every group is also read with it appended.
    """
    xy = ".".join(version.split("-")[0].split(".")[:2]) if version else ""
    if flavour == "mariadb":
        groups = ["mysqld", "server"]
        if xy:
            groups.append(f"mysqld-{xy}")
        groups += ["mariadb"] + ([f"mariadb-{xy}"] if xy else [])
        groups += ["mariadbd"] + ([f"mariadbd-{xy}"] if xy else [])
        groups += ["client-server", "galera"]
    elif flavour == "mysql":
        groups = ["mysqld", "server"] + ([f"mysqld-{xy}"] if xy else [])
    else:
        raise ValueError(f"unknown flavour {flavour!r}")
    if suffix:
        groups += [g + suffix for g in groups]
    return groups


def parse_help_default_files(help_text: str) -> list[str]:
    """The file list from ``mysqld --verbose --help`` ("Default options are read from ...")."""
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Default options are read from the following files"):
            if i + 1 < len(lines):
                return lines[i + 1].split()
    return []


def _add_dir(dirs: list[str], directory: str) -> None:
    # init_default_directories: a directory already listed moves to the end.
    if directory in dirs:
        dirs.remove(directory)
    dirs.append(directory)


def search_order(
    flavour: str,
    *,
    defaults_file: str | None = None,
    extra_file: str | None = None,
    no_defaults: bool = False,
    sysconfdir: str | None = None,
    mysql_home: str | None = None,
    mariadb_home: str | None = None,
    home: str = "~",
    help_files: Sequence[str] | None = None,
    cwd: str = "/",
) -> list[TopFile]:
    """The top-level files the server reads, in order.

    Args:
        flavour: ``"mariadb"`` or ``"mysql"``.
        defaults_file: ``--defaults-file``: only this file is read (it must exist).
        extra_file: ``--defaults-extra-file``: read after the global files, before ~/.my.cnf.
        no_defaults: ``--no-defaults``: nothing is read.
        sysconfdir: the build's SYSCONFDIR. MariaDB builds with one (RPMs) read it
            *instead of* /etc and /etc/mysql; MySQL reads it after them.
        mysql_home: ``$MYSQL_HOME`` of the server process.
        mariadb_home: ``$MARIADB_HOME`` (MariaDB 10.6+; wins over ``$MYSQL_HOME``).
        home: the home directory of the server's user (for ``~/.my.cnf``).
        help_files: the list from ``--verbose --help`` on the target, when known; it
            replaces the built-in guess of the global files.
        cwd: the server's working directory, for relative paths.
    """
    if no_defaults:
        return []
    if defaults_file:
        return [TopFile(posixpath.join(cwd, defaults_file), required=True)]
    dirs: list[str] = []
    if help_files:
        tops = [TopFile(expand_home(f, home)) for f in help_files]
        if extra_file:
            extra = TopFile(posixpath.join(cwd, extra_file), required=True)
            tops = [t for t in tops if t.path != extra.path]
            # The extra file comes just before the per-user file(s) in the home directory.
            at = next((i for i, f in enumerate(help_files) if f.startswith("~")), len(tops))
            tops.insert(at, extra)
        return tops
    if flavour == "mariadb":
        if sysconfdir:
            _add_dir(dirs, sysconfdir)
        else:
            _add_dir(dirs, "/etc")
            _add_dir(dirs, "/etc/mysql")
        env_home = mariadb_home or mysql_home
        if env_home:
            _add_dir(dirs, env_home)
    elif flavour == "mysql":
        _add_dir(dirs, "/etc")
        _add_dir(dirs, "/etc/mysql")
        if sysconfdir:
            _add_dir(dirs, sysconfdir)
        if mysql_home:
            _add_dir(dirs, mysql_home)
    else:
        raise ValueError(f"unknown flavour {flavour!r}")
    result = [TopFile(posixpath.join(d, "my.cnf")) for d in dirs]
    if extra_file:
        result.append(TopFile(posixpath.join(cwd, extra_file), required=True))
    result.append(TopFile(expand_home("~/.my.cnf", home)))
    return result


def expand_home(path: str, home: str) -> str:
    """Expand a leading ``~/`` the way ``fn_format(MY_UNPACK_FILENAME)`` does."""
    if path == "~" or path.startswith("~/"):
        return home.rstrip("/") + path[1:] if home != "~" else path
    return path


def _upper_latin1(name: bytes) -> bytes:
    # find_type() compares with my_toupper(&my_charset_latin1, ...).
    return bytes(
        c - 32 if (97 <= c <= 122) or (0xE0 <= c <= 0xFE and c != 0xF7) else c for c in name
    )


def _is_bang(line: Line) -> bool:
    visible = line.raw.split(b"\x00", 1)[0]
    i = 0
    while i < len(visible) and visible[i] in SPACE_BYTES:
        i += 1
    return visible[i : i + 1] == b"!"


class _Walker:
    def __init__(self, reader: Reader, groups: Iterable[str], home: str, cwd: str) -> None:
        self.reader = reader
        self.wanted = {_upper_latin1(raw(g)) for g in groups}
        self.home = home
        self.cwd = cwd
        self.out = Reading()
        self.cache: dict[str, Node] = {}

    def node(self, path: str) -> Node:
        if path not in self.cache:
            try:
                self.cache[path] = self.reader(path)
            except OSError as exc:
                raise OptionFileError(
                    f"Cannot read the option file {path}: {exc.strerror or exc}.",
                    "Give InnoTune read access (sudo), or fix the file's permissions; "
                    "nothing is changed while a file the server reads cannot be read.",
                    path=path,
                ) from exc
        return self.cache[path]

    def resolve(self, target: str) -> str:
        path = expand_home(target, self.home)
        return posixpath.join(self.cwd, path)

    def read_file(self, path: str, level: int, stack: tuple[str, ...]) -> int:
        """Read one file. Returns 0 (read), 1 (missing) or -1 (the server stops here)."""
        node = self.node(path)
        if node.kind == "missing":
            return 1
        if node.world_writable:
            self.out.problems.append(
                Problem(path, 0, "world-writable option file: the server ignores it")
            )
            return 0
        if node.kind == "dir":
            self.out.problems.append(Problem(path, 0, "is a directory: the server reads nothing"))
            return 0
        parsed = self.out.parsed.get(path)
        if parsed is None:
            parsed = parse(node.data, path)
            self.out.parsed[path] = parsed
            for warning in parsed.warnings:
                self.out.problems.append(Problem(path, 0, warning))
        self.out.files.append(path)
        take = False
        for line in parsed.lines:
            if line.kind in (Kind.BLANK, Kind.COMMENT):
                continue
            if _is_bang(line) and level >= MAX_INCLUDE_DEPTH:
                self.out.problems.append(
                    Problem(
                        path,
                        line.number,
                        "include nested more than 10 deep: the server skips this directive",
                    )
                )
                continue
            if line.kind is Kind.ERROR:
                self.out.problems.append(
                    Problem(path, line.number, line.error or "rejected", fatal=level == 0)
                )
                return -1
            if line.kind is Kind.DIRECTIVE:
                self.out.problems.append(Problem(path, line.number, line.error or "ignored"))
            elif line.kind is Kind.INCLUDE:
                assert line.target is not None
                self.include(path, line, self.resolve(line.target), level, stack)
            elif line.kind is Kind.INCLUDEDIR:
                assert line.target is not None
                if not self.include_dir(path, line, self.resolve(line.target), level, stack):
                    return -1
            elif line.kind is Kind.GROUP:
                assert line.group is not None
                take = _upper_latin1(raw(line.group)) in self.wanted
            elif line.kind is Kind.OPTION and take:
                if line.error:
                    self.out.problems.append(Problem(path, line.number, line.error))
                self.out.args.append(Arg(line.argument, path, line.number, line.group or ""))
                if len(self.out.args) > MAX_ARGS:
                    raise OptionFileError(
                        f"The option files under {stack[0]} expand to more than "
                        f"{MAX_ARGS} options; an include loop is the likely cause.",
                        "Remove the !include / !includedir that points back at itself.",
                        path=path,
                        line=line.number,
                    )
        return 0

    def include(
        self, parent: str, line: Line, path: str, level: int, stack: tuple[str, ...]
    ) -> None:
        if path in stack:
            self._loop(parent, line, path)
        status = self.read_file(path, level + 1, stack + (path,))
        if status == 1:
            self.out.problems.append(
                Problem(parent, line.number, f"!include {path}: no such file (skipped)")
            )
        elif status < 0:
            self.out.problems.append(
                Problem(
                    parent,
                    line.number,
                    f"!include {path}: the server stops reading that file at its error",
                )
            )

    def include_dir(
        self, parent: str, line: Line, directory: str, level: int, stack: tuple[str, ...]
    ) -> bool:
        node = self.node(directory)
        if node.kind != "dir":
            what = "does not exist" if node.kind == "missing" else "is not a directory"
            self.out.problems.append(
                Problem(
                    parent,
                    line.number,
                    f"!includedir {directory}: the directory {what}; the server stops here",
                    fatal=level == 0,
                )
            )
            return False
        self.out.directories.append(directory)
        base = directory.rstrip("/") or ""
        for name in sorted(node.names, key=raw):
            if name in (".", "..") or not name.endswith(".cnf"):
                continue
            path = f"{base}/{name}"
            if path in stack:
                self._loop(parent, line, path)
            status = self.read_file(path, level + 1, stack + (path,))
            if status < 0:
                self.out.problems.append(
                    Problem(parent, line.number, f"{path}: the server stops reading it at an error")
                )
        return True

    def _loop(self, parent: str, line: Line, path: str) -> None:
        message = (
            f"include loop: {path} is already being read; the server follows it "
            f"{MAX_INCLUDE_DEPTH} levels deep, repeating its options"
        )
        problem = Problem(parent, line.number, message)
        if problem not in self.out.problems:
            self.out.problems.append(problem)


def read_config(
    reader: Reader,
    defaults_files: Sequence[TopFile | str],
    groups: Iterable[str],
    *,
    home: str = "~",
    cwd: str = "/",
) -> Reading:
    """Read every option file as the server would and return the arguments in order.

    Args:
        reader: how to read a path (see :data:`Reader`).
        defaults_files: the top-level files in order (see :func:`search_order`); a
            plain string is an optional file.
        groups: the groups to take options from (see :func:`server_groups`).
        home: the server user's home, for ``~/`` in include paths.
        cwd: the server's working directory, for relative include paths.

    Raises:
        OptionFileError: the server would refuse to start ("Fatal error in defaults
            handling"), naming the file and line; or a file cannot be read by us.
    """
    walker = _Walker(reader, groups, home, cwd)
    for top in defaults_files:
        top = top if isinstance(top, TopFile) else TopFile(top)
        status = walker.read_file(top.path, 0, (top.path,))
        if status < 0:
            fatal = [p for p in walker.out.problems if p.fatal]
            where = fatal[-1] if fatal else Problem(top.path, 0, "rejected")
            raise OptionFileError(
                f"The server would refuse to start: {where}.",
                "Fix that line; the server stops at it with 'Fatal error in defaults handling'.",
                path=where.file,
                line=where.line,
            )
        if status == 1 and top.required:
            raise OptionFileError(
                f"The server would refuse to start: required option file {top.path} does not "
                "exist (Could not open required defaults file).",
                "Create the file or fix the --defaults-file / --defaults-extra-file argument.",
                path=top.path,
            )
    return walker.out


def collect(
    reader: Reader,
    defaults_files: Sequence[TopFile | str],
    groups: Iterable[str],
    *,
    home: str = "~",
    cwd: str = "/",
) -> list[Arg]:
    """The ordered argument list the server takes from its option files.

    This is what ``my_print_defaults --defaults-file=F group...`` prints, one
    :class:`Arg` per line. See :func:`read_config` for the arguments and errors.
    """
    return read_config(reader, defaults_files, groups, home=home, cwd=cwd).args
