"""The planner: facts + slider positions + catalogue → Plan. Pure and deterministic, no I/O.

>>> plan = make_plan(facts, default_positions(facts), default_catalogue())  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, FactsSummary, Plan, SliderPositions
from app.knobs import Catalogue, default_catalogue
from app.knobs.sliders import slider_keys
from app.knobs.sliders import sliders as declared_sliders
from app.planner import rules
from app.planner.context import Ctx, PlanError
from app.planner.slidertexts import describe as declared_sentence
from app.planner.starts import default_positions, starting_points

__all__ = [
    "PlanError",
    "default_positions",
    "describe",
    "facts_checksum",
    "make_plan",
    "sentences",
    "starting_points",
]


# The last facts checksummed: facts are frozen, so the same object has the same checksum.
# The Trade-offs page plans on every slider move; serialising the facts each time was
# most of the cost (about 85 ms of a 100 ms plan).
_last_checksum: tuple[HostFacts, str] | None = None


# Each dataclass's field names (None: not a dataclass), looked up once per class.
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _jsonable(value: Any) -> Any:
    """Exactly :func:`app.domain.facts.to_jsonable`, about twice as fast.

    The generic version asks ``dataclasses.fields`` again for each of the facts' thousands
    of values; the first plan of new facts on the Trade-offs page waits for this.
    """
    if value is None or isinstance(value, str | int | float):
        return value
    cls = type(value)
    try:
        names = _FIELDS[cls]
    except KeyError:
        names = _FIELDS[cls] = (
            tuple(f.name for f in dataclasses.fields(cls))
            if dataclasses.is_dataclass(cls)
            else None
        )
    if names is not None:
        return {name: _jsonable(getattr(value, name)) for name in names}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def facts_checksum(facts: HostFacts) -> str:
    """sha256 of the facts' JSON: the same facts always give the same checksum."""
    global _last_checksum
    if _last_checksum is not None and _last_checksum[0] is facts:
        return _last_checksum[1]
    compact = json.dumps(_jsonable(facts), separators=(",", ":"))  # the C encoder: fast
    digest = hashlib.sha256(compact.encode()).hexdigest()
    _last_checksum = (facts, digest)
    return digest


def _sentences(ctx: Ctx) -> tuple[tuple[str, str], ...]:
    """Each slider's one-sentence risk at its position: declared, or worded by its rule."""
    said = []
    for s in declared_sliders():
        text = ctx.sentences.get(s.key) or declared_sentence(
            s.key, getattr(ctx.positions, s.field), ctx.facts
        )
        if text:
            said.append((s.key, text))
    return tuple(said)


def sentences(
    facts: HostFacts, positions: SliderPositions, catalogue: Catalogue | None = None
) -> tuple[tuple[str, str], ...]:
    """Each slider's one-sentence risk at its position (from the plan, so its figures agree)."""
    return make_plan(facts, positions, catalogue or default_catalogue()).sentences


def describe(key: str, position: object, facts: HostFacts) -> str:
    """One slider's one-sentence risk at ``position``, the others at their start.

    Raises:
        ValueError: unknown slider or position.
    """
    field = next((s.field for s in declared_sliders() if s.key == key), None)
    if field is None:
        raise ValueError(f"unknown slider {key!r}")
    declared = declared_sentence(key, position, facts)
    if declared is not None:
        return declared
    moved: dict[str, Any] = {field: position}
    positions = dataclasses.replace(default_positions(facts), **moved)
    return dict(sentences(facts, positions)).get(key, "")


def _account_for_the_rest(ctx: Ctx) -> None:
    """Every catalogue knob this server (or host) has ends up changed or left alone, with why."""
    mentioned = {c.key for c in ctx.changes} | {x.knob for x in ctx.left_alone}
    for knob in ctx.catalogue.knobs:
        if knob.name in mentioned:
            continue
        if knob.is_server_variable and ctx.facts_for(knob.name) is None:
            continue  # this version does not have it: nothing to say
        ctx.leave(knob.name, knob.slider, ctx.advice(knob.name))


def make_plan(facts: HostFacts, positions: SliderPositions, catalogue: Catalogue) -> Plan:
    """Turn facts and slider positions into a plan.

    Raises:
        PlanError: the facts hold no server.
        UnsupportedVersion: the server is older than every line the catalogue covers.
    """
    ctx = Ctx.of(facts, positions, catalogue)
    for rule in rules.RULES:
        rule(ctx)
    _account_for_the_rest(ctx)
    order = {s: i for i, s in enumerate(slider_keys())}
    # Stable: rule order kept; changes driven by no slider come last.
    changes = sorted(ctx.changes, key=lambda c: order.get(c.slider, len(order)))
    left = sorted(ctx.left_alone, key=lambda x: order.get(x.slider, len(order)))
    server = ctx.server
    summary = FactsSummary(
        target=facts.target,
        collected_at=facts.collected_at,
        flavour=ctx.version.flavour.value,
        version=server.version,
        datadir=server.datadir,
        checksum=facts_checksum(facts),
    )
    return Plan(
        facts=summary,
        positions=positions,
        sentences=_sentences(ctx),
        changes=tuple(changes),
        left_alone=tuple(left),
        warnings=tuple(ctx.warnings),
        restart_needed=any(c.restart_needed for c in changes),
        pool_rules=tuple(r for r in ctx.pool_rules if plan_has(changes, r.key)),
    )


def plan_has(changes: list[Change], key: str) -> bool:
    """True when a change to ``key`` is in the plan (a rule without its change is moot)."""
    return any(c.key == key for c in changes)
