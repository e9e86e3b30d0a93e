"""Random multi-file option-file layouts for the oracle tests (seeded, reproducible).

A layout is a main file plus included files and include directories, written
under one directory. Two modes: ``wild`` (anything my_print_defaults must agree
on: odd groups, quotes, escapes, CRLF, latin-1, missing includes, loops, errors)
and ``server`` (only options mariadbd knows, with values it accepts, so that its
``--verbose --help`` table can be compared).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

READ_GROUPS = [
    "mysqld",
    "server",
    "mariadb",
    "mariadbd",
    "mysqld-10.11",
    "mariadb-10.11",
    "mariadbd-10.11",
    "client-server",
    "galera",
    "MYSQLD",
    "Server",
    "mysqld ",
]
OTHER_GROUPS = [
    "client",
    "mysql",
    "mysqld_safe",
    "mysqld-10.6",
    "mariadb-11.4",
    "embedded",
    " mysqld",
    "",
    "mysqld_x",
]

WILD_KEYS = [
    "innodb_buffer_pool_size",
    "innodb-buffer-pool-size",
    "max_connections",
    "loose-innodb-io-capacity",
    "skip-name-resolve",
    "skip-innodb-doublewrite",
    "enable-innodb_file_per_table",
    "disable-log-bin",
    "maximum-sort-buffer-size",
    "plugin-load-add",
    "replicate-do-db",
    "log-bin",
    "bind-address",
    "character-set-server",
    "datadir",
    "a",
    "key with spaces",
    "--double-dash",
    "x#y",
    'q"#"k',
]

WILD_VALUES = [
    "1",
    "0",
    "ON",
    "off",
    "64M",
    "1g",
    "512K",
    "/var/lib/mysql",
    '"quoted value"',
    "'single # quoted'",
    '"unterminated',
    '"a\\"b"',
    "tab\\there",
    "back\\\\slash",
    "sp\\sace",
    "un\\known",
    "trailing\\",
    '""',
    "''",
    '"',
    "caf\u00e9",
    "x=y",
    "value # comment",
    "value; not a comment",
    "",
]

COMMENTS = [b"# a comment", b"; semicolon comment", b"   # indented", b"# caf\xe9 latin-1", b"#"]


@dataclass
class Layout:
    """A generated layout: the main file and everything it pulls in."""

    root: Path
    main: Path
    suffix: str = ""
    files: dict[Path, bytes] = field(default_factory=dict)
    dirs: list[Path] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)  # server mode: name -> display

    def write(self) -> None:
        """Write every file (include directories first)."""
        for directory in self.dirs:
            directory.mkdir(parents=True, exist_ok=True)
        for path, data in self.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o644)


# -- server mode: options mariadbd 10.11 knows, values it takes as they are ---------------------

BOOL_VARS = ["innodb_doublewrite", "innodb_file_per_table", "skip_name_resolve"]
INT_VARS = {
    "max_connections": (10, 2000),
    "sync_binlog": (0, 100),
    "innodb_flush_log_at_trx_commit": (0, 2),
    "innodb_io_capacity": (100, 1900),
}
SIZE_VARS = {"key_buffer_size": (8, 64), "max_heap_table_size": (16, 64)}  # MiB, exact
ENUM_VARS = {"binlog_format": ["ROW", "MIXED", "STATEMENT"]}
STRING_VARS = {"character_set_server": ["latin1", "utf8mb4"]}
SERVER_VARS = [*BOOL_VARS, *INT_VARS, *SIZE_VARS, *ENUM_VARS, *STRING_VARS]


def _spell(rng: random.Random, name: str) -> str:
    return name.replace("_", "-") if rng.random() < 0.5 else name


def _bool_line(rng: random.Random, name: str) -> str:
    if name == "skip_name_resolve":  # a real option whose name starts like a prefix
        return rng.choice(
            [
                "skip-name-resolve",
                "skip_name_resolve=1",
                "skip-name-resolve=0",
                "skip-name-resolve=OFF",
            ]
        )
    spelled = _spell(rng, name)
    return rng.choice(
        [
            spelled,
            f"{spelled}=1",
            f"{spelled}=0",
            f"{spelled} = ON",
            f"{spelled}=off",
            f"{spelled}=TRUE",
            f"{spelled}=false",
            f"enable-{spelled}",
            f"disable-{spelled}",
            f"skip-{spelled}",
            f"skip-{spelled}=0",
            f"enable-{spelled}=0",
            f"loose-{spelled}=on",
            f"loose-skip-{spelled}",
            f'{spelled} = "ON"  # quoted',
        ]
    )


def _server_line(rng: random.Random, name: str) -> str:
    if name in BOOL_VARS:
        return _bool_line(rng, name)
    spelled = _spell(rng, name)
    if rng.random() < 0.15:
        spelled = "loose-" + spelled
    sep = rng.choice(["=", " = ", "\t=  "])
    if name in INT_VARS:
        low, high = INT_VARS[name]
        value = str(rng.randint(low, high))
    elif name in SIZE_VARS:
        low, high = SIZE_VARS[name]
        mib = rng.randint(low, high)
        value = rng.choice([f"{mib}M", f"{mib}m", f"{mib * 1024}K", str(mib << 20), f"'{mib}M'"])
    elif name in ENUM_VARS:
        value = rng.choice(ENUM_VARS[name])
        value = value.lower() if rng.random() < 0.5 else value
    else:
        value = rng.choice(STRING_VARS[name])
    comment = rng.choice(["", "", "  # why", " #"])
    return f"{spelled}{sep}{value}{comment}"


def _wild_line(rng: random.Random) -> bytes:
    key = rng.choice(WILD_KEYS)
    roll = rng.random()
    if roll < 0.15:
        line = key
    else:
        sep = rng.choice(["=", " = ", " =", "= ", "\t=\t", "  =  "])
        line = f"{key}{sep}{rng.choice(WILD_VALUES)}"
    if rng.random() < 0.2:
        line += rng.choice([" # trailing", "   ", "\t", ' # "quoted" comment', " ;x"])
    indent = rng.choice(["", "", "", " ", "\t", "  "])
    return (indent + line).encode("utf-8")


class Generator:
    """Builds layouts under a base directory."""

    def __init__(self, base: Path, seed: int) -> None:
        self.base = base
        self.seed = seed

    def layout(self, index: int, *, server: bool) -> Layout:
        """The layout number ``index`` (the same seed and index give the same files)."""
        rng = random.Random(f"{self.seed}-{index}-{server}")
        root = self.base / f"c{index:05d}"
        layout = Layout(root=root, main=root / "my.cnf")
        if not server and rng.random() < 0.1:
            layout.suffix = rng.choice(["_x", ".x"])
        files: list[Path] = [layout.main]
        n_extra = rng.randint(0, 3)
        for i in range(n_extra):
            files.append(root / f"inc{i}.cnf")
        n_dirs = rng.randint(0, 2)
        dir_files: list[Path] = []
        for d in range(n_dirs):
            directory = root / f"conf{d}.d"
            layout.dirs.append(directory)
            names = rng.sample(
                [
                    "50-server.cnf",
                    "10-a.cnf",
                    "Z.cnf",
                    "_u.cnf",
                    ".hidden.cnf",
                    "99-z.cnf",
                    "b.cnf.bak",
                    "c.ini",
                    "d.CNF",
                    "60-galera.cnf",
                    "9.cnf",
                    "100.cnf",
                ],
                k=rng.randint(0, 5),
            )
            dir_files += [directory / name for name in names]
        all_files = files + dir_files
        for path in all_files:
            layout.files[path] = self._file(rng, layout, path, all_files, server=server)
        return layout

    def _file(
        self, rng: random.Random, layout: Layout, path: Path, all_files: list[Path], *, server: bool
    ) -> bytes:
        crlf = not server and rng.random() < 0.1
        lines: list[bytes] = []
        n_lines = rng.randint(1, 14)
        groups = (
            READ_GROUPS + OTHER_GROUPS
            if not server
            else READ_GROUPS[:9] + ["client", "mysqld-10.6"]
        )
        started = False
        for _ in range(n_lines):
            roll = rng.random()
            if not started or roll < 0.15:
                name = rng.choice(groups)
                if layout.suffix and rng.random() < 0.4:
                    name = name.strip() + layout.suffix
                junk = rng.choice(["", "", "", " # c", "junk", "]"]) if not server else ""
                lines.append(f"{rng.choice(['', ' '])}[{name}]{junk}".encode())
                started = True
            elif roll < 0.25:
                lines.append(rng.choice(COMMENTS) if not server else b"# comment")
            elif roll < 0.3:
                lines.append(b"" if rng.random() < 0.5 else b"   ")
            elif roll < 0.38 and len(all_files) > 1:
                lines.append(self._include(rng, layout, path, all_files, server=server))
            elif server:
                lines.append(_server_line(rng, rng.choice(SERVER_VARS)).encode())
            else:
                lines.append(_wild_line(rng))
        if not server and rng.random() < 0.04:
            bad = rng.choice(
                [b"[unclosed", b"!include", b"!includedir " + str(layout.root / "nodir").encode()]
            )
            lines.insert(rng.randint(0, len(lines)), bad)
        if not server and rng.random() < 0.05 and path != layout.main:
            lines.insert(0, b"orphan=1")  # an option before any group: the server stops there
        ending = b"\r\n" if crlf else b"\n"
        data = ending.join(lines) + ending
        if not server and rng.random() < 0.1:
            data = data[: -len(ending)]  # no newline at the end of the file
        if not server and rng.random() < 0.02:
            data += b"[mysqld]\nlong=" + b"v" * rng.randint(4090, 4100) + b"\nafter=1\n"
        return data

    def _include(
        self, rng: random.Random, layout: Layout, path: Path, all_files: list[Path], *, server: bool
    ) -> bytes:
        loops_ok = not server and rng.random() < 0.03
        # Files are generated in order; including only later ones keeps the graph acyclic,
        # except for the deliberate loops.
        own_dir = layout.dirs.index(path.parent) if path.parent in layout.dirs else -1
        later_dirs = [d for i, d in enumerate(layout.dirs) if i > own_dir]
        if rng.random() < 0.5 and (later_dirs or loops_ok and own_dir >= 0):
            target = path.parent if loops_ok and own_dir >= 0 else rng.choice(later_dirs)
            word = "!includedir"
            spelled = str(target) + rng.choice(["", "/"])
        else:
            later = [f for f in all_files if f not in layout.files and f != path]
            if loops_ok:
                target = path
            elif not server and rng.random() < 0.1:
                target = layout.root / "missing.cnf"
            elif later:
                target = rng.choice(later)
            else:
                return b"# nothing left to include"
            word = "!include"
            spelled = str(target)
        gap = rng.choice([" ", "  ", "\t"]) if not server else " "
        trail = rng.choice(["", "", "  "]) if not server else ""
        return f"{rng.choice(['', ' '])}{word}{gap}{spelled}{trail}".encode()
