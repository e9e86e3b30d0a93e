"""From the ordered argument list to the effective value of each option, and where it was set.

The rules are those of ``my_getopt`` (``mysys/my_getopt.c``) that the server
applies to ``--name=value`` arguments from option files, its own command line
and, on MySQL 8, ``mysqld-auto.cnf``:

* dashes and underscores are the same in a name;
* ``loose-`` turns an unknown option into a warning; ``skip-``/``disable-`` set
  0 and ``enable-`` sets 1 (``--skip-x=0`` is double negation: 1); ``maximum-``
  sets the session maximum of a variable; the prefixes can be combined
  (``loose-skip-x``). A name the server really has (``skip-name-resolve``) is
  not a prefix;
* the last occurrence wins, except for options that add up (``plugin-load-add``,
  ``replicate-*``, ``binlog-do-db``...), which keep every value in order; a later
  ``plugin-load`` empties the ``plugin-load-add`` list;
* the command line of the running instance beats every file, and on MySQL 8
  persisted values (``SET PERSIST``) beat the command line unless
  ``persisted_globals_load`` is off.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.optionfiles.reading import Arg, OptionFileError

SPECIAL_PREFIXES = ("skip", "disable", "enable", "maximum", "loose", "autoset")

# Options whose names start like a prefix but are options in their own right
# (mysqld --verbose --help of MariaDB 10.11 and MySQL 8.0/8.4).
REAL_PREFIXED_NAMES = frozenset(
    {
        "skip_character_set_client_handshake",
        "skip_external_locking",
        "skip_grant_tables",
        "skip_host_cache",
        "skip_log_error",
        "skip_name_resolve",
        "skip_networking",
        "skip_new",
        "skip_replica_start",
        "skip_show_database",
        "skip_slave_start",
        "skip_stack_trace",
        "skip_symbolic_links",
        "skip_ssl",
        "disable_log_bin",
        "enable_named_pipe",
    }
)

# Options that add up instead of replacing (each occurrence appends a value).
ACCUMULATING = frozenset(
    {
        "plugin_load_add",
        "replicate_do_db",
        "replicate_ignore_db",
        "replicate_do_table",
        "replicate_ignore_table",
        "replicate_wild_do_table",
        "replicate_wild_ignore_table",
        "replicate_rewrite_db",
        "binlog_do_db",
        "binlog_ignore_db",
    }
)

# An option that empties another's accumulated list (mysqld.cc: OPT_PLUGIN_LOAD frees the
# plugin-load-add list; checked with mariadbd 10.11).
RESETS = {"plugin_load": "plugin_load_add"}

# Short options mysqld takes on a command line (from mysqld --help).
SHORT_OPTIONS = {
    "u": "user",
    "h": "datadir",
    "P": "port",
    "b": "basedir",
    "C": "character-set-server",
    "W": "log-warnings",
    "T": "exit-info",
    "O": "set-variable",
    "L": "language",
    "l": "log",
    "s": "log-slow-queries",
}

SIZE_SUFFIXES = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}

TRUE_WORDS = frozenset({"1", "on", "true"})
FALSE_WORDS = frozenset({"0", "off", "false"})


@dataclass(frozen=True)
class Source:
    """Where a value was set."""

    kind: Literal["file", "command line", "persisted"]
    file: str = ""
    line: int = 0

    def __str__(self) -> str:
        if self.kind == "file":
            return f"{self.file}:{self.line}"
        if self.kind == "persisted":
            return f"persisted ({self.file})" if self.file else "persisted"
        return "command line"


@dataclass(frozen=True)
class Setting:
    """The effective value of one option.

    Attributes:
        name: normalised name (underscores, prefixes removed).
        value: the value the server's option parser gets: ``"0"``/``"1"`` for
            ``skip-``/``disable-``/``enable-``, None for a bare ``name``.
        source: where the winning value was set.
        text: the winning argument as written (``--loose-skip-x``).
        loose: the winning argument had ``loose-``.
        modifier: ``""``, or the prefix that changed the meaning: ``skip``,
            ``disable``, ``enable``, ``maximum``, ``autoset``.
        values: for options that add up, every value in order (else ``(value,)``).
        sources: where each of ``values`` was set.
        overridden: earlier places that set this option and lost.
    """

    name: str
    value: str | None
    source: Source
    text: str
    loose: bool = False
    modifier: str = ""
    values: tuple[str | None, ...] = ()
    sources: tuple[Source, ...] = ()
    overridden: tuple[Source, ...] = field(default=())

    @property
    def accumulating(self) -> bool:
        """True for options that add up (``plugin-load-add``, ``replicate-*``...)."""
        return self.name in ACCUMULATING

    def as_bool(self) -> bool:
        """The value as the server reads a boolean (a bare option is on).

        Like the server, an unrecognised word is off.
        """
        if self.value is None:
            return True
        return self.value.strip().lower() in TRUE_WORDS

    def as_int(self) -> int:
        """The value as a number, size suffixes K/M/G/T/P/E applied.

        Raises:
            ValueError: the value is not a number the server would take.
        """
        if self.value is None:
            raise ValueError(f"{self.name} has no value")
        return parse_size(self.value)


def parse_size(value: str) -> int:
    """``"64M"`` → 67108864. Suffixes K, M, G, T, P, E (either case) are powers of 1024."""
    text = value.strip()
    power = 0
    if text and text[-1].upper() in SIZE_SUFFIXES:
        power = SIZE_SUFFIXES[text[-1].upper()]
        text = text[:-1]
    if not text or not (text.isdigit() or (text[0] in "+-" and text[1:].isdigit())):
        raise ValueError(f"not a number with an optional K/M/G/T/P/E suffix: {value!r}")
    return int(text) << (10 * power)


def normalise(name: str) -> str:
    """Dashes and underscores are one: ``innodb-buffer-pool-size`` → ``innodb_buffer_pool_size``."""
    return name.replace("-", "_")


def _split(text: str) -> tuple[str, str | None]:
    body = text[2:] if text.startswith("--") else text.lstrip("-")
    name, eq, value = body.partition("=")
    return name, (value if eq else None)


def _find(name: str, known: Collection[str] | None) -> str | None:
    """The real option ``name`` stands for, or None when it is none (so prefixes apply)."""
    if known is None:
        if name in REAL_PREFIXED_NAMES:
            return name
        if any(name.startswith(p + "_") for p in SPECIAL_PREFIXES):
            return None
        return name
    if name in known:
        return name
    # my_getopt accepts an unambiguous prefix of a real option name.
    matches = [k for k in known if k.startswith(name)]
    return matches[0] if len(matches) == 1 else None


@dataclass(frozen=True)
class Resolved:
    """An argument's meaning: option name, value, and how prefixes changed it."""

    name: str
    value: str | None
    loose: bool
    modifier: str


def resolve(text: str, known: Collection[str] | None = None) -> Resolved:
    """What ``--text`` means to the server's option parser.

    Args:
        text: ``--name[=value]`` as in the argument list.
        known: the option names the server has (underscored), when known; then
            unique prefixes are resolved the way my_getopt does.
    """
    raw_name, value = _split(text)
    name = normalise(raw_name)
    known_set = {normalise(k) for k in known} if known is not None else None
    loose = False
    modifier = ""
    real = _find(name, known_set)
    restart = True
    while real is None and restart:
        # my_getopt: strip one prefix, look the rest up; if unknown, start over on the rest.
        restart = False
        for prefix in SPECIAL_PREFIXES:
            if not name.startswith(prefix + "_"):
                continue
            name = name[len(prefix) + 1 :]
            loose = loose or prefix == "loose"
            real = _find(name, known_set)
            if real is not None:
                modifier = "" if prefix == "loose" else prefix
                if prefix in ("skip", "disable"):
                    value = "1" if value == "0" else "0"
                elif prefix == "enable":
                    value = "0" if value == "0" else "1"
            else:
                restart = True
            break
    name = real if real is not None else name
    return Resolved(name, value, loose, modifier)


@dataclass(frozen=True)
class CommandLine:
    """A server's command line, split as ``load_defaults`` splits it."""

    program: str = ""
    no_defaults: bool = False
    defaults_file: str | None = None
    extra_file: str | None = None
    group_suffix: str | None = None
    args: tuple[str, ...] = ()

    def checking_args(self) -> tuple[str, ...]:
        """The arguments to ask the server binary with: without those that act on a process.

        ``--daemonize`` would fork a daemon instead of answering (MySQL: "[MY-010946] Failed to
        start mysqld daemon"), and the running server's ``--pid-file`` is not the checker's.
        """
        return tuple(a for a in self.args if resolve(a, RUNTIME_ONLY).name not in RUNTIME_ONLY)


# Options about the running process rather than what the server does with its files.
RUNTIME_ONLY = frozenset({"daemonize", "pid_file"})


def parse_argv(argv: Sequence[str]) -> CommandLine:
    """Split a running server's argv (``/proc/PID/cmdline``, a unit's ExecStart).

    The option-file switches are taken from the front, as the server does; the
    rest become ``--name[=value]`` arguments. ``--name value`` takes the next word
    as the value: mysqld has no positional arguments, so it cannot be anything else.
    """
    words = list(argv)
    program = ""
    if words and not words[0].startswith("-"):
        program = words.pop(0)
    no_defaults = False
    defaults_file = extra_file = suffix = None
    if words and words[0] == "--no-defaults":
        no_defaults = True
        words.pop(0)
    while words:
        word = words[0]
        if defaults_file is None and word.startswith("--defaults-file="):
            defaults_file = word.split("=", 1)[1]
        elif extra_file is None and word.startswith("--defaults-extra-file="):
            extra_file = word.split("=", 1)[1]
        elif suffix is None and word.startswith("--defaults-group-suffix="):
            suffix = word.split("=", 1)[1]
        else:
            break
        words.pop(0)
    args: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in ("--print-defaults", "--"):
            continue
        if word.startswith("--"):
            if "=" not in word and i < len(words) and not words[i].startswith("-"):
                word = f"{word}={words[i]}"
                i += 1
            args.append(word)
        elif word.startswith("-") and len(word) > 1:
            long = SHORT_OPTIONS.get(word[1], word[1])
            rest = word[2:]
            if not rest and i < len(words) and not words[i].startswith("-"):
                rest = words[i]
                i += 1
            args.append(f"--{long}={rest}" if rest else f"--{long}")
    return CommandLine(program, no_defaults, defaults_file, extra_file, suffix, tuple(args))


def parse_persisted(data: bytes, path: str = "mysqld-auto.cnf") -> list[Arg]:
    """The settings in MySQL 8's ``mysqld-auto.cnf`` (SET PERSIST), as arguments.

    Both file versions are read: 1 (``mysql_server`` / ``mysql_server_static_options``)
    and 2 (``mysql_static_variables``, ``mysql_dynamic_variables``, ...). Encrypted
    sensitive values are reported with the value ``<encrypted>``.

    Raises:
        OptionFileError: the file is not the JSON the server writes.
    """
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OptionFileError(
            f"{path} is not valid JSON ({exc}); MySQL would refuse to start with it.",
            "Fix or remove it with RESET PERSIST rather than by hand.",
            path=path,
        ) from exc
    if not isinstance(doc, dict):
        raise OptionFileError(f"{path} is not the JSON object MySQL writes.", path=path)
    out: list[Arg] = []

    def walk(node: Mapping[str, Any], section: str) -> None:
        for key, entry in node.items():
            if not isinstance(entry, dict):
                continue
            if "Value" in entry:
                value = entry["Value"]
                text = "<encrypted>" if "sensitive" in section else str(value)
                out.append(Arg(f"--{key}={text}", path, 0, section))
            else:
                walk(entry, key)

    walk({k: v for k, v in doc.items() if k != "Version"}, "")
    return out


def parse_help_table(help_text: str) -> dict[str, str]:
    """The variable table at the end of ``mysqld --verbose --help``: name → value as printed.

    Names are normalised (underscores). A value of ``(No default value)`` is kept as printed.
    """
    table: dict[str, str] = {}
    started = False
    for line in help_text.splitlines():
        if not started:
            started = line.startswith("-----") and " -----" in line
            continue
        if not line.strip():
            if table:
                break
            continue
        name, _, value = line.partition(" ")
        table[normalise(name)] = value.strip()
    return table


def effective(
    args: Iterable[Arg],
    *,
    argv: Sequence[str] | CommandLine | None = None,
    persisted: Iterable[Arg] | None = None,
    known: Collection[str] | None = None,
) -> dict[str, Setting]:
    """The effective value of every option, and where it was set.

    Args:
        args: the arguments from the option files, in order (:func:`collect`).
        argv: the running instance's command line; beats every file.
        persisted: ``mysqld-auto.cnf`` settings (:func:`parse_persisted`); they beat
            the command line unless ``persisted_globals_load`` ends up off.
        known: the server's option names, when known (resolves unique prefixes).

    Returns:
        Settings keyed by normalised name. ``maximum-x`` is kept as ``maximum_x``.
    """
    entries: list[tuple[str, Source]] = [
        (arg.text, Source("file", arg.file, arg.line)) for arg in args
    ]
    if argv is not None:
        line = argv if isinstance(argv, CommandLine) else parse_argv(argv)
        entries += [(text, Source("command line")) for text in line.args]
    result: dict[str, Setting] = {}
    for text, source in entries:
        _apply(result, text, source, known)
    if persisted is not None:
        load = result.get("persisted_globals_load")
        if load is None or load.as_bool():
            for arg in persisted:
                _apply(result, arg.text, Source("persisted", arg.file), known)
    return result


def _apply(
    result: dict[str, Setting], text: str, source: Source, known: Collection[str] | None
) -> None:
    meaning = resolve(text, known)
    key = f"maximum_{meaning.name}" if meaning.modifier == "maximum" else meaning.name
    before = result.get(key)
    dropped: tuple[Source, ...] = ()
    if key in RESETS and RESETS[key] in result:
        dropped = result.pop(RESETS[key]).sources
    if before is not None and key in ACCUMULATING:
        values = before.values + (meaning.value,)
        sources = before.sources + (source,)
        overridden = before.overridden
    else:
        values = (meaning.value,)
        sources = (source,)
        overridden = (before.overridden + (before.source,)) if before is not None else ()
    overridden += dropped
    result[key] = Setting(
        name=key,
        value=meaning.value,
        source=source,
        text=text,
        loose=meaning.loose,
        modifier=meaning.modifier,
        values=values,
        sources=sources,
        overridden=overridden,
    )
