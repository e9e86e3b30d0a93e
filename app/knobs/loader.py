"""Strict loader for resources/knobs/*.toml (schema: resources/knobs/README.md).

Every mistake is an error that names the file and the knob: an unknown key, a missing
field, a value of the wrong type, a malformed version, a default outside the allowed
values or the range, a link that is not https. Nothing is guessed or silently skipped.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from app.domain.server import Flavour
from app.knobs.model import (
    ALL_LINES,
    CONFIDENCE,
    INPUTS,
    KINDS,
    LINES,
    SLIDERS,
    TYPES,
    UNITS,
    CatalogueError,
    Change,
    KernelChange,
    Knob,
    Lifecycle,
    LineFacts,
    LinuxFacts,
    Value,
    line_key,
)
from app.resources import resource_path

DEFAULT_DIR = resource_path("knobs")
T = TypeVar("T")

_NAME = re.compile(r"^[a-z][a-z0-9_./-]*$")
_VERSION = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,4})$")
_KERNEL = re.compile(r"^(\d{1,2})\.(\d{1,3})$")
_MIN_TEXT = 20


def _fields(cls: type, drop: tuple[str, ...] = (), add: tuple[str, ...] = ()) -> set[str]:
    """The keys a table may have: the model's fields, less derived ones, plus TOML-only ones."""
    return {f.name for f in dataclasses.fields(cls) if f.name not in drop} | set(add)


# The TOML tables mirror the model: a line gives no "line" (it is the table's key) and may
# borrow from another ("same_as"); a knob's "area" is its file, and its links fill each
# line's link; a lifecycle is one table per product.
_KNOB_FIELDS = [f for f in dataclasses.fields(Knob) if f.name != "area"]
_KNOB_KEYS = {f.name for f in _KNOB_FIELDS} | {"links"}
_KNOB_REQUIRED = [
    *(f.name for f in _KNOB_FIELDS if f.default is dataclasses.MISSING),
    "links",
]
_LINE_KEYS = _fields(LineFacts, drop=("line",), add=("same_as",))
_CHANGE_KEYS = _fields(Change)
_LIFECYCLE_KEYS = _fields(Lifecycle)
_LINUX_KEYS = _fields(LinuxFacts, drop=("link",))
_KERNEL_KEYS = _fields(KernelChange)
_LINK_KEYS = {"mysql", "mariadb", "linux"}


class _Ctx:
    """Where we are, so that every error names the file, the knob and the field."""

    def __init__(self, file: Path, knob: str = "?") -> None:
        self.file = file
        self.knob = knob

    def fail(self, where: str, problem: str) -> CatalogueError:
        place = f"{self.file.name}: knob {self.knob!r}" + (f", {where}" if where else "")
        return CatalogueError(
            f"{place}: {problem}",
            f"Fix {self.file} (the schema is in {self.file.parent / 'README.md'}).",
        )


# -- small typed readers ---------------------------------------------------------------


def _keys(ctx: _Ctx, where: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ctx.fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _table(ctx: _Ctx, where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ctx.fail(where, f"must be a table, not {type(value).__name__}")
    return value


def _str(ctx: _Ctx, where: str, value: Any, *, text: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ctx.fail(where, "must be a non-empty string")
    cleaned = " ".join(value.split())  # hard-wrapped TOML paragraphs become one line
    if text and len(cleaned) < _MIN_TEXT:
        raise ctx.fail(where, f"is too short to explain anything ({len(cleaned)} characters)")
    return cleaned


def _opt_str(ctx: _Ctx, where: str, value: Any) -> str | None:
    if value is None or value == "":
        return None  # "" clears a note inherited through same_as
    return _str(ctx, where, value)


def _bool(ctx: _Ctx, where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ctx.fail(where, f"must be true or false, not {value!r}")
    return value


def _str_list(ctx: _Ctx, where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ctx.fail(where, "must be a list of strings")
    return tuple(_str(ctx, f"{where}[{i}]", item) for i, item in enumerate(value))


def _choice(ctx: _Ctx, where: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ctx.fail(where, f"{value!r} is not one of {', '.join(choices)}")
    return str(value)


def _version(ctx: _Ctx, where: str, value: Any) -> tuple[int, int, int]:
    match = _VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise ctx.fail(where, f"{value!r} is not a full version like 8.0.30")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def _kernel(ctx: _Ctx, where: str, value: Any) -> tuple[int, int]:
    match = _KERNEL.match(value) if isinstance(value, str) else None
    if match is None:
        raise ctx.fail(where, f"{value!r} is not a kernel version like 5.0")
    return (int(match.group(1)), int(match.group(2)))


def _https(ctx: _Ctx, where: str, value: Any) -> str:
    link = _str(ctx, where, value)
    if not link.startswith("https://") or " " in link:
        raise ctx.fail(where, f"{link!r} is not an https:// link")
    return link


def _given(
    ctx: _Ctx, where: str, entry: Mapping[str, Any], key: str, read: Callable[..., T], *args: Any
) -> T | None:
    """``entry[key]`` read by ``read`` (with ``args``), or None when the key is not there."""
    return read(ctx, f"{where}.{key}", entry[key], *args) if key in entry else None


def _scalar(ctx: _Ctx, where: str, value: Any, kind: str) -> Value:
    """A value of the knob's type (bool, int/size, float, enum string)."""
    if kind == "bool":
        return _bool(ctx, where, value)
    if kind in ("int", "size"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ctx.fail(where, f"must be an integer for a {kind} knob, not {value!r}")
        if value < 0:
            raise ctx.fail(where, f"must not be negative ({value})")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ctx.fail(where, f"must be a number for a float knob, not {value!r}")
        return float(value)
    if not isinstance(value, str) or not value:
        raise ctx.fail(where, f"must be a non-empty string for an enum knob, not {value!r}")
    return value


def _number(ctx: _Ctx, where: str, value: Any, kind: str) -> int | float:
    if kind not in ("int", "size", "float"):
        raise ctx.fail(where, f"a {kind} knob has no numeric range")
    result = _scalar(ctx, where, value, kind)
    assert isinstance(result, int | float)  # noqa: S101 - narrowed by _scalar above
    return result


def _allowed(ctx: _Ctx, where: str, value: Any, kind: str) -> tuple[Value, ...]:
    if kind not in ("int", "enum"):
        raise ctx.fail(where, f"a {kind} knob takes no list of allowed values")
    if not isinstance(value, list) or not value:
        raise ctx.fail(where, "must be a non-empty list")
    items = tuple(_scalar(ctx, f"{where}[{i}]", v, kind) for i, v in enumerate(value))
    if len(set(items)) != len(items):
        raise ctx.fail(where, "lists a value twice")
    return items


def _check_value(
    ctx: _Ctx,
    where: str,
    default: Value | None,
    low: int | float | None,
    high: int | float | None,
    allowed: tuple[Value, ...] | None,
    kind: str,
) -> None:
    """The facts must agree with each other: range ordered, default allowed and in range."""
    if kind == "enum" and allowed is None:
        raise ctx.fail(where, "an enum knob needs 'allowed'")
    if low is not None and high is not None and low > high:
        raise ctx.fail(where, f"min {low} is above max {high}")
    if default is None:
        return
    if allowed is not None and default not in allowed:
        raise ctx.fail(where, f"default {default!r} is not among the allowed values {allowed}")
    if isinstance(default, int | float) and not isinstance(default, bool):
        if low is not None and default < low:
            raise ctx.fail(where, f"default {default} is below min {low}")
        if high is not None and default > high:
            raise ctx.fail(where, f"default {default} is above max {high}")


# -- server variables --------------------------------------------------------------------


def _lifecycles(
    ctx: _Ctx, raw: Any, links: dict[str, str]
) -> tuple[tuple[Flavour, Lifecycle], ...]:
    table = _table(ctx, "lifecycle", raw)
    _keys(ctx, "lifecycle", table, {"mysql", "mariadb"})
    result = []
    for family in (Flavour.MYSQL, Flavour.MARIADB):
        where = f"lifecycle.{family.value}"
        if family.value not in table:
            raise ctx.fail(where, "is missing (write an empty table, or absent = true)")
        entry = _table(ctx, where, table[family.value])
        _keys(ctx, where, entry, _LIFECYCLE_KEYS)
        absent = _bool(ctx, f"{where}.absent", entry.get("absent", False))
        points = {
            key: _version(ctx, f"{where}.{key}", entry[key])
            for key in ("added", "deprecated", "removed")
            if key in entry
        }
        if absent and points:
            raise ctx.fail(where, "absent = true cannot also give added/deprecated/removed")
        order = [points[k] for k in ("added", "deprecated", "removed") if k in points]
        if order != sorted(order) or len(set(order)) != len(order):
            raise ctx.fail(where, "added, deprecated and removed must come in that order")
        if not absent and family.value not in links:
            raise ctx.fail("links", f"needs a {family.value} link (the variable exists there)")
        result.append(
            (
                family,
                Lifecycle(
                    absent=absent,
                    added=points.get("added"),
                    deprecated=points.get("deprecated"),
                    removed=points.get("removed"),
                    note=_opt_str(ctx, f"{where}.note", entry.get("note")),
                ),
            )
        )
    return tuple(result)


def _exists_in_line(life: Lifecycle, series: tuple[int, int]) -> bool:
    """Whether any release of the line knows the variable."""
    if life.absent:
        return False
    if life.added is not None and life.added[:2] > series:
        return False
    return life.removed is None or life.removed[:2] > series or life.removed[2] > 0


def _resolve_same_as(
    ctx: _Ctx, lines: dict[str, Any], key: str, seen: tuple[str, ...]
) -> dict[str, Any]:
    where = f"server.{key}"
    entry = _table(ctx, where, lines[key])
    _keys(ctx, where, entry, _LINE_KEYS)
    if "same_as" not in entry:
        return dict(entry)
    parent = entry["same_as"]
    if parent not in lines:
        raise ctx.fail(where, f"same_as {parent!r} names no line of this knob")
    if parent.split("-")[0] != key.split("-")[0]:
        raise ctx.fail(where, f"same_as {parent!r} is a different product")
    if parent in seen:
        raise ctx.fail(where, f"same_as loops through {' -> '.join((*seen, parent))}")
    merged = {
        k: v
        for k, v in _resolve_same_as(ctx, lines, parent, (*seen, key)).items()
        if k not in ("changes", "same_as")
    }
    merged.update({k: v for k, v in entry.items() if k != "same_as"})
    return merged


def _changes(
    ctx: _Ctx,
    where: str,
    raw: Any,
    kind: str,
    series: tuple[int, int],
    upto: tuple[int, int] = (999, 0),
) -> tuple[Change, ...]:
    if not isinstance(raw, list):
        raise ctx.fail(where, "must be a list of tables")
    result: list[Change] = []
    for i, item in enumerate(raw):
        here = f"{where}[{i}]"
        entry = _table(ctx, here, item)
        _keys(ctx, here, entry, _CHANGE_KEYS)
        if "since" not in entry or "note" not in entry:
            raise ctx.fail(here, "needs 'since' and 'note'")
        since = _version(ctx, f"{here}.since", entry["since"])
        # A line's facts also serve the releases up to the next covered line (MariaDB
        # 10.9 and 10.10 use mariadb-10.6's), so a change may come from one of those.
        if not series <= since[:2] < upto:
            raise ctx.fail(here, f"since {entry['since']} is not a release this line serves")
        if result and since <= result[-1].since:
            raise ctx.fail(here, "changes must be in increasing 'since' order")
        result.append(
            Change(
                since=since,
                note=_str(ctx, f"{here}.note", entry["note"]),
                default=_given(ctx, here, entry, "default", _scalar, kind),
                dynamic=_given(ctx, here, entry, "dynamic", _bool),
                min=_given(ctx, here, entry, "min", _number, kind),
                max=_given(ctx, here, entry, "max", _number, kind),
                allowed=_given(ctx, here, entry, "allowed", _allowed, kind),
                ignored=_given(ctx, here, entry, "ignored", _bool),
                deprecated=_given(ctx, here, entry, "deprecated", _bool),
            )
        )
    return tuple(result)


def _next_line(key: str) -> tuple[int, int]:
    """The series of the covered line after ``key`` ((999, 0) after the newest)."""
    family, _, number = key.partition("-")
    series = (int(number.split(".")[0]), int(number.split(".")[1]))
    lines = next((v for f, v in LINES.items() if f.value == family), ())
    return next((s for s in lines if s > series), (999, 0))


def _line_facts(
    ctx: _Ctx, key: str, entry: dict[str, Any], kind: str, links: dict[str, str]
) -> LineFacts:
    where = f"server.{key}"
    family, _, number = key.partition("-")
    series = (int(number.split(".")[0]), int(number.split(".")[1]))
    for required in ("default", "dynamic", "confidence"):
        if required not in entry:
            raise ctx.fail(where, f"missing required key {required!r}")
    if "link" in entry:
        link = _https(ctx, f"{where}.link", entry["link"])
    elif family in links:
        link = links[family].replace("{line}", number)
    else:
        raise ctx.fail(where, f"has no link and links.{family} is missing")
    if family == "mysql" and f"/{number}/" not in link:
        raise ctx.fail(where, f"link {link!r} is not the {number} manual")
    facts = LineFacts(
        line=key,
        default=_scalar(ctx, f"{where}.default", entry["default"], kind),
        dynamic=_bool(ctx, f"{where}.dynamic", entry["dynamic"]),
        link=link,
        confidence=_choice(ctx, f"{where}.confidence", entry["confidence"], CONFIDENCE),
        default_rule=_opt_str(ctx, f"{where}.default_rule", entry.get("default_rule")),
        help_default=_help_default(ctx, f"{where}.help_default", entry.get("help_default")),
        min=_given(ctx, where, entry, "min", _number, kind),
        max=_given(ctx, where, entry, "max", _number, kind),
        allowed=_given(ctx, where, entry, "allowed", _allowed, kind),
        restart_values=_given(ctx, where, entry, "restart_values", _allowed, kind) or (),
        block=_block(ctx, f"{where}.block", entry.get("block")),
        ignored=_bool(ctx, f"{where}.ignored", entry.get("ignored", False)),
        deprecated=_bool(ctx, f"{where}.deprecated", entry.get("deprecated", False)),
        note=_opt_str(ctx, f"{where}.note", entry.get("note")),
        changes=_changes(
            ctx, f"{where}.changes", entry.get("changes", []), kind, series, _next_line(key)
        ),
    )
    _check_value(ctx, where, facts.default, facts.min, facts.max, facts.allowed, kind)
    # Every state the line goes through must be consistent, not only its first release.
    state = (facts.default, facts.min, facts.max, facts.allowed)
    for change in facts.changes:
        state = (
            change.default if change.default is not None else state[0],
            change.min if change.min is not None else state[1],
            change.max if change.max is not None else state[2],
            change.allowed if change.allowed is not None else state[3],
        )
        _check_value(ctx, f"{where} from {'.'.join(map(str, change.since))}", *state, kind)
    return facts


def _help_default(ctx: _Ctx, where: str, value: Any) -> Value | None:
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        return value
    raise ctx.fail(where, f"must be a plain value, not {type(value).__name__}")


def _block(ctx: _Ctx, where: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ctx.fail(where, f"must be a positive integer, not {value!r}")
    return value


def _server(
    ctx: _Ctx,
    raw: Any,
    kind: str,
    lifecycle: tuple[tuple[Flavour, Lifecycle], ...],
    links: dict[str, str],
) -> tuple[LineFacts, ...]:
    lines = _table(ctx, "server", raw)
    _keys(ctx, "server", lines, set(ALL_LINES))
    life = dict(lifecycle)
    result = []
    for family, all_series in LINES.items():
        for series in all_series:
            key = line_key(family, series)
            expected = _exists_in_line(life[family], series)
            if expected and key not in lines:
                raise ctx.fail("server", f"line {key!r} is missing (the variable exists there)")
            if not expected and key in lines:
                raise ctx.fail(
                    f"server.{key}", "is given, but the lifecycle says the line lacks the variable"
                )
            if key in lines:
                entry = _resolve_same_as(ctx, lines, key, ())
                result.append(_line_facts(ctx, key, entry, kind, links))
    return tuple(result)


# -- OS knobs ----------------------------------------------------------------------------


def _linux(ctx: _Ctx, raw: Any, kind: str, links: dict[str, str]) -> LinuxFacts:
    entry = _table(ctx, "linux", raw)
    _keys(ctx, "linux", entry, _LINUX_KEYS)
    for required in ("path", "persist", "confidence"):
        if required not in entry:
            raise ctx.fail("linux", f"missing required key {required!r}")
    if "default" not in entry and "default_rule" not in entry:
        raise ctx.fail("linux", "needs 'default' or 'default_rule'")
    if "linux" not in links:
        raise ctx.fail("links", "an OS knob needs links.linux")
    path = _str(ctx, "linux.path", entry["path"])
    if not path.startswith("/"):
        raise ctx.fail("linux.path", f"{path!r} is not an absolute path")
    kernels: list[KernelChange] = []
    raw_kernels = entry.get("kernels", [])
    if not isinstance(raw_kernels, list):
        raise ctx.fail("linux.kernels", "must be a list of tables")
    for i, item in enumerate(raw_kernels):
        here = f"linux.kernels[{i}]"
        k = _table(ctx, here, item)
        _keys(ctx, here, k, _KERNEL_KEYS)
        if "since" not in k and "until" not in k:
            raise ctx.fail(here, "needs 'since' or 'until'")
        kernels.append(
            KernelChange(
                note=_str(ctx, f"{here}.note", k.get("note")),
                since=_given(ctx, here, k, "since", _kernel),
                until=_given(ctx, here, k, "until", _kernel),
                default=_given(ctx, here, k, "default", _scalar, kind),
                default_rule=_opt_str(ctx, f"{here}.default_rule", k.get("default_rule")),
                allowed=_given(ctx, here, k, "allowed", _allowed, kind),
                min=_given(ctx, here, k, "min", _number, kind),
                max=_given(ctx, here, k, "max", _number, kind),
            )
        )
    facts = LinuxFacts(
        path=path,
        persist=_str(ctx, "linux.persist", entry["persist"]),
        link=links["linux"],
        confidence=_choice(ctx, "linux.confidence", entry["confidence"], CONFIDENCE),
        default=_given(ctx, "linux", entry, "default", _scalar, kind),
        default_rule=_opt_str(ctx, "linux.default_rule", entry.get("default_rule")),
        allowed=_given(ctx, "linux", entry, "allowed", _allowed, kind),
        min=_given(ctx, "linux", entry, "min", _number, kind),
        max=_given(ctx, "linux", entry, "max", _number, kind),
        note=_opt_str(ctx, "linux.note", entry.get("note")),
        kernels=tuple(kernels),
    )
    _check_value(ctx, "linux", facts.default, facts.min, facts.max, facts.allowed, kind)
    return facts


# -- knobs and files -----------------------------------------------------------------------


def _knob(file: Path, area: str, index: int, raw: Any) -> Knob:
    ctx = _Ctx(file, f"#{index + 1}")
    table = _table(ctx, "", raw)
    if isinstance(table.get("name"), str):
        ctx.knob = table["name"]
    _keys(ctx, "", table, _KNOB_KEYS)
    for key in _KNOB_REQUIRED:
        if key not in table:
            raise ctx.fail("", f"missing required key {key!r}")
    name = _str(ctx, "name", table["name"])
    if not _NAME.match(name):
        raise ctx.fail("name", f"{name!r} must be lower case: letters, digits, _ . / -")
    kind = _choice(ctx, "kind", table["kind"], KINDS)
    value_type = _choice(ctx, "type", table["type"], TYPES)
    unit = _choice(ctx, "unit", table["unit"], UNITS)
    if value_type == "size" and unit != "bytes":
        raise ctx.fail("unit", "a size knob is measured in bytes")
    inputs = _str_list(ctx, "inputs", table["inputs"])
    for item in inputs:
        if item not in INPUTS:
            raise ctx.fail("inputs", f"{item!r} is not a known fact (see INPUTS in model.py)")
    links_raw = _table(ctx, "links", table["links"])
    _keys(ctx, "links", links_raw, _LINK_KEYS)
    links = {k: _https(ctx, f"links.{k}", v) for k, v in links_raw.items()}
    advice_only = _bool(ctx, "advice_only", table.get("advice_only", False))
    advice_lines = _str_list(ctx, "advice_lines", table.get("advice_lines", []))
    if advice_only != bool(advice_lines):
        raise ctx.fail("advice_lines", "advice_only = true needs advice_lines, and only then")
    if kind == "advice" and not advice_only:
        raise ctx.fail("advice_only", "a knob of kind 'advice' must be advice_only")
    text: Callable[[str], str] = lambda key: _str(ctx, key, table[key], text=True)  # noqa: E731

    lifecycle: tuple[tuple[Flavour, Lifecycle], ...] = ()
    server: tuple[LineFacts, ...] = ()
    linux = None
    if kind == "server_variable":
        if "linux" in table:
            raise ctx.fail("linux", "a server variable has no linux facts")
        if "lifecycle" not in table or "server" not in table:
            raise ctx.fail("", "a server variable needs 'lifecycle' and 'server' tables")
        lifecycle = _lifecycles(ctx, table["lifecycle"], links)
        server = _server(ctx, table["server"], value_type, lifecycle, links)
    else:
        if "lifecycle" in table or "server" in table:
            raise ctx.fail("", f"a {kind} knob has no 'lifecycle' or 'server' tables")
        if "linux" not in table:
            raise ctx.fail("", f"a {kind} knob needs a 'linux' table")
        linux = _linux(ctx, table["linux"], value_type, links)
    return Knob(
        name=name,
        area=area,
        kind=kind,
        type=value_type,
        unit=unit,
        slider=_choice(ctx, "slider", table["slider"], SLIDERS),
        inputs=inputs,
        related=_str_list(ctx, "related", table["related"]),
        title=_str(ctx, "title", table["title"]),
        what=text("what"),
        why_writes=text("why_writes"),
        risks=text("risks"),
        verify=_str(ctx, "verify", table["verify"]),
        advice=text("advice"),
        advice_mysql=text("advice_mysql") if "advice_mysql" in table else "",
        advice_mariadb=text("advice_mariadb") if "advice_mariadb" in table else "",
        field_reports=_str_list(ctx, "field_reports", table.get("field_reports", [])),
        advice_only=advice_only,
        advice_lines=advice_lines,
        lifecycle=lifecycle,
        server=server,
        linux=linux,
    )


def load_file(file: Path) -> tuple[Knob, ...]:
    """Read and validate one catalogue file (related names are checked by the caller)."""
    ctx = _Ctx(file, "")
    try:
        with open(file, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{file.name}: not valid TOML: {exc}", f"Fix {file}.") from None
    except OSError as exc:
        raise CatalogueError(f"Cannot read the catalogue file {file}: {exc.strerror}.") from None
    unknown = sorted(set(data) - {"knob"})
    if unknown:
        raise CatalogueError(
            f"{file.name}: unknown top-level key {unknown[0]!r} "
            "(only [[knob]] tables belong here).",
            f"Fix {file}.",
        )
    raw = data.get("knob")
    if not isinstance(raw, list) or not raw:
        raise ctx.fail("", "the file declares no [[knob]]")
    return tuple(_knob(file, file.stem, i, entry) for i, entry in enumerate(raw))


def check_references(knobs: tuple[Knob, ...], source: Path) -> None:
    """Names are unique; ``related`` names knobs that exist."""
    seen: dict[str, str] = {}
    for knob in knobs:
        if knob.name in seen:
            raise CatalogueError(
                f"{knob.area}.toml: knob {knob.name!r} is also declared in {seen[knob.name]}.toml.",
                f"Keep one declaration in {source}.",
            )
        seen[knob.name] = knob.area
    for knob in knobs:
        for other in knob.related:
            if other not in seen or other == knob.name:
                raise CatalogueError(
                    f"{knob.area}.toml: knob {knob.name!r}, related: {other!r} is not another "
                    "knob of the catalogue.",
                    f"Fix {source}.",
                )
