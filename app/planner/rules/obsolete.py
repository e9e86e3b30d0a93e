"""Option-file lines the server no longer reads: removed, with the snapshot to undo it."""

from __future__ import annotations

from app.domain.plan import Change
from app.knobs import UnknownKnob
from app.knobs.sliders import slider_keys
from app.planner.context import Ctx


def obsolete_lines(ctx: Ctx) -> None:
    """Remove option-file lines that set what this version removed or ignores.

    The server warns about such a line at every start ("'innodb-buffer-pool-instances' was
    removed. It does nothing now", MariaDB 10.6+) and it misleads whoever reads the file.
    Only options the catalogue knows are removed or ignored in this version are taken out.
    """
    family = ctx.version.family
    for line in ctx.server.option_lines:
        try:
            knob = ctx.knob(line.name)
        except UnknownKnob:
            continue
        if not knob.is_server_variable:
            continue
        life = knob.lifecycle_for(family)
        removed = life.removed is not None and ctx.version.number >= life.removed
        facts = ctx.facts_for(line.name)
        if not removed and not (facts is not None and facts.ignored):
            continue
        # A removal says all there is to say about the knob: no "left alone" beside it.
        ctx.left_alone[:] = [x for x in ctx.left_alone if x.knob != line.name]
        since = ".".join(map(str, life.removed)) if removed and life.removed else ""
        what = f"removed it in {since}" if since else "ignores it"
        link = next((f.link for f in reversed(knob.server) if f.line.startswith(family.value)), "")
        ctx.propose(
            Change(
                id=f"remove {line.name} at {line.file}:{line.line}",
                # A slider with a section on the Trade-offs page (the disks' for the rest).
                slider=knob.slider if knob.slider in slider_keys() else "fit_disks",
                target="option_remove",
                key=line.name,
                current=line.text,
                proposed="(line removed)",
                reason=f"Line {line.line} of {line.file} sets {line.text}, but "
                f"{ctx.version} {what}: it does nothing except a warning at "
                "every start, and it misleads whoever reads the file. The line is removed "
                "(the snapshot keeps the file, byte for byte, for a rollback).",
                risk="None for this server, which does not use it; an older server reading the "
                "same file would lose the setting.",
                live=False,
                restart_needed=False,
                link=link,
                confidence="checked" if since else "documented",
                path=line.file,
            )
        )
