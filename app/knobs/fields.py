"""The typed readers of the knob catalogue's TOML: each value checked, each error placed.

Every mistake is an error that names the file, the knob and the field: an unknown key, a
value of the wrong type, a malformed version, a default outside the allowed values or the
range, a link that is not https.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from app.knobs.model import CatalogueError, Value

T = TypeVar("T")

_VERSION = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,4})$")
_KERNEL = re.compile(r"^(\d{1,2})\.(\d{1,3})$")
_MIN_TEXT = 20


def field_names(cls: type, drop: tuple[str, ...] = (), add: tuple[str, ...] = ()) -> set[str]:
    """The keys a table may have: the model's fields, less derived ones, plus TOML-only ones."""
    return {f.name for f in dataclasses.fields(cls) if f.name not in drop} | set(add)


class Ctx:
    """Where we are, so that every error names the file, the knob and the field."""

    def __init__(self, file: Path, knob: str = "?") -> None:
        self.file = file
        self.knob = knob

    def fail(self, where: str, problem: str) -> CatalogueError:
        """The error for ``problem`` at ``where``, naming the file and the knob."""
        place = f"{self.file.name}: knob {self.knob!r}" + (f", {where}" if where else "")
        return CatalogueError(
            f"{place}: {problem}",
            f"Fix {self.file} (the schema is in {self.file.parent / 'README.md'}).",
        )


# -- small typed readers ---------------------------------------------------------------


def check_keys(ctx: Ctx, where: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse a key of ``table`` that is not in ``allowed``."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ctx.fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")


def as_table(ctx: Ctx, where: str, value: Any) -> dict[str, Any]:
    """``value`` as a TOML table."""
    if not isinstance(value, dict):
        raise ctx.fail(where, f"must be a table, not {type(value).__name__}")
    return value


def as_str(ctx: Ctx, where: str, value: Any, *, text: bool = False) -> str:
    """``value`` as a non-empty string on one line (``text``: long enough to explain)."""
    if not isinstance(value, str) or not value.strip():
        raise ctx.fail(where, "must be a non-empty string")
    cleaned = " ".join(value.split())  # hard-wrapped TOML paragraphs become one line
    if text and len(cleaned) < _MIN_TEXT:
        raise ctx.fail(where, f"is too short to explain anything ({len(cleaned)} characters)")
    return cleaned


def as_opt_str(ctx: Ctx, where: str, value: Any) -> str | None:
    """``value`` as a string, or None when absent or empty."""
    if value is None or value == "":
        return None  # "" clears a note inherited through same_as
    return as_str(ctx, where, value)


def as_bool(ctx: Ctx, where: str, value: Any) -> bool:
    """``value`` as true or false."""
    if not isinstance(value, bool):
        raise ctx.fail(where, f"must be true or false, not {value!r}")
    return value


def as_str_list(ctx: Ctx, where: str, value: Any) -> tuple[str, ...]:
    """``value`` as a list of non-empty strings."""
    if not isinstance(value, list):
        raise ctx.fail(where, "must be a list of strings")
    return tuple(as_str(ctx, f"{where}[{i}]", item) for i, item in enumerate(value))


def as_choice(ctx: Ctx, where: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` as one of ``choices``."""
    if value not in choices:
        raise ctx.fail(where, f"{value!r} is not one of {', '.join(choices)}")
    return str(value)


def as_version(ctx: Ctx, where: str, value: Any) -> tuple[int, int, int]:
    """``value`` as a full server version like 8.0.30."""
    match = _VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise ctx.fail(where, f"{value!r} is not a full version like 8.0.30")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def as_kernel(ctx: Ctx, where: str, value: Any) -> tuple[int, int]:
    """``value`` as a kernel version like 5.0."""
    match = _KERNEL.match(value) if isinstance(value, str) else None
    if match is None:
        raise ctx.fail(where, f"{value!r} is not a kernel version like 5.0")
    return (int(match.group(1)), int(match.group(2)))


def as_https(ctx: Ctx, where: str, value: Any) -> str:
    """``value`` as an https:// link."""
    link = as_str(ctx, where, value)
    if not link.startswith("https://") or " " in link:
        raise ctx.fail(where, f"{link!r} is not an https:// link")
    return link


def given(
    ctx: Ctx, where: str, entry: Mapping[str, Any], key: str, read: Callable[..., T], *args: Any
) -> T | None:
    """``entry[key]`` read by ``read`` (with ``args``), or None when the key is not there."""
    return read(ctx, f"{where}.{key}", entry[key], *args) if key in entry else None


def as_scalar(ctx: Ctx, where: str, value: Any, kind: str) -> Value:
    """A value of the knob's type (bool, int/size, float, enum string)."""
    if kind == "bool":
        return as_bool(ctx, where, value)
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


def as_number(ctx: Ctx, where: str, value: Any, kind: str) -> int | float:
    """``value`` as a number of a numeric knob (for its min and max)."""
    if kind not in ("int", "size", "float"):
        raise ctx.fail(where, f"a {kind} knob has no numeric range")
    result = as_scalar(ctx, where, value, kind)
    assert isinstance(result, int | float)  # noqa: S101 - narrowed by as_scalar above
    return result


def as_allowed(ctx: Ctx, where: str, value: Any, kind: str) -> tuple[Value, ...]:
    """``value`` as the non-empty list of values an int or enum knob allows."""
    if kind not in ("int", "enum"):
        raise ctx.fail(where, f"a {kind} knob takes no list of allowed values")
    if not isinstance(value, list) or not value:
        raise ctx.fail(where, "must be a non-empty list")
    items = tuple(as_scalar(ctx, f"{where}[{i}]", v, kind) for i, v in enumerate(value))
    if len(set(items)) != len(items):
        raise ctx.fail(where, "lists a value twice")
    return items


def check_value(
    ctx: Ctx,
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
