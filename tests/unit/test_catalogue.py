"""The knob catalogue: entries validate, broken files are refused, queries answer per version."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from app.domain.server import Flavour, ServerVersion, VersionError
from app.knobs import (
    CatalogueError,
    UnknownKnob,
    UnsupportedVersion,
    default_catalogue,
    linuxfacts,
    load_catalogue,
    loader,
    serverfacts,
)
from app.knobs.loader import DEFAULT_DIR
from app.knobs.model import ALL_LINES, INPUTS, LINES, SLIDERS, kernel_series, line_key

CAT = default_catalogue()

# Every knob issue 6 names, by its catalogue name.
ISSUE_KNOBS = [
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_log_at_timeout",
    "sync_binlog",
    "log_bin",  # issue 26: the binary log's choice
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_buffer_pool_chunk_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_log_files_in_group",
    "innodb_log_buffer_size",
    "innodb_flush_method",
    "innodb_log_file_buffering",
    "innodb_data_file_buffering",
    "innodb_log_file_write_through",
    "innodb_data_file_write_through",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_max_dirty_pages_pct",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_adaptive_flushing",
    "innodb_lru_scan_depth",
    "innodb_use_fdatasync",
    "innodb_change_buffering",
    "innodb_file_per_table",
    "binlog_group_commit_sync_delay",
    "binlog_commit_wait_count",
    "binlog_commit_wait_usec",
    "key_buffer_size",
    "queue/scheduler",
    "queue/nr_requests",
    "queue/read_ahead_kb",
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "transparent_hugepage",
    "noatime",
    "ext4_data_journal",
]


def test_the_catalogue_covers_every_knob_the_issue_names() -> None:
    assert sorted(CAT.names()) == sorted(ISSUE_KNOBS)
    assert {k.area for k in CAT.knobs} == {
        "durability",
        "memory",
        "redo",
        "flushing",
        "io",
        "os",
        "myisam",
    }


@pytest.mark.parametrize("name", ISSUE_KNOBS)
def test_every_entry_is_complete(name: str) -> None:
    knob = CAT.knob(name)
    for text in (knob.what, knob.why_writes, knob.risks, knob.advice):
        assert len(text) >= 20 and "  " not in text
    assert knob.verify and knob.title
    assert knob.slider in SLIDERS
    assert set(knob.inputs) <= INPUTS
    assert all(CAT.knob(other).name != name for other in knob.related)
    for report in knob.field_reports:
        assert re.match(r"^seeds/00\d: ", report), report
    if knob.is_server_variable:
        assert knob.linux is None
        stated = {facts.line for facts in knob.server}
        assert stated <= set(ALL_LINES)
        for facts in knob.server:
            assert facts.link.startswith("https://")
            family, _, number = facts.line.partition("-")
            if family == "mysql":
                assert f"/refman/{number}/" in facts.link
            else:
                assert facts.link.startswith("https://mariadb.com/docs/")
    else:
        assert knob.linux is not None and not knob.server
        assert knob.linux.link.startswith("https://")
        assert knob.linux.path.startswith("/")


@pytest.mark.parametrize("name", [k.name for k in CAT.knobs if k.is_server_variable])
def test_every_line_agrees_with_the_lifecycle(name: str) -> None:
    """A line states facts exactly where some release of it knows the variable."""
    knob = CAT.knob(name)
    for family, all_series in LINES.items():
        life = knob.lifecycle_for(family)
        for series in all_series:
            last = ServerVersion(series[0], series[1], 999, family)
            first = ServerVersion(series[0], series[1], 0, family)
            known = life.exists_at(last.number) or life.exists_at(first.number)
            assert (knob.line(line_key(family, series)) is not None) == known
            for version in (first, last):
                facts = CAT.facts_for(name, family, version)
                assert (facts is not None) == life.exists_at(version.number)
                if facts is not None:
                    assert facts.exact_line
                    if facts.allowed is not None:
                        assert facts.default in facts.allowed
                    if facts.min is not None and isinstance(facts.default, int | float):
                        assert facts.min <= facts.default
                    if facts.max is not None and isinstance(facts.default, int | float):
                        assert facts.default <= facts.max


def test_the_field_reports_cited_are_the_five_seeds() -> None:
    """seeds/000-004 are the field reports in ../shared/seeds (000_34d0…txt and so on)."""
    cited = {r[6:9] for k in CAT.knobs for r in k.field_reports}
    assert cited == {"000", "001", "002", "003", "004"}


# -- version facts the planner relies on (knob-facts.md, checked against real output elsewhere) --


@pytest.mark.parametrize(
    ("name", "flavour", "version", "exists"),
    [
        ("innodb_redo_log_capacity", "mysql", "8.0.29", False),
        ("innodb_redo_log_capacity", "mysql", "8.0.30", True),
        ("innodb_redo_log_capacity", "mysql", "8.4.0", True),
        ("innodb_redo_log_capacity", "mysql", "5.7.44", False),
        ("innodb_redo_log_capacity", "mariadb", "11.4.5", False),
        ("innodb_log_files_in_group", "mariadb", "10.5.20", True),
        ("innodb_log_files_in_group", "mariadb", "10.6.0", False),
        ("innodb_log_files_in_group", "mysql", "8.0.35", True),
        ("innodb_buffer_pool_instances", "mariadb", "10.5.9", True),
        ("innodb_buffer_pool_instances", "mariadb", "10.6.16", False),
        ("innodb_buffer_pool_instances", "mysql", "8.4.3", True),
        ("innodb_change_buffering", "mariadb", "10.11.19", True),
        ("innodb_change_buffering", "mariadb", "11.0.0", False),
        ("innodb_change_buffering", "mariadb", "11.4.5", False),
        ("innodb_use_fdatasync", "mysql", "8.0.25", False),
        ("innodb_use_fdatasync", "mysql", "8.0.26", True),
        ("innodb_use_fdatasync", "mariadb", "10.11.19", False),
        ("innodb_log_file_buffering", "mariadb", "10.6.18", False),
        ("innodb_log_file_buffering", "mariadb", "10.11.6", True),
        ("innodb_data_file_buffering", "mariadb", "10.11.19", False),
        ("innodb_data_file_buffering", "mariadb", "11.4.5", True),
        ("binlog_group_commit_sync_delay", "mariadb", "10.11.19", False),
        ("binlog_group_commit_sync_delay", "percona", "8.0.36", True),
        ("binlog_commit_wait_count", "mysql", "8.0.36", False),
        ("vm.swappiness", "mysql", "8.0.36", False),
    ],
)
def test_existence_per_version(name: str, flavour: str, version: str, exists: bool) -> None:
    assert CAT.exists(name, flavour, version) is exists
    assert (CAT.is_dynamic(name, flavour, version) is None) is not exists


@pytest.mark.parametrize(
    ("name", "flavour", "version", "default", "dynamic"),
    [
        ("innodb_flush_log_at_trx_commit", "mysql", "5.7.44", 1, True),
        ("sync_binlog", "mysql", "5.7.6", 0, True),
        ("sync_binlog", "mysql", "5.7.7", 1, True),
        ("sync_binlog", "mariadb", "10.11.19", 0, True),
        ("innodb_log_file_size", "mariadb", "10.6.16", 100663296, False),
        ("innodb_log_file_size", "mariadb", "10.11.19", 100663296, True),
        ("innodb_doublewrite", "mysql", "8.0.29", "ON", False),
        ("innodb_doublewrite", "mysql", "8.0.30", "ON", True),
        ("innodb_doublewrite", "mariadb", "10.11.19", "ON", False),
        ("innodb_doublewrite", "mariadb", "11.4.5", "ON", True),
        ("innodb_flush_method", "mariadb", "10.5.20", "fsync", False),
        ("innodb_flush_method", "mariadb", "10.6.0", "O_DIRECT", False),
        ("innodb_flush_method", "mysql", "8.0.36", "fsync", False),
        ("innodb_flush_method", "mysql", "8.4.0", "O_DIRECT", False),
        ("innodb_flush_neighbors", "mysql", "5.7.44", 1, True),
        ("innodb_flush_neighbors", "mysql", "8.0.11", 0, True),
        ("innodb_io_capacity", "mysql", "8.4.0", 10000, True),
        ("innodb_log_buffer_size", "mysql", "8.4.0", 67108864, True),
        ("innodb_change_buffering", "mariadb", "10.6.6", "all", True),
        ("innodb_change_buffering", "mariadb", "10.6.7", "none", True),
        ("innodb_max_dirty_pages_pct", "mariadb", "10.5.6", 75.0, True),
        ("innodb_max_dirty_pages_pct", "mariadb", "10.5.7", 90.0, True),
        ("key_buffer_size", "mariadb", "10.11.19", 134217728, True),
        ("key_buffer_size", "mysql", "8.0.36", 8388608, True),
    ],
)
def test_defaults_and_dynamic_per_version(
    name: str, flavour: str, version: str, default: object, dynamic: bool
) -> None:
    facts = CAT.facts_for(name, flavour, version)
    assert facts is not None
    assert facts.default == default
    assert facts.dynamic is dynamic
    assert facts.restart_needed is not dynamic
    assert facts.places == (("option_file", "dynamic_variable") if dynamic else ("option_file",))


def test_deprecation_and_ignoring_follow_the_version() -> None:
    old = CAT.facts_for("innodb_log_file_size", "mysql", "8.0.29")
    new = CAT.facts_for("innodb_log_file_size", "mysql", "8.0.30")
    assert old is not None and new is not None
    assert not old.deprecated and new.deprecated
    chunk_before = CAT.facts_for("innodb_buffer_pool_chunk_size", "mariadb", "10.11.11")
    chunk_after = CAT.facts_for("innodb_buffer_pool_chunk_size", "mariadb", "10.11.12")
    assert chunk_before is not None and chunk_after is not None
    assert not chunk_before.ignored and chunk_after.ignored
    cb = CAT.facts_for("innodb_change_buffering", "mariadb", "10.11.6")
    # Deprecated, not ignored: the live 10.11.19 takes SET GLOBAL ...=all with warning 1287.
    assert cb is not None and not cb.ignored and cb.deprecated
    fm = CAT.facts_for("innodb_flush_method", "mariadb", "11.4.5")
    assert fm is not None and fm.deprecated and any("11.0.0" in n for n in fm.notes)


def test_newer_versions_are_unverified_and_older_ones_refused() -> None:
    newer = CAT.facts_for("innodb_log_file_size", "mariadb", "12.0.2")
    assert newer is not None
    assert newer.line == "mariadb-11.8" and not newer.exact_line and not newer.verified
    between = CAT.facts_for("innodb_log_file_size", "mariadb", "10.9.8")
    assert between is not None and between.line == "mariadb-10.6" and not between.verified
    mysql9 = CAT.facts_for("innodb_redo_log_capacity", "mysql", "9.1.0")
    assert mysql9 is not None and mysql9.line == "mysql-8.4" and not mysql9.verified
    checked = CAT.facts_for("innodb_log_file_size", "mariadb", "10.11.19")
    assert checked is not None and checked.verified
    with pytest.raises(UnsupportedVersion, match="older than the versions"):
        CAT.facts_for("innodb_log_file_size", "mysql", "5.6.51")
    with pytest.raises(UnsupportedVersion):
        CAT.line_for("mariadb", "10.4.34")
    assert CAT.line_for("mariadb", "10.11.19") == ("mariadb-10.11", True)
    assert CAT.line_for("percona", "8.0.36") == ("mysql-8.0", True)


def test_unknown_knob_is_an_error_a_person_can_act_on() -> None:
    with pytest.raises(UnknownKnob, match="innodb_flush_log_at_trx_comit"):
        CAT.knob("innodb_flush_log_at_trx_comit")


def test_a_server_version_object_is_accepted_and_must_match_the_flavour() -> None:
    sv = ServerVersion.parse("10.11.19-MariaDB-0+deb12u1")
    assert CAT.is_dynamic("innodb_log_file_size", sv.flavour, sv) is True
    with pytest.raises(UnsupportedVersion):
        CAT.facts_for("innodb_log_file_size", "mysql", sv)


def test_sliders_have_knobs_and_advice_knobs_have_lines() -> None:
    for slider in SLIDERS:
        assert CAT.by_slider(slider), slider
    for knob in CAT.knobs:
        assert knob.advice_only == bool(knob.advice_lines)
    assert {k.name for k in CAT.knobs if k.advice_only} == {
        "transparent_hugepage",
        "noatime",
        "ext4_data_journal",
    }
    crash = {k.name for k in CAT.by_slider("crash_loss")}
    assert {"innodb_flush_log_at_trx_commit", "sync_binlog"} <= crash


def test_the_scheduler_names_blk_mq_values_and_legacy_only_for_old_kernels() -> None:
    linux = CAT.knob("queue/scheduler").linux
    assert linux is not None and linux.allowed == ("none", "mq-deadline", "bfq", "kyber")
    (legacy,) = linux.kernels
    assert legacy.until == (4, 20) and legacy.allowed == ("noop", "deadline", "cfq")
    assert "{disk}" in linux.path
    old = linux.on_kernel(kernel_series("4.19.0-27-amd64"))
    assert old.allowed == ("noop", "deadline", "cfq") and not old.kernels
    new = linux.on_kernel(kernel_series("6.1.0-18-amd64"))
    assert new.allowed == ("none", "mq-deadline", "bfq", "kyber")
    swap = CAT.knob("vm.swappiness").linux
    assert swap is not None
    assert swap.on_kernel((5, 4)).max == 100 and swap.on_kernel((5, 8)).max == 200
    with pytest.raises(ValueError, match="not a kernel release"):
        kernel_series("Linux")


# -- the loader refuses broken files, naming the file and the knob --------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "knobs"
    shutil.copytree(DEFAULT_DIR, target, ignore=shutil.ignore_patterns("*.md"))
    return target


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))


def test_the_copy_itself_loads(copy: Path) -> None:
    assert load_catalogue(copy).names() == CAT.names()


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        (  # a misspelt key
            "durability.toml",
            'name = "sync_binlog"\n',
            'name = "sync_binlog"\nslidr = "crash_loss"\n',
            r"durability\.toml: knob 'sync_binlog': unknown key 'slidr'",
        ),
        (  # a misspelt key inside a line
            "redo.toml",
            "default = 104857600\n",
            "defualt = 104857600\n",
            r"redo\.toml: knob 'innodb_redo_log_capacity', server\.mysql-8\.0: "
            r"unknown key 'defualt'",
        ),
        (  # an enum default that is not allowed
            "flushing.toml",
            'default = "O_DIRECT"\ndefault_rule',
            'default = "O_DIRCT"\ndefault_rule',
            r"flushing\.toml: knob 'innodb_flush_method', server\.mysql-8\.4: default 'O_DIRCT' "
            r"is not among the allowed values",
        ),
        (  # a default outside the range
            "durability.toml",
            "default = 1\ndynamic = true\nmin = 1\nmax = 2700",
            "default = 3000\ndynamic = true\nmin = 1\nmax = 2700",
            r"knob 'innodb_flush_log_at_timeout', server\.mysql-5\.7: "
            r"default 3000 is above max 2700",
        ),
        (  # a default of the wrong type
            "myisam.toml",
            "default = 8388608",
            'default = "8M"',
            r"myisam\.toml: knob 'key_buffer_size', server\.mysql-5\.7\.default: "
            r"must be an integer",
        ),
        (  # the plain-language text is missing
            "os.toml",
            "what = '''\nThe kernel's relative preference",
            "whatt = '''\nThe kernel's relative preference",
            r"os\.toml: knob 'vm\.swappiness'.*unknown key 'whatt'",
        ),
        (  # a malformed version
            "memory.toml",
            'deprecated = "10.5.1"',
            'deprecated = "10.5"',
            r"knob 'innodb_buffer_pool_instances', lifecycle\.mariadb\.deprecated: '10\.5' is not "
            r"a full version",
        ),
        (  # a link that is not https
            "myisam.toml",
            'mysql = "https://dev.mysql.com',
            'mysql = "http://dev.mysql.com',
            r"knob 'key_buffer_size', links\.mysql: .* is not an https:// link",
        ),
        (  # a line the lifecycle says does not exist
            "redo.toml",
            '[knob.lifecycle.mysql]\nadded = "8.0.30"',
            '[knob.lifecycle.mysql]\nadded = "8.4.0"',
            r"knob 'innodb_redo_log_capacity', server\.mysql-8\.0: is given, but the lifecycle",
        ),
        (  # a change dated outside its line
            "durability.toml",
            '{ since = "5.7.7", default = 1',
            '{ since = "8.0.7", default = 1',
            r"knob 'sync_binlog', server\.mysql-5\.7\.changes\[0\]: since 8\.0\.7 is not a release",
        ),
        (  # min above max
            "io.toml",
            "min = 2\nmax = 64",
            "min = 65\nmax = 64",
            r"knob 'innodb_write_io_threads', server\.mariadb-10\.5: min 65 is above max 64",
        ),
        (  # an unknown rule input
            "memory.toml",
            'inputs = ["host.cpu_count"]',
            'inputs = ["host.cpus"]',
            r"knob 'innodb_buffer_pool_instances', inputs: 'host\.cpus' is not a known fact",
        ),
        (  # an unknown slider
            "myisam.toml",
            'slider = "myisam"',
            'slider = "engines"',
            r"knob 'key_buffer_size', slider: 'engines' is not one of",
        ),
    ],
)
def test_the_loader_rejects_a_broken_file(
    copy: Path, file: str, old: str, new: str, message: str
) -> None:
    _edit(copy / file, old, new)
    with pytest.raises(CatalogueError, match=message) as info:
        load_catalogue(copy)
    assert "README.md" in info.value.fix or "Fix" in info.value.fix


def test_every_key_the_loader_accepts_is_in_the_schema() -> None:
    # The accepted keys come from the model's fields: a new field must not become a TOML
    # key that is accepted and then ignored without the schema saying what it means.
    schema = (DEFAULT_DIR / "README.md").read_text()
    documented = set(re.findall(r"^#?\s*([a-z_]+) = ", schema, re.M))
    documented |= set(re.findall(r"[{,] ([a-z_]+) = ", schema))
    tables = {"links"}  # a table of its own: [knob.links]
    for keys in (
        loader._KNOB_KEYS - {"lifecycle", "server", "linux"} - tables,
        serverfacts._LINE_KEYS,
        serverfacts._LIFECYCLE_KEYS,
        linuxfacts._LINUX_KEYS,
    ):
        assert keys <= documented, sorted(keys - documented)
    spoken = re.search(r"any of ([a-z ]+)\n.*?\n?.*?#\s+([a-z ]+); note required", schema)
    assert spoken is not None
    change_keys = {"since", "note", *spoken.group(1).split(), *spoken.group(2).split()}
    assert serverfacts._CHANGE_KEYS == change_keys


def test_the_loader_rejects_a_missing_required_text(copy: Path) -> None:
    text = (copy / "os.toml").read_text()
    start = text.index('risks = "It must stay below vm.dirty_ratio')
    end = text.index("\n", start) + 1
    (copy / "os.toml").write_text(text[:start] + text[end:])
    with pytest.raises(
        CatalogueError, match=r"knob 'vm\.dirty_background_ratio': missing required key 'risks'"
    ):
        load_catalogue(copy)


def test_the_loader_rejects_duplicates_and_dangling_references(copy: Path) -> None:
    extra = (copy / "myisam.toml").read_text()
    (copy / "zz_extra.toml").write_text(extra)
    with pytest.raises(CatalogueError, match="'key_buffer_size' is also declared in myisam.toml"):
        load_catalogue(copy)
    (copy / "zz_extra.toml").unlink()
    _edit(
        copy / "myisam.toml",
        'related = ["innodb_buffer_pool_size"]',
        'related = ["innodb_bufer_pool_size"]',
    )
    with pytest.raises(CatalogueError, match="'innodb_bufer_pool_size' is not another knob"):
        load_catalogue(copy)


def test_the_loader_rejects_a_same_as_loop_and_bad_toml(copy: Path) -> None:
    _edit(
        copy / "durability.toml",
        '[knob.server."mysql-5.7"]\ndefault = 1\ndynamic = true\nallowed = [0, 1, 2]\n'
        'confidence = "documented"',
        '[knob.server."mysql-5.7"]\nsame_as = "mysql-8.0"',
    )
    with pytest.raises(CatalogueError, match="same_as loops"):
        load_catalogue(copy)
    (copy / "durability.toml").write_text("[[knob]\n")
    with pytest.raises(CatalogueError, match=r"durability\.toml: not valid TOML"):
        load_catalogue(copy)


def test_the_loader_refuses_a_missing_catalogue(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="does not exist"):
        load_catalogue(tmp_path / "nowhere")
    with pytest.raises(CatalogueError, match="No \\*.toml"):
        load_catalogue(tmp_path)


# -- ServerVersion ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "comment", "flavour", "number"),
    [
        ("10.11.19-MariaDB-0+deb12u1", "", Flavour.MARIADB, (10, 11, 19)),
        ("5.5.5-10.6.16-MariaDB-log", "", Flavour.MARIADB, (10, 6, 16)),
        ("11.4.2-MariaDB", "mariadb.org binary distribution", Flavour.MARIADB, (11, 4, 2)),
        (
            "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)",
            "",
            Flavour.MARIADB,
            (10, 11, 19),
        ),
        ("8.0.36", "MySQL Community Server - GPL", Flavour.MYSQL, (8, 0, 36)),
        ("8.0.36-0ubuntu0.22.04.1", "(Ubuntu)", Flavour.MYSQL, (8, 0, 36)),
        ("5.7.44-log", "MySQL Community Server (GPL)", Flavour.MYSQL, (5, 7, 44)),
        (
            "mysqld  Ver 8.4.0 for Linux on x86_64 (MySQL Community Server - GPL)",
            "",
            Flavour.MYSQL,
            (8, 4, 0),
        ),
        (
            "8.0.36-28",
            "Percona Server (GPL), Release 28, Revision 47601f19",
            Flavour.PERCONA,
            (8, 0, 36),
        ),
        (
            "5.7.44-48-log",
            "Percona Server (GPL), Release 48, Revision 497f936a373",
            Flavour.PERCONA,
            (5, 7, 44),
        ),
        (
            "8.4.3-3",
            "Percona Server (GPL), Release 3, Revision 8ccdb4ba",
            Flavour.PERCONA,
            (8, 4, 3),
        ),
        # Debian's own MySQL packages (sid: 9.7.4-2, seen on the live server) and Oracle's.
        ("9.7.4-2", "(Debian)", Flavour.MYSQL, (9, 7, 4)),
        ("8.4.3", "MySQL Community Server - GPL", Flavour.MYSQL, (8, 4, 3)),
        # Without a comment a release after a dash says nothing: Debian's and Percona's look alike.
        ("8.0.36-28", "", Flavour.MYSQL, (8, 0, 36)),
        ("8.4", "", Flavour.MYSQL, (8, 4, 0)),
    ],
)
def test_server_version_parse(
    text: str, comment: str, flavour: Flavour, number: tuple[int, int, int]
) -> None:
    sv = ServerVersion.parse(text, comment)
    assert sv.flavour is flavour
    assert sv.number == number
    assert sv.raw == text.strip()


def test_server_version_orders_and_compares() -> None:
    a = ServerVersion.parse("10.11.9-MariaDB")
    b = ServerVersion.parse("10.11.12-MariaDB")
    assert a < b and a.series == (10, 11)
    assert b.at_least("mariadb", "10.11.12") and not a.at_least("mariadb", "10.11.12")
    assert not b.at_least("mysql", "8.0.0")
    percona = ServerVersion.parse("8.0.36-28", "Percona Server (GPL), Release 28")
    assert (
        percona.flavour is Flavour.PERCONA
        and percona.family is Flavour.MYSQL
        and percona.at_least("mysql", "8.0.30")
    )
    assert str(b) == "mariadb 10.11.12"


@pytest.mark.parametrize("text", ["", "MariaDB", "version unknown"])
def test_server_version_refuses_text_without_a_version(text: str) -> None:
    with pytest.raises(VersionError):
        ServerVersion.parse(text)
    with pytest.raises(VersionError):
        ServerVersion.of("oracle", "8.0.1")
