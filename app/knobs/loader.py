"""Strict loader for resources/knobs/*.toml (schema: resources/knobs/README.md).

Every mistake is an error that names the file and the knob: an unknown key, a missing
field, a value of the wrong type, a malformed version, a default outside the allowed
values or the range, a link that is not https. Nothing is guessed or silently skipped.

A knob's own keys are read here; its server-variable tables by :mod:`app.knobs.serverfacts`,
an OS knob's by :mod:`app.knobs.linuxfacts`, each value by the readers of :mod:`app.knobs.fields`.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.domain.server import Flavour
from app.knobs.fields import (
    Ctx,
    as_bool,
    as_choice,
    as_https,
    as_str,
    as_str_list,
    as_table,
    check_keys,
)
from app.knobs.linuxfacts import linux_facts
from app.knobs.model import (
    INPUTS,
    KINDS,
    SLIDERS,
    TYPES,
    UNITS,
    CatalogueError,
    Knob,
    Lifecycle,
    LineFacts,
)
from app.knobs.serverfacts import lifecycles, server_lines
from app.resources import resource_path

DEFAULT_DIR = resource_path("knobs")

_NAME = re.compile(r"^[a-z][a-z0-9_./-]*$")

# The TOML tables mirror the model: a knob's "area" is its file, and its links fill each
# line's link.
_KNOB_FIELDS = [f for f in dataclasses.fields(Knob) if f.name != "area"]
_KNOB_KEYS = {f.name for f in _KNOB_FIELDS} | {"links"}
_KNOB_REQUIRED = [
    *(f.name for f in _KNOB_FIELDS if f.default is dataclasses.MISSING),
    "links",
]
_LINK_KEYS = {"mysql", "mariadb", "linux"}


# -- knobs and files -----------------------------------------------------------------------


def _knob(file: Path, area: str, index: int, raw: Any) -> Knob:
    ctx = Ctx(file, f"#{index + 1}")
    table = as_table(ctx, "", raw)
    if isinstance(table.get("name"), str):
        ctx.knob = table["name"]
    check_keys(ctx, "", table, _KNOB_KEYS)
    for key in _KNOB_REQUIRED:
        if key not in table:
            raise ctx.fail("", f"missing required key {key!r}")
    name = as_str(ctx, "name", table["name"])
    if not _NAME.match(name):
        raise ctx.fail("name", f"{name!r} must be lower case: letters, digits, _ . / -")
    kind = as_choice(ctx, "kind", table["kind"], KINDS)
    value_type = as_choice(ctx, "type", table["type"], TYPES)
    unit = as_choice(ctx, "unit", table["unit"], UNITS)
    if value_type == "size" and unit != "bytes":
        raise ctx.fail("unit", "a size knob is measured in bytes")
    inputs = as_str_list(ctx, "inputs", table["inputs"])
    for item in inputs:
        if item not in INPUTS:
            raise ctx.fail("inputs", f"{item!r} is not a known fact (see INPUTS in model.py)")
    links_raw = as_table(ctx, "links", table["links"])
    check_keys(ctx, "links", links_raw, _LINK_KEYS)
    links = {k: as_https(ctx, f"links.{k}", v) for k, v in links_raw.items()}
    advice_only = as_bool(ctx, "advice_only", table.get("advice_only", False))
    advice_lines = as_str_list(ctx, "advice_lines", table.get("advice_lines", []))
    if advice_only != bool(advice_lines):
        raise ctx.fail("advice_lines", "advice_only = true needs advice_lines, and only then")
    if kind == "advice" and not advice_only:
        raise ctx.fail("advice_only", "a knob of kind 'advice' must be advice_only")
    text: Callable[[str], str] = lambda key: as_str(ctx, key, table[key], text=True)  # noqa: E731

    lifecycle: tuple[tuple[Flavour, Lifecycle], ...] = ()
    server: tuple[LineFacts, ...] = ()
    linux = None
    if kind == "server_variable":
        if "linux" in table:
            raise ctx.fail("linux", "a server variable has no linux facts")
        if "lifecycle" not in table or "server" not in table:
            raise ctx.fail("", "a server variable needs 'lifecycle' and 'server' tables")
        lifecycle = lifecycles(ctx, table["lifecycle"], links)
        server = server_lines(ctx, table["server"], value_type, lifecycle, links)
    else:
        if "lifecycle" in table or "server" in table:
            raise ctx.fail("", f"a {kind} knob has no 'lifecycle' or 'server' tables")
        if "linux" not in table:
            raise ctx.fail("", f"a {kind} knob needs a 'linux' table")
        linux = linux_facts(ctx, table["linux"], value_type, links)
    return Knob(
        name=name,
        area=area,
        kind=kind,
        type=value_type,
        unit=unit,
        slider=as_choice(ctx, "slider", table["slider"], SLIDERS),
        inputs=inputs,
        related=as_str_list(ctx, "related", table["related"]),
        title=as_str(ctx, "title", table["title"]),
        what=text("what"),
        why_writes=text("why_writes"),
        risks=text("risks"),
        verify=as_str(ctx, "verify", table["verify"]),
        advice=text("advice"),
        advice_mysql=text("advice_mysql") if "advice_mysql" in table else "",
        advice_mariadb=text("advice_mariadb") if "advice_mariadb" in table else "",
        field_reports=as_str_list(ctx, "field_reports", table.get("field_reports", [])),
        advice_only=advice_only,
        advice_lines=advice_lines,
        lifecycle=lifecycle,
        server=server,
        linux=linux,
    )


def load_file(file: Path) -> tuple[Knob, ...]:
    """Read and validate one catalogue file (related names are checked by the caller)."""
    ctx = Ctx(file, "")
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
