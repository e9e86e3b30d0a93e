"""Reading option files the way mysqld/mariadbd does: their groups and includes.

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

Files are read through a :data:`~app.optionfiles.readers.Reader`, so the same code reads
this computer and a remote host; which files, in which order, is
:mod:`app.optionfiles.search`'s. Where the server would silently skip a file that *we*
may not read, we refuse instead: a write must never rest on a file we could not read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from app.domain.errors import InnoTuneError
from app.optionfiles.readers import Node, Reader
from app.optionfiles.search import TopFile, expand_home
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
