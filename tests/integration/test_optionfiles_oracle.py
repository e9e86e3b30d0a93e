"""Oracle tests: our reading of option files against the real MariaDB binaries.

``my_print_defaults --defaults-file=F <server groups>`` prints the ordered argument
list the server gets from its files; ``mariadbd --defaults-file=F --verbose --help``
prints the effective values. Generated layouts (tests/optionfiles_gen.py) must give
the same answers from app.optionfiles, byte for byte.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.optionfiles import (
    Kind,
    OptionFileError,
    Setting,
    TopFile,
    collect,
    effective,
    local_reader,
    parse,
    parse_argv,
    parse_help_default_files,
    parse_help_table,
    search_order,
    server_groups,
)
from tests.hosts.util import need
from tests.optionfiles_gen import (
    BOOL_VARS,
    ENUM_VARS,
    SERVER_VARS,
    SIZE_VARS,
    Generator,
    Layout,
)

# How many generated layouts each oracle compares (the issue asks for at least 1,000).
PRINT_DEFAULTS_LAYOUTS = 1000
SERVER_LAYOUTS = 300
SEED = int(os.environ.get("OPTIONFILES_ORACLE_SEED", "20261122"))

MY_PRINT_DEFAULTS = shutil.which("my_print_defaults") or "/usr/bin/my_print_defaults"
MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
ENV = {k: v for k, v in os.environ.items() if k not in ("MYSQL_GROUP_SUFFIX", "MYSQL_HOME")}
ENV["LC_ALL"] = "C"


def _server_version() -> str:
    out = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True, check=True)
    match = re.search(r"Ver (\d+\.\d+\.\d+)", out.stdout)
    assert match, out.stdout
    return match.group(1)


@pytest.fixture(scope="module")
def binaries() -> str:
    """The MariaDB version of the installed binaries (skips, or fails under CI, without them)."""
    need(Path(MY_PRINT_DEFAULTS).exists(), "my_print_defaults is not installed")
    need(Path(MARIADBD).exists(), "mariadbd is not installed")
    return _server_version()


def _ours(layout: Layout, groups: list[str]) -> bytes | None:
    try:
        args = collect(local_reader, [TopFile(str(layout.main), required=True)], groups)
    except OptionFileError:
        return None
    return b"".join(a.text.encode("utf-8", "surrogateescape") + b"\n" for a in args)


def _theirs(layout: Layout, groups: list[str]) -> bytes | None:
    argv = [MY_PRINT_DEFAULTS, f"--defaults-file={layout.main}"]
    if layout.suffix:
        argv.append(f"--defaults-group-suffix={layout.suffix}")
    proc = subprocess.run(argv + groups, capture_output=True, env=ENV, cwd="/", check=False)
    return proc.stdout if proc.returncode == 0 else None


def test_argument_lists_match_my_print_defaults(binaries: str, tmp_path: Path) -> None:
    """For PRINT_DEFAULTS_LAYOUTS layouts: same arguments, same order, same bytes; same refusals."""
    base_groups = server_groups("mariadb", binaries)
    gen = Generator(tmp_path, SEED)
    layouts = [gen.layout(i, server=False) for i in range(PRINT_DEFAULTS_LAYOUTS)]
    for layout in layouts:
        layout.write()

    def compare(layout: Layout) -> str | None:
        groups = server_groups("mariadb", binaries, layout.suffix)
        theirs = _theirs(layout, base_groups)
        ours = _ours(layout, groups)
        if ours == theirs:
            return None
        return f"{layout.root}: my_print_defaults={theirs!r}\n ours={ours!r}"

    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = [f for f in pool.map(compare, layouts) if f]
    refused = sum(1 for layout in layouts if _ours(layout, base_groups) is None)
    assert not failures, f"{len(failures)} of {len(layouts)} differ; first:\n" + failures[0]
    # The generator must exercise the refusals too, not only the happy path.
    assert refused > 0


def _help_table(layout: Layout) -> dict[str, str]:
    proc = subprocess.run(
        [MARIADBD, f"--defaults-file={layout.main}", "--verbose", "--help"],
        capture_output=True,
        text=True,
        env=ENV,
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, f"{layout.root}: mariadbd refused: {proc.stderr[-2000:]}"
    return parse_help_table(proc.stdout)


def _display(name: str, setting: Setting) -> str:
    if name in BOOL_VARS:
        return "TRUE" if setting.as_bool() else "FALSE"
    if name in SIZE_VARS:
        return str(setting.as_int())
    if name in ENUM_VARS:
        return (setting.value or "").upper()
    return setting.value or ""


def test_effective_values_match_mariadbd_help(binaries: str, tmp_path: Path) -> None:
    """For SERVER_LAYOUTS layouts: every value we compute equals mariadbd's own table."""
    groups = server_groups("mariadb", binaries)
    gen = Generator(tmp_path, SEED + 1)
    layouts = [gen.layout(i, server=True) for i in range(SERVER_LAYOUTS)]
    for layout in layouts:
        layout.write()

    def compare(layout: Layout) -> tuple[int, list[str]]:
        ours = effective(collect(local_reader, [TopFile(str(layout.main), True)], groups))
        table = _help_table(layout)
        wrong = []
        compared = 0
        for name in SERVER_VARS:
            if name in ours:
                compared += 1
                mine = _display(name, ours[name])
                if table.get(name) != mine:
                    wrong.append(
                        f"{layout.root}: {name}: mariadbd={table.get(name)!r} ours={mine!r} "
                        f"(from {ours[name].source}: {ours[name].text})"
                    )
        return compared, wrong

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(compare, layouts))
    failures = [w for _, r in results for w in r]
    compared = sum(n for n, _ in results)
    assert not failures, f"{len(failures)} values differ; first:\n" + "\n".join(failures[:5])
    # Not vacuous: most layouts set several of the variables, through several files.
    assert compared >= 3 * SERVER_LAYOUTS, compared
    print(f"compared {compared} values over {SERVER_LAYOUTS} layouts")


def test_server_groups_are_the_ones_mariadbd_reads(binaries: str, tmp_path: Path) -> None:
    """Every group we call a server group, and no other, reaches mariadbd --print-defaults."""
    xy = ".".join(binaries.split(".")[:2])
    candidates = server_groups("mariadb", binaries) + [
        "client",
        "mysql",
        "mysqld_safe",
        "embedded",
        "mariadb-client",
        "mysqld-10.6",
        f"mysqld-{xy}.0",
        "server-" + xy,
    ]
    cnf = tmp_path / "groups.cnf"
    cnf.write_text("".join(f"[{g}]\nloose-from-{g}=1\n" for g in candidates))
    proc = subprocess.run(
        [MARIADBD, f"--defaults-file={cnf}", "--print-defaults"],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    printed = proc.stdout.splitlines()[1].split()
    ours = [a.text for a in collect(local_reader, [str(cnf)], server_groups("mariadb", binaries))]
    assert printed == ours


def test_default_file_order_matches_the_binary(binaries: str) -> None:
    """The built-in search order for MariaDB is the list the binary itself prints."""
    proc = subprocess.run(
        [MY_PRINT_DEFAULTS, "--help"], capture_output=True, text=True, env=ENV, check=True
    )
    listed = parse_help_default_files(proc.stdout)
    assert listed == ["/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"]
    home = os.path.expanduser("~")
    ours = [t.path for t in search_order("mariadb", home=home)]
    assert ours == [p.replace("~", home) for p in listed]
    from_help = [t.path for t in search_order("mariadb", home=home, help_files=listed)]
    assert from_help == ours


def test_this_machines_config_reads_like_my_print_defaults(binaries: str) -> None:
    """The real /etc/mysql of this host, through the default search order, read like mariadbd."""
    proc = subprocess.run(
        [MY_PRINT_DEFAULTS, "--mariadbd"], capture_output=True, env=ENV, cwd="/", check=True
    )
    home = os.path.expanduser("~")
    args = collect(
        local_reader,
        search_order("mariadb", home=home),
        server_groups("mariadb", binaries),
        home=home,
    )
    assert b"".join(a.text.encode("utf-8", "surrogateescape") + b"\n" for a in args) == (
        proc.stdout
    )
    assert args, "the packaged config sets at least bind-address"


CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "optionfiles"


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in CORPUS.iterdir() if (p / "expected.toml").exists()),
)
def test_corpus_main_files_read_like_my_print_defaults(
    binaries: str, tmp_path: Path, name: str
) -> None:
    """Each layout's main file, copied under a temporary root, gives my_print_defaults' list.

    Absolute paths inside the files are rewritten to the copy; line numbers do not move.
    """
    import tomllib

    source = CORPUS / name
    spec = tomllib.loads((source / "expected.toml").read_text())
    root = tmp_path / "root"
    shutil.copytree(source, root, symlinks=True)
    prefix = str(root).encode()
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            for top in (b"/etc/", b"/var/lib/mysql"):
                data = data.replace(b" " + top, b" " + prefix + top)
            path.write_bytes(data)
    main = next(t.path for t in search_order(spec["flavour"]) if Path(str(root) + t.path).exists())
    groups = server_groups(spec["flavour"], spec["version"])
    proc = subprocess.run(
        [MY_PRINT_DEFAULTS, f"--defaults-file={root}{main}", *groups],
        capture_output=True,
        env=ENV,
        check=False,
    )
    try:
        args = collect(local_reader, [TopFile(f"{root}{main}", True)], groups)
    except OptionFileError:
        assert proc.returncode != 0, f"{name}: we refuse, my_print_defaults does not"
        assert "refuses" in spec
        return
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"".join(a.text.encode("utf-8", "surrogateescape") + b"\n" for a in args)


def test_defaults_extra_file_order_and_absence(binaries: str, tmp_path: Path) -> None:
    """--defaults-extra-file is read after the global files; a missing one stops the server."""
    extra = tmp_path / "extra.cnf"
    extra.write_text("[mysqld]\nmax_connections = 77\n[mariadbd]\nloose-extra-marker\n")
    home = os.path.expanduser("~")
    groups = server_groups("mariadb", binaries)
    proc = subprocess.run(
        [MY_PRINT_DEFAULTS, f"--defaults-extra-file={extra}", *groups],
        capture_output=True,
        env=ENV,
        check=True,
    )
    tops = search_order("mariadb", extra_file=str(extra), home=home)
    args = collect(local_reader, tops, groups, home=home)
    assert proc.stdout == b"".join(a.text.encode() + b"\n" for a in args)
    assert effective(args)["max_connections"].source.file == str(extra)
    missing = search_order("mariadb", extra_file=str(tmp_path / "nope.cnf"), home=home)
    with pytest.raises(OptionFileError, match="nope.cnf"):
        collect(local_reader, missing, groups, home=home)
    refused = subprocess.run(
        [MY_PRINT_DEFAULTS, f"--defaults-extra-file={tmp_path / 'nope.cnf'}", *groups],
        capture_output=True,
        env=ENV,
        check=False,
    )
    assert refused.returncode != 0


def test_command_line_beats_files_like_mariadbd(binaries: str, tmp_path: Path) -> None:
    """A running instance's argv: option-file switches first, then options that beat the files."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text(
        "[mysqld]\nmax_connections = 100\nsync_binlog = 3\ninnodb_doublewrite = ON\n"
        "[mysqld.two]\nkey_buffer_size = 32M\n"
    )
    argv = [
        MARIADBD,
        f"--defaults-file={cnf}",
        "--defaults-group-suffix=.two",
        "--max-connections",
        "500",
        "--skip-innodb-doublewrite",
        "--sync_binlog=7",
    ]
    line = parse_argv(argv)
    tops = search_order("mariadb", defaults_file=line.defaults_file, extra_file=line.extra_file)
    groups = server_groups("mariadb", binaries, line.group_suffix or "")
    ours = effective(collect(local_reader, tops, groups), argv=line)
    proc = subprocess.run(
        [*argv, "--verbose", "--help"], capture_output=True, text=True, env=ENV, check=True
    )
    table = parse_help_table(proc.stdout)
    assert table["max_connections"] == ours["max_connections"].value == "500"
    assert str(ours["max_connections"].source) == "command line"
    assert table["sync_binlog"] == ours["sync_binlog"].value == "7"
    assert table["innodb_doublewrite"] == "FALSE" and not ours["innodb_doublewrite"].as_bool()
    assert table["key_buffer_size"] == str(ours["key_buffer_size"].as_int()) == str(32 << 20)


# Random byte soup, each file read by my_print_defaults and by us.
FUZZ_FILES = 600
_FUZZ_PIECES = [
    *(bytes([b]) for b in b"[]=#;!\\\"' \t\r\n\n\nabsn-\xa0\xe9\xc9\xfc\xdc\x00\x0b"),
    b"mysqld",
    b"server",
    b"MYSQLD",
    b"include",
    b"includedir",
    b"[\xfcmysqld]",
]


def test_random_bytes_read_like_my_print_defaults(binaries: str, tmp_path: Path) -> None:
    """Arbitrary bytes after a [mysqld] line: same arguments or the same refusal.

    Lines whose meaning is undefined in the server (an empty option name after leading
    blanks makes it read before its buffer) are left out.
    """
    import random

    rng = random.Random(SEED)
    groups = ["mysqld", "server", "\udcfcmysqld"]  # the last one is latin-1 bytes
    byte_groups = [g.encode("utf-8", "surrogateescape") for g in groups]
    target = tmp_path / "x.cnf"
    target.write_bytes(b"[server]\nx=1\n")
    pieces = [*_FUZZ_PIECES, str(target).encode()]
    compared = 0
    for i in range(FUZZ_FILES):
        data = b"[mysqld]\n" + b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        if any(line.kind is Kind.OPTION and line.error for line in parse(data).lines):
            continue
        cnf = tmp_path / f"f{i}.cnf"
        cnf.write_bytes(data)
        proc = subprocess.run(
            [MY_PRINT_DEFAULTS.encode(), f"--defaults-file={cnf}".encode(), *byte_groups],
            capture_output=True,
            env=ENV,
            check=False,
        )
        theirs = proc.stdout if proc.returncode == 0 else None
        try:
            args = collect(local_reader, [TopFile(str(cnf), True)], groups)
            ours = b"".join(a.text.encode("utf-8", "surrogateescape") + b"\n" for a in args)
        except OptionFileError:
            ours = None
        assert ours == theirs, f"{data!r}: my_print_defaults={theirs!r} ours={ours!r}"
        compared += 1
    assert compared > FUZZ_FILES * 0.8


def test_plugin_load_resets_plugin_load_add_like_mariadbd(binaries: str, tmp_path: Path) -> None:
    """Which plugins mariadbd loads follows our plugin_load / plugin_load_add reading."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text(
        "[mysqld]\nplugin-load-add = ha_archive\nplugin_load = ha_blackhole\n"
        "[mariadb]\nplugin-load-add = ha_federatedx\n"
    )
    ours = effective(collect(local_reader, [str(cnf)], server_groups("mariadb", binaries)))
    wanted = [ours["plugin_load"].value, *ours["plugin_load_add"].values]
    assert wanted == ["ha_blackhole", "ha_federatedx"]
    proc = subprocess.run(
        [MARIADBD, f"--defaults-file={cnf}", "--verbose", "--help"],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    table = parse_help_table(proc.stdout)
    assert table.get("blackhole") == "ON" and table.get("federated") == "ON"
    assert "archive" not in table
