"""Advice: a change the person makes by hand, its lines fitted to the datadir's mount."""

from __future__ import annotations

from app.domain.plan import Change
from app.planner.context import Ctx, first_sentence


def advise(
    ctx: Ctx, key: str, slider: str, current: str | None, proposed: str, reason: str
) -> None:
    """Propose advice for ``key``: the catalogue's lines, with the datadir's mount in them."""
    knob = ctx.knob(key)
    lines = knob.advice_lines
    path = ctx.path
    if path is not None and path.mount_point:
        fs = path.fs_type or "ext4"
        lines = tuple(
            line.replace("/var/lib/mysql  ext4", f"/var/lib/mysql  {fs}")
            .replace("/var/lib/mysql ext4", f"/var/lib/mysql {fs}")
            .replace("/var/lib/mysql", path.mount_point)
            for line in lines
        )
    ctx.propose(
        Change(
            id=key,
            slider=slider,
            target="advice",
            key=key,
            current=current,
            proposed=proposed,
            reason=reason,
            risk=first_sentence(knob.risks),
            live=False,
            restart_needed=False,
            link=knob.linux.link if knob.linux else "",
            confidence=knob.linux.confidence if knob.linux else "documented",
            path=knob.linux.path if knob.linux else None,
            advice_lines=lines,
        )
    )
