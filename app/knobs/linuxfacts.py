"""An OS knob's table: the file it sets, how it persists, what changed in which kernel."""

from __future__ import annotations

from typing import Any

from app.knobs.fields import (
    Ctx,
    as_allowed,
    as_choice,
    as_kernel,
    as_number,
    as_opt_str,
    as_scalar,
    as_str,
    as_table,
    check_keys,
    check_value,
    field_names,
    given,
)
from app.knobs.model import CONFIDENCE, KernelChange, LinuxFacts

_LINUX_KEYS = field_names(LinuxFacts, drop=("link",))
_KERNEL_KEYS = field_names(KernelChange)


def linux_facts(ctx: Ctx, raw: Any, kind: str, links: dict[str, str]) -> LinuxFacts:
    """The ``linux`` table of an OS knob."""
    entry = as_table(ctx, "linux", raw)
    check_keys(ctx, "linux", entry, _LINUX_KEYS)
    for required in ("path", "persist", "confidence"):
        if required not in entry:
            raise ctx.fail("linux", f"missing required key {required!r}")
    if "default" not in entry and "default_rule" not in entry:
        raise ctx.fail("linux", "needs 'default' or 'default_rule'")
    if "linux" not in links:
        raise ctx.fail("links", "an OS knob needs links.linux")
    path = as_str(ctx, "linux.path", entry["path"])
    if not path.startswith("/"):
        raise ctx.fail("linux.path", f"{path!r} is not an absolute path")
    kernels: list[KernelChange] = []
    raw_kernels = entry.get("kernels", [])
    if not isinstance(raw_kernels, list):
        raise ctx.fail("linux.kernels", "must be a list of tables")
    for i, item in enumerate(raw_kernels):
        here = f"linux.kernels[{i}]"
        k = as_table(ctx, here, item)
        check_keys(ctx, here, k, _KERNEL_KEYS)
        if "since" not in k and "until" not in k:
            raise ctx.fail(here, "needs 'since' or 'until'")
        kernels.append(
            KernelChange(
                note=as_str(ctx, f"{here}.note", k.get("note")),
                since=given(ctx, here, k, "since", as_kernel),
                until=given(ctx, here, k, "until", as_kernel),
                default=given(ctx, here, k, "default", as_scalar, kind),
                default_rule=as_opt_str(ctx, f"{here}.default_rule", k.get("default_rule")),
                allowed=given(ctx, here, k, "allowed", as_allowed, kind),
                min=given(ctx, here, k, "min", as_number, kind),
                max=given(ctx, here, k, "max", as_number, kind),
            )
        )
    facts = LinuxFacts(
        path=path,
        persist=as_str(ctx, "linux.persist", entry["persist"]),
        link=links["linux"],
        confidence=as_choice(ctx, "linux.confidence", entry["confidence"], CONFIDENCE),
        default=given(ctx, "linux", entry, "default", as_scalar, kind),
        default_rule=as_opt_str(ctx, "linux.default_rule", entry.get("default_rule")),
        allowed=given(ctx, "linux", entry, "allowed", as_allowed, kind),
        min=given(ctx, "linux", entry, "min", as_number, kind),
        max=given(ctx, "linux", entry, "max", as_number, kind),
        note=as_opt_str(ctx, "linux.note", entry.get("note")),
        kernels=tuple(kernels),
    )
    check_value(ctx, "linux", facts.default, facts.min, facts.max, facts.allowed, kind)
    return facts
