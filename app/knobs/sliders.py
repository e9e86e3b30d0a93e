"""The sliders as declared in resources/sliders.toml, loaded strictly (schema: that file's header).

The Trade-offs page, the CLI's slider options and the planner's sentences are built from
these declarations; the planner's rules keep only what depends on the host's facts. Every
mistake in the file is an error naming the slider and the field: an unknown key, a missing
field, a value SliderPositions refuses, a default the domain's defaults disagree with.
"""

from __future__ import annotations

import dataclasses
import functools
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.domain.errors import InnoTuneError
from app.domain.plan import SliderPositions
from app.resources import resource_path

DEFAULT_FILE = resource_path("sliders.toml")

KINDS = ("choice", "presets", "percent", "switch")
PositionValue = str | int | bool | None

# Keys of a slider (True: required) and the kinds each optional key belongs to.
_SLIDER_KEYS = {
    "number": True,
    "title": True,
    "explanation": True,
    "kind": True,
    "option": True,
    "help": True,
    "default": True,
    "field": False,
    "position": False,
    "unit": False,
    "range": False,
    "step": False,
    "checkbox": False,
    "locked": False,
}
_KIND_KEYS = {
    "choice": {"position"},
    "presets": {"position", "unit", "range"},
    "percent": {"unit", "range", "step"},
    "switch": {"position", "checkbox", "locked"},
}
_POSITION_KEYS = {"name", "aliases", "value", "label", "help", "sentence", "knobs", "why", "risk"}
# The fields a text may quote.
_HELP_FIELDS = {"positions", "min", "max", "default"}
_RULE_FIELDS = {"seconds"}


class SliderError(InnoTuneError):
    """resources/sliders.toml is malformed (names the slider and the field)."""


@dataclass(frozen=True)
class Position:
    """One position of a slider: its CLI word, its value and its words."""

    name: str
    value: PositionValue
    aliases: tuple[str, ...] = ()
    label: str | None = None
    help: str | None = None
    sentence: str | None = None  # None: the planner words it from the facts
    knobs: Mapping[str, str] = field(default_factory=dict)
    why: str | None = None
    risk: str | None = None


@dataclass(frozen=True)
class Slider:
    """One slider: a section of the Trade-offs page, a CLI option and a sentence in the plan."""

    key: str
    field: str
    number: str
    title: str
    explanation: str
    kind: str
    option: str
    help: str
    default: PositionValue
    positions: tuple[Position, ...] = ()
    unit: str | None = None
    range: tuple[int, int] | None = None
    step: int = 1
    checkbox: str | None = None
    locked: str | None = None

    @property
    def heading(self) -> str:
        """The number and the title, as the page and the plan text show them."""
        return f"{self.number}. {self.title}"

    def position(self, name: str) -> Position:
        """The position with that name (or alias).

        Raises:
            ValueError: no such position.
        """
        for spot in self.positions:
            if name == spot.name or name in spot.aliases:
                return spot
        raise ValueError(f"{self.key} has no position {name!r}")

    def at(self, value: object) -> Position | None:
        """The position whose value this is, if one is declared."""
        return next((p for p in self.positions if _same(p.value, value)), None)


def _same(a: object, b: object) -> bool:
    """Equal and of the same type: True is not the position 1."""
    return type(a) is type(b) and a == b


class _Ctx:
    def __init__(self, file: Path, slider: str) -> None:
        self.file, self.slider = file, slider

    def fail(self, where: str, problem: str) -> SliderError:
        place = f"{self.file.name}: slider {self.slider!r}" + (f", {where}" if where else "")
        return SliderError(f"{place}: {problem}", f"Fix {self.file} (the schema is its header).")


def _keys(ctx: _Ctx, where: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ctx.fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _text(ctx: _Ctx, where: str, value: Any, fields: set[str] | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ctx.fail(where, "must be a non-empty string")
    try:
        quoted = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
    except ValueError as exc:
        raise ctx.fail(where, f"is not a valid text template: {exc}") from None
    if quoted - (fields or set()):
        allowed = ", ".join("{" + f + "}" for f in sorted(fields or ())) or "none"
        raise ctx.fail(where, f"quotes {sorted(quoted)[0]!r} (allowed: {allowed})")
    return " ".join(value.split())  # wrapped TOML paragraphs become one line


def _opt_text(ctx: _Ctx, where: str, table: Mapping[str, Any], key: str) -> str | None:
    fields = _RULE_FIELDS if key in ("why", "risk", "sentence") else None
    return _text(ctx, f"{where}{key}", table[key], fields) if key in table else None


def _position(ctx: _Ctx, kind: str, index: int, raw: Any) -> Position:
    where = f"position[{index}]"
    if not isinstance(raw, dict):
        raise ctx.fail(where, "must be a table")
    _keys(ctx, where, raw, _POSITION_KEYS)
    if "name" not in raw:
        raise ctx.fail(where, "missing field 'name'")
    name = _text(ctx, f"{where}.name", raw["name"])
    where = f"position {name!r}"
    value: PositionValue
    if kind == "choice":
        if "value" in raw:
            raise ctx.fail(where, "a choice's value is its name: no 'value'")
        value = name
    elif kind == "presets":
        value = raw.get("value")  # left out: keep things as they are
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ctx.fail(f"{where}.value", f"must be a whole number, not {value!r}")
    else:
        value = raw.get("value")
        if not isinstance(value, bool):
            raise ctx.fail(f"{where}.value", "a switch position's value must be true or false")
    if kind == "switch" and "label" in raw:
        raise ctx.fail(where, "a switch shows its slider's 'checkbox', not a 'label'")
    if kind != "switch" and "label" not in raw:
        raise ctx.fail(where, "missing field 'label' (the words beside the page's slider)")
    if kind != "choice" and "help" in raw:
        raise ctx.fail(where, "only a choice's positions have a 'help'")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list):
        raise ctx.fail(f"{where}.aliases", "must be a list of words")
    knobs = raw.get("knobs", {})
    if not isinstance(knobs, dict) or not all(isinstance(v, str) for v in knobs.values()):
        raise ctx.fail(f"{where}.knobs", 'must be a table of knob = "value" strings')
    if ("why" in raw or "risk" in raw) and not knobs:
        raise ctx.fail(where, "'why' and 'risk' explain a change: they need 'knobs'")
    return Position(
        name=name,
        value=value,
        aliases=tuple(_text(ctx, f"{where}.aliases", a) for a in aliases),
        label=_opt_text(ctx, f"{where}.", raw, "label"),
        help=_opt_text(ctx, f"{where}.", raw, "help"),
        sentence=_opt_text(ctx, f"{where}.", raw, "sentence"),
        knobs=dict(knobs),
        why=_opt_text(ctx, f"{where}.", raw, "why"),
        risk=_opt_text(ctx, f"{where}.", raw, "risk"),
    )


def _range(ctx: _Ctx, raw: Any) -> tuple[int, int]:
    ok = (
        isinstance(raw, list)
        and len(raw) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
        and raw[0] < raw[1]
    )
    if not ok:
        raise ctx.fail("range", f"must be [low, high], two whole numbers, not {raw!r}")
    return raw[0], raw[1]


def _check_positions(ctx: _Ctx, slider: Slider) -> None:
    """Positions: at least two, names and values unique, every value one SliderPositions takes."""
    spots = slider.positions
    if slider.kind != "percent" and len(spots) < 2:
        raise ctx.fail("position", "needs at least two positions")
    words = [w for p in spots for w in (p.name, *p.aliases)]
    if len(set(words)) != len(words):
        raise ctx.fail("position", "two positions share a name or alias")
    values = [p.value for p in spots]
    if any(_same(a, b) for i, a in enumerate(values) for b in values[i + 1 :]):
        raise ctx.fail("position", "two positions share a value")
    if slider.kind == "switch" and len(values) != 2:  # unique booleans: true and false
        raise ctx.fail("position", "a switch has exactly two positions: true and false")
    tried = list(values)
    if slider.range is not None:
        tried += list(slider.range)
    for value in tried:
        try:
            probe: dict[str, Any] = {slider.field: value}
            SliderPositions(**probe)
        except (TypeError, ValueError) as exc:
            raise ctx.fail("position", f"SliderPositions refuses {value!r}: {exc}") from None


def _default(ctx: _Ctx, slider: Slider, raw: Any) -> PositionValue:
    """The default position's value; it must be SliderPositions' default too."""
    if slider.kind == "percent":
        low, high = slider.range or (0, 0)
        if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
            raise ctx.fail("default", f"must be a whole number in {low}-{high}, not {raw!r}")
        value: PositionValue = raw
    else:
        if not isinstance(raw, str):
            raise ctx.fail("default", f"must name a position, not {raw!r}")
        try:
            value = slider.position(raw).value
        except ValueError as exc:
            raise ctx.fail("default", str(exc)) from None
    domain = getattr(SliderPositions(), slider.field)
    if not _same(domain, value):
        raise ctx.fail("default", f"is {value!r}, but SliderPositions() starts at {domain!r}")
    return value


def _slider(ctx: _Ctx, key: str, raw: Any) -> Slider:
    if not isinstance(raw, dict):
        raise ctx.fail("", "must be a table")
    _keys(ctx, "", raw, set(_SLIDER_KEYS))
    missing = [k for k, needed in _SLIDER_KEYS.items() if needed and k not in raw]
    if missing:
        raise ctx.fail("", f"missing field {missing[0]!r}")
    kind = raw["kind"]
    if kind not in KINDS:
        raise ctx.fail("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    stray = sorted(k for k in raw if not _SLIDER_KEYS[k] and k != "field")
    stray = [k for k in stray if k not in _KIND_KEYS[kind]]
    if stray:
        raise ctx.fail(stray[0], f"a {kind} slider has no {stray[0]!r}")
    for key_ in sorted(_KIND_KEYS[kind] - {"step", "locked"}):
        if key_ not in raw:
            raise ctx.fail("", f"a {kind} slider needs {key_!r}")
    name = raw.get("field", key)
    fields = {f.name for f in dataclasses.fields(SliderPositions)} - {"rejected"}
    if name not in fields:
        raise ctx.fail(
            "field", f"SliderPositions has no {name!r} (it has {', '.join(sorted(fields))})"
        )
    step = raw.get("step", 1)
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ctx.fail("step", f"must be a whole number of at least 1, not {step!r}")
    spots = raw.get("position", [])
    if not isinstance(spots, list):
        raise ctx.fail("position", "must be an array of tables ([[<slider>.position]])")
    slider = Slider(
        key=key,
        field=name,
        number=_text(ctx, "number", raw["number"]),
        title=_text(ctx, "title", raw["title"]),
        explanation=_text(ctx, "explanation", raw["explanation"]),
        kind=kind,
        option=_text(ctx, "option", raw["option"]),
        help=_text(ctx, "help", raw["help"], _HELP_FIELDS),
        default=None,
        positions=tuple(_position(ctx, kind, i, p) for i, p in enumerate(spots)),
        unit=_text(ctx, "unit", raw["unit"]) if "unit" in raw else None,
        range=_range(ctx, raw["range"]) if "range" in raw else None,
        step=step,
        checkbox=_text(ctx, "checkbox", raw["checkbox"]) if "checkbox" in raw else None,
        locked=_text(ctx, "locked", raw["locked"]) if "locked" in raw else None,
    )
    _check_positions(ctx, slider)
    return dataclasses.replace(slider, default=_default(ctx, slider, raw["default"]))


def load_sliders(path: Path = DEFAULT_FILE) -> tuple[Slider, ...]:
    """Every slider of ``path``, in its order.

    Raises:
        SliderError: the file is missing, not TOML, or breaks the schema.
    """
    file_ctx = _Ctx(path, "?")
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise file_ctx.fail("", f"cannot be read: {exc}") from None
    sliders = tuple(_slider(_Ctx(path, key), key, raw) for key, raw in data.items())
    for attr in ("field", "number", "option"):
        seen = [getattr(s, attr) for s in sliders]
        twice = sorted({v for v in seen if seen.count(v) > 1})
        if twice:
            raise file_ctx.fail("", f"two sliders share the {attr} {twice[0]!r}")
    fields = {f.name for f in dataclasses.fields(SliderPositions)} - {"rejected"}
    undeclared = sorted(fields - {s.field for s in sliders})
    if undeclared:
        raise file_ctx.fail("", f"no slider declares SliderPositions.{undeclared[0]}")
    return sliders


@functools.cache
def sliders() -> tuple[Slider, ...]:
    """The shipped sliders, in page order, loaded once per process."""
    return load_sliders()


def slider(key: str) -> Slider:
    """One shipped slider by its key (crash_loss, memory, ...).

    Raises:
        ValueError: no such slider.
    """
    for declared in sliders():
        if declared.key == key:
            return declared
    raise ValueError(f"unknown slider {key!r}")


def slider_keys() -> tuple[str, ...]:
    """The sliders' keys, in page order."""
    return tuple(s.key for s in sliders())
