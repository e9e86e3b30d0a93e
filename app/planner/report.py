"""A plan as text a person reads: the `innotune plan` output (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from app.domain.plan import Change, Plan
from app.domain.words import count
from app.knobs import Catalogue, UnknownKnob, default_catalogue
from app.knobs.sliders import sliders
from app.planner.starts import Start
from app.planner.values import parse_int, size_text


def titles() -> dict[str, str]:
    """The plan text's headings: each slider's (as the Trade-offs page shows it), then the rest."""
    return {s.key: s.heading for s in sliders()} | {"none": "Not driven by a slider"}


def _value(value: str | None, kind: str) -> str:
    if value is None:
        return "(unknown)"
    if kind == "size":
        number = parse_int(value)
        if number is not None:
            return f"{size_text(number)} ({number})"
    return value


def human_value(value: str | None, kind: str) -> str:
    """A value as a person reads it: sizes as 128 MiB (not 134217728); others as they are."""
    if value is None:
        return "(unknown)"
    if kind == "size":
        number = parse_int(value)
        if number is not None:
            return size_text(number)
    return value


def value_words(key: str, value: str) -> str:
    """A setting's value as people read it: a size as 128 MiB, never 134217728."""
    return human_value(value, _kind(default_catalogue(), key))


def spelled(value: str | None, key: str) -> str:
    """A value as the preview shows it: exact, and a size also as people read it.

    "25769803776 (24 GiB)": the bytes the job writes, and the figure Trade-offs and Done
    show (the one formatter, size_text), so the two can be matched.
    """
    if value is None:
        return "?"
    number = parse_int(value)
    if _kind(default_catalogue(), key) != "size" or number is None or number < 1024:
        return value
    return f"{value} ({size_text(number)})"


def change_values(change: Change, catalogue: Catalogue) -> tuple[str, str]:
    """A change's current and proposed values as a person reads them."""
    kind = _kind(catalogue, change.key)
    return human_value(change.current, kind), human_value(change.proposed, kind)


def _kind(catalogue: Catalogue, key: str) -> str:
    try:
        return catalogue.knob(key).type
    except UnknownKnob:
        return "str"


def change_lines(change: Change, catalogue: Catalogue) -> list[str]:
    """One change: what, current → proposed, why, risk, how it applies."""
    kind = _kind(catalogue, change.key)
    where = f" on {change.device}" if change.device else ""
    if change.target == "advice":
        how = "advice only: InnoTune never changes it; add these lines yourself"
    elif change.target == "option_remove":
        how = f"removes the line from {change.path}; the running server does not change"
    elif change.live:
        how = {
            "dynamic": "applies live (SET GLOBAL) and is written to the option file",
            "sysfs": "applies live; kept across reboots by a udev rule",
            "sysctl": "applies live; kept across reboots in /etc/sysctl.d",
        }.get(change.target, "applies live")
    else:
        how = "needs a server restart (option file)"
    lines = [
        f"  * {change.key}{where}: {_value(change.current, kind)} -> "
        f"{_value(change.proposed, kind)}   [{how}]",
        f"      why:  {change.reason}",
        f"      risk: {change.risk}",
    ]
    lines += [f"      add:  {line}" for line in change.advice_lines]
    if change.confidence == "unverified":
        lines.append("      note: the catalogue's facts for this version are unverified")
    lines.append(f"      docs: {change.link}")
    return lines


def ending(changes: int, restart: int) -> str:
    """The plan's last line: how many changes and how they would apply (none is applied yet).

    Args:
        changes: the changes InnoTune would make.
        restart: how many of them take effect only after a server restart.

    >>> ending(1, 0)
    '1 change; it can be applied live, without a restart.'
    >>> ending(3, 1)
    '3 changes; 1 of them takes effect only after a server restart.'
    """
    head = count(changes, "change")
    if not restart:
        return f"{head}; {'it' if changes == 1 else 'all'} can be applied live, without a restart."
    if restart >= changes:
        who = "it takes" if changes == 1 else "all take"
    else:
        who = f"{restart} of them {'takes' if restart == 1 else 'take'}"
    return f"{head}; {who} effect only after a server restart."


def _at(plan: Plan, slider: str, value: object) -> bool:
    """True when the plan's slider stands at ``value``."""
    field = next((s.field for s in sliders() if s.key == slider), None)
    return field is not None and getattr(plan.positions, field) == value


def plan_text(plan: Plan, catalogue: Catalogue, starts: Mapping[str, Start] | None = None) -> str:
    """The whole plan, slider by slider.

    Args:
        plan: the plan.
        catalogue: the knob catalogue (how values are spelled).
        starts: each slider's start (:func:`app.planner.starts.starting_points`); a slider
            still at its start says so, with why.
    """
    f = plan.facts
    out = [
        f"Plan for {f.target}: {f.flavour} {f.version}, datadir {f.datadir or 'unknown'}",
        f"  facts collected {f.collected_at}, sha256 {f.checksum[:16]}…",
        "",
    ]
    sentences = dict(plan.sentences)
    for slider, title in titles().items():
        changes = plan.by_slider(slider)
        left = [x for x in plan.left_alone if x.slider == slider]
        if slider not in sentences and not changes and not left:
            continue
        out.append(title)
        if slider in sentences:
            out.append(f"  position: {sentences[slider]}")
        start = (starts or {}).get(slider)
        if start is not None and _at(plan, slider, start.value):
            lead = "recommended for this host" if start.recommended else "where the server is"
            out.append(f"  start: {lead}: {start.why}")
        for change in changes:
            out += change_lines(change, catalogue)
        for x in left:
            where = f" on {x.device}" if x.device else ""
            out.append(f"  - left alone: {x.knob}{where}: {x.why}")
        out.append("")
    if plan.warnings:
        out.append("Warnings")
        out += [f"  ! {w}" for w in plan.warnings]
        out.append("")
    applied = [c for c in plan.changes if c.target != "advice"]
    if not applied:
        out.append("Nothing to change at these slider positions.")
    else:
        out.append(ending(len(applied), sum(1 for c in applied if c.restart_needed)))
    return "\n".join(out)
