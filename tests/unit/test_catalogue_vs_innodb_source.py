"""MySQL's InnoDB knobs in the catalogue against InnoDB's own variable definitions.

The recorded `mysqld --verbose --help` output leaves InnoDB out (it is a plugin), so for MySQL the
catalogue's InnoDB facts are checked here against the `MYSQL_SYSVAR_*` definitions copied verbatim
from `storage/innobase/handler/ha_innodb.cc` of an 8.0.41 and an 8.4.6 tree (see the SOURCE.md next
to each `innodb-sysvars.cc.txt`). These definitions are what the server reports as default, minimum,
maximum and read-only-ness. Defaults that the source computes elsewhere are listed, not guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.domain.server import Flavour, ServerVersion
from app.knobs import VersionFacts, default_catalogue

FIXTURES = Path(__file__).parents[1] / "fixtures/hosts"
CAT = default_catalogue()
U64_MAX = 2**64 - 1

#: Symbols whose value is certain from the source excerpt itself.
_SYMBOLS: dict[str, object] = {
    "true": True,
    "false": False,
    "UINT32_MAX": 2**32 - 1,
    "ULLONG_MAX": U64_MAX,
    "~0ULL": U64_MAX,
    # Enum defaults, by the names of the enum constants (typelib order: none, ..., all).
    "dblwr::Mode::ON": "ON",
    "IBUF_USE_ALL": "all",
    "IBUF_USE_NONE": "none",
}

#: Defaults the excerpt does not settle: a constant from another file or a value computed at
#: startup. They are named here so a literal turning into a symbol (or back) fails the test.
COMPUTED = {
    "innodb_io_capacity_max": "SRV_MAX_IO_CAPACITY_DUMMY_DEFAULT: twice innodb_io_capacity",
    "innodb_buffer_pool_size": "srv_buf_pool_def_size (srv0srv.cc)",
    "innodb_buffer_pool_instances": "srv_buf_pool_instances_default, set at startup",
    "innodb_log_buffer_size": "INNODB_LOG_BUFFER_SIZE_DEFAULT (log0constants.h)",
    "innodb_flush_method": "enum 0, resolved at startup for the platform",
}
#: The server checks log_file_size x files_in_group at startup, below the sysvar's ULLONG_MAX.
RANGE_CHECKED_ELSEWHERE = {("innodb_log_file_size", "max")}


_FACTOR = re.compile(r"(\d+)[UL]*(?:\s*<<\s*(\d+))?")


def _value(expr: str) -> object:
    """A literal argument's value, or None when it names something defined elsewhere."""
    expr = re.sub(r"/\*.*?\*/", "", expr).strip()
    if expr in _SYMBOLS:
        return _SYMBOLS[expr]
    if re.fullmatch(r"\d+\.\d*", expr):
        return float(expr)
    product = 1
    for factor in expr.split("*"):  # products of integer literals: 48 * 1024 * 1024L
        match = _FACTOR.fullmatch(factor.strip())
        if match is None:
            return None
        product *= int(match.group(1)) << int(match.group(2) or 0)
    return product


def _split_args(body: str) -> list[str]:
    body = re.sub(r'"(?:[^"\\]|\\.)*"', '""', body)  # strings may hold commas
    args, depth, current = [], 0, ""
    for ch in body:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += ch
    return [*args, current.strip()]


def sysvars(dirname: str) -> dict[str, tuple[str, list[str]]]:
    """{innodb_name: (macro kind, arguments)} from a recorded excerpt."""
    text = (FIXTURES / dirname / "innodb-sysvars.cc.txt").read_text()
    found = {}
    for kind, body in re.findall(r"static MYSQL_SYSVAR_(\w+)\((.*?)\);\n", text, re.DOTALL):
        args = _split_args(body)
        found[f"innodb_{args[0]}"] = (kind, args)
    return found


def _source_facts(kind: str, args: list[str]) -> dict[str, object]:
    # name, variable, flags, comment, check, update, default[, min, max, block | typelib]
    default = _value(args[6])
    if kind == "ENUM" and not isinstance(default, str):
        default = None  # an index into a typelib the excerpt does not hold
    facts: dict[str, object] = {
        "dynamic": "PLUGIN_VAR_READONLY" not in [f.strip() for f in args[2].split("|")],
        "default": default,
    }
    if kind not in ("BOOL", "ENUM"):
        facts["min"], facts["max"] = _value(args[7]), _value(args[8])
    return facts


def _same(expected: object, source: object) -> bool:
    if isinstance(expected, float) or isinstance(source, float):
        return isinstance(source, int | float) and float(source) == pytest.approx(expected)
    return expected == source


CASES = [("mysql-8.0", "8.0.41"), ("mysql-8.4", "8.4.6")]


@pytest.mark.parametrize(("dirname", "version"), CASES)
def test_innodb_knobs_match_the_source(dirname: str, version: str) -> None:
    source = sysvars(dirname)
    v = ServerVersion.of("mysql", version)
    knobs: dict[str, VersionFacts] = {}
    for knob in CAT.knobs:
        if knob.is_server_variable and knob.name.startswith("innodb_"):
            facts = CAT.facts_for(knob.name, Flavour.MYSQL, v)
            if facts is not None:
                knobs[knob.name] = facts
    assert set(knobs) == set(source), "every MySQL InnoDB knob needs its definition recorded"

    problems, computed = [], set()
    for name, facts in sorted(knobs.items()):
        kind, args = source[name]
        src = _source_facts(kind, args)
        if src["dynamic"] is not facts.dynamic:
            problems.append(f"{name}: catalogue dynamic={facts.dynamic}, source {src['dynamic']}")
        if src["default"] is None:
            computed.add(name)
        elif not _same(facts.default, src["default"]):
            problems.append(f"{name}: catalogue default {facts.default!r}, source {args[6]}")
        for bound in ("min", "max"):
            stated = getattr(facts, bound)
            if src.get(bound) is None or stated is None or (name, bound) in RANGE_CHECKED_ELSEWHERE:
                continue
            if not _same(stated, src[bound]):
                problems.append(f"{name}: catalogue {bound} {stated!r}, source {src[bound]!r}")
    assert not problems, "\n".join(problems)
    # 8.4 computes read_io_threads from the CPU count; the catalogue says so in default_rule.
    if version.startswith("8.4"):
        assert computed == set(COMPUTED) | {"innodb_read_io_threads"}
        assert "CPU" in (knobs["innodb_read_io_threads"].default_rule or "")
    else:
        assert computed == set(COMPUTED)


def test_the_excerpts_are_the_versions_they_claim() -> None:
    """The 8.4.0 default changes are there, and absent from 8.0."""
    v80, v84 = sysvars("mysql-8.0"), sysvars("mysql-8.4")
    assert _value(v80["innodb_io_capacity"][1][6]) == 200
    assert _value(v84["innodb_io_capacity"][1][6]) == 10000
    assert _value(v80["innodb_change_buffering"][1][6]) == "all"
    assert _value(v84["innodb_change_buffering"][1][6]) == "none"
    assert _value(v80["innodb_use_fdatasync"][1][6]) is False
    assert _value(v84["innodb_use_fdatasync"][1][6]) is True


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("48 * 1024 * 1024L", 50331648),
        ("128 << 20", 128 << 20),
        ("4U", 4),
        ("std::clamp(std::thread::hardware_concurrency() / 2, 4U, 64U)", None),
        ("UINT32_MAX", 2**32 - 1),
        ("99.999", 99.999),
        ("SRV_MAX_IO_CAPACITY_LIMIT", None),
        ("0L /* Default setting */", 0),
    ],
)
def test_literal_values(expr: str, value: object) -> None:
    assert _value(expr) == value
