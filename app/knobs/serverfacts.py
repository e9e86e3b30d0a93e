"""A server variable's tables: its lifecycle per product, its facts per release line.

A line may borrow from another (``same_as``); a line's changes within its releases are
checked in order, and every state the line goes through must be consistent.
"""

from __future__ import annotations

from typing import Any

from app.domain.server import Flavour
from app.knobs.fields import (
    Ctx,
    as_allowed,
    as_bool,
    as_choice,
    as_https,
    as_number,
    as_opt_str,
    as_scalar,
    as_str,
    as_table,
    as_version,
    check_keys,
    check_value,
    field_names,
    given,
)
from app.knobs.model import (
    ALL_LINES,
    CONFIDENCE,
    LINES,
    Change,
    Lifecycle,
    LineFacts,
    Value,
    line_key,
)

# A line gives no "line" (it is the table's key) and may borrow from another ("same_as"); a
# lifecycle is one table per product.
_LINE_KEYS = field_names(LineFacts, drop=("line",), add=("same_as",))
_CHANGE_KEYS = field_names(Change)
_LIFECYCLE_KEYS = field_names(Lifecycle)


def lifecycles(ctx: Ctx, raw: Any, links: dict[str, str]) -> tuple[tuple[Flavour, Lifecycle], ...]:
    """The ``lifecycle`` table: when each product added, deprecated or removed the variable."""
    table = as_table(ctx, "lifecycle", raw)
    check_keys(ctx, "lifecycle", table, {"mysql", "mariadb"})
    result = []
    for family in (Flavour.MYSQL, Flavour.MARIADB):
        where = f"lifecycle.{family.value}"
        if family.value not in table:
            raise ctx.fail(where, "is missing (write an empty table, or absent = true)")
        entry = as_table(ctx, where, table[family.value])
        check_keys(ctx, where, entry, _LIFECYCLE_KEYS)
        absent = as_bool(ctx, f"{where}.absent", entry.get("absent", False))
        points = {
            key: as_version(ctx, f"{where}.{key}", entry[key])
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
                    note=as_opt_str(ctx, f"{where}.note", entry.get("note")),
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
    ctx: Ctx, lines: dict[str, Any], key: str, seen: tuple[str, ...]
) -> dict[str, Any]:
    where = f"server.{key}"
    entry = as_table(ctx, where, lines[key])
    check_keys(ctx, where, entry, _LINE_KEYS)
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
    ctx: Ctx,
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
        entry = as_table(ctx, here, item)
        check_keys(ctx, here, entry, _CHANGE_KEYS)
        if "since" not in entry or "note" not in entry:
            raise ctx.fail(here, "needs 'since' and 'note'")
        since = as_version(ctx, f"{here}.since", entry["since"])
        # A line's facts also serve the releases up to the next covered line (MariaDB
        # 10.9 and 10.10 use mariadb-10.6's), so a change may come from one of those.
        if not series <= since[:2] < upto:
            raise ctx.fail(here, f"since {entry['since']} is not a release this line serves")
        if result and since <= result[-1].since:
            raise ctx.fail(here, "changes must be in increasing 'since' order")
        result.append(
            Change(
                since=since,
                note=as_str(ctx, f"{here}.note", entry["note"]),
                default=given(ctx, here, entry, "default", as_scalar, kind),
                dynamic=given(ctx, here, entry, "dynamic", as_bool),
                min=given(ctx, here, entry, "min", as_number, kind),
                max=given(ctx, here, entry, "max", as_number, kind),
                allowed=given(ctx, here, entry, "allowed", as_allowed, kind),
                ignored=given(ctx, here, entry, "ignored", as_bool),
                deprecated=given(ctx, here, entry, "deprecated", as_bool),
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
    ctx: Ctx, key: str, entry: dict[str, Any], kind: str, links: dict[str, str]
) -> LineFacts:
    where = f"server.{key}"
    family, _, number = key.partition("-")
    series = (int(number.split(".")[0]), int(number.split(".")[1]))
    for required in ("default", "dynamic", "confidence"):
        if required not in entry:
            raise ctx.fail(where, f"missing required key {required!r}")
    if "link" in entry:
        link = as_https(ctx, f"{where}.link", entry["link"])
    elif family in links:
        link = links[family].replace("{line}", number)
    else:
        raise ctx.fail(where, f"has no link and links.{family} is missing")
    if family == "mysql" and f"/{number}/" not in link:
        raise ctx.fail(where, f"link {link!r} is not the {number} manual")
    facts = LineFacts(
        line=key,
        default=as_scalar(ctx, f"{where}.default", entry["default"], kind),
        dynamic=as_bool(ctx, f"{where}.dynamic", entry["dynamic"]),
        link=link,
        confidence=as_choice(ctx, f"{where}.confidence", entry["confidence"], CONFIDENCE),
        default_rule=as_opt_str(ctx, f"{where}.default_rule", entry.get("default_rule")),
        help_default=_help_default(ctx, f"{where}.help_default", entry.get("help_default")),
        min=given(ctx, where, entry, "min", as_number, kind),
        max=given(ctx, where, entry, "max", as_number, kind),
        allowed=given(ctx, where, entry, "allowed", as_allowed, kind),
        restart_values=given(ctx, where, entry, "restart_values", as_allowed, kind) or (),
        block=_block(ctx, f"{where}.block", entry.get("block")),
        ignored=as_bool(ctx, f"{where}.ignored", entry.get("ignored", False)),
        deprecated=as_bool(ctx, f"{where}.deprecated", entry.get("deprecated", False)),
        note=as_opt_str(ctx, f"{where}.note", entry.get("note")),
        changes=_changes(
            ctx, f"{where}.changes", entry.get("changes", []), kind, series, _next_line(key)
        ),
    )
    check_value(ctx, where, facts.default, facts.min, facts.max, facts.allowed, kind)
    # Every state the line goes through must be consistent, not only its first release.
    state = (facts.default, facts.min, facts.max, facts.allowed)
    for change in facts.changes:
        state = (
            change.default if change.default is not None else state[0],
            change.min if change.min is not None else state[1],
            change.max if change.max is not None else state[2],
            change.allowed if change.allowed is not None else state[3],
        )
        check_value(ctx, f"{where} from {'.'.join(map(str, change.since))}", *state, kind)
    return facts


def _help_default(ctx: Ctx, where: str, value: Any) -> Value | None:
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        return value
    raise ctx.fail(where, f"must be a plain value, not {type(value).__name__}")


def _block(ctx: Ctx, where: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ctx.fail(where, f"must be a positive integer, not {value!r}")
    return value


def server_lines(
    ctx: Ctx,
    raw: Any,
    kind: str,
    lifecycle: tuple[tuple[Flavour, Lifecycle], ...],
    links: dict[str, str],
) -> tuple[LineFacts, ...]:
    """The ``server`` tables: the facts of every release line that knows the variable."""
    lines = as_table(ctx, "server", raw)
    check_keys(ctx, "server", lines, set(ALL_LINES))
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
