"""Slider 3: the redo log's size from the measured redo rate; the log buffer's from its waits."""

from __future__ import annotations

from app.domain.server import Flavour
from app.knobs.sliders import slider
from app.planner.context import Ctx, reports_rotational
from app.planner.redolog import (
    planning_rate,
    recovery_span,
    recovery_words,
    redo_rate,
    representative,
    uses_capacity,
)
from app.planner.values import GIB, MIB, duration_text, parse_int, round_down, round_up, size_text


def _log_buffer(ctx: Ctx) -> None:
    """innodb_log_buffer_size: the next power of two when Innodb_log_waits grew in the sample."""
    name = "innodb_log_buffer_size"
    current = ctx.num(name)
    rates = ctx.server.rates
    waits = rates.log_waits if rates is not None else None
    if current is None:
        return
    if waits is None:
        ctx.leave(
            name,
            "redo",
            "Whether commits waited for room in the log buffer is unknown (no status sample "
            "with Innodb_log_waits), so it is left alone.",
        )
        return
    secs = f"{rates.seconds:.0f} s" if rates is not None else "the"
    if waits == 0:
        ctx.leave(
            name,
            "redo",
            f"Innodb_log_waits did not grow during the {secs} sample: no commit waited for "
            f"room in the {size_text(current)} log buffer.",
        )
        return
    proposed = 1 << current.bit_length()  # the next power of two above it
    ctx.server_change(
        name,
        str(proposed),
        f"Innodb_log_waits grew by {waits} during the {secs} sample: transactions waited for "
        f"room in the {size_text(current)} log buffer, so it goes to the next power of two.",
        "redo",
        risk="The log buffer is allocated once, so it takes this much more memory.",
    )


def _redo_words(minutes: int) -> str:
    """The redo slider's words for ``minutes``: its position's label, or the minutes."""
    preset = slider("redo").at(minutes)
    if preset is not None and preset.label:
        return f'"{preset.label}"'
    return f"{minutes} min of writes"


def redo(ctx: Ctx) -> None:  # noqa: C901 - the cases of one size, each with its words
    """The redo log's size from the measured redo rate (and the log buffer's from its waits).

    "Fast recovery" never grows the log: when its minutes of writes would need more than
    the log holds now, it halves the log instead (down to what the server allows), so its
    recovery estimate is lower than at the current size.
    """
    _log_buffer(ctx)
    capacity = uses_capacity(ctx.version)
    name = "innodb_redo_log_capacity" if capacity else "innodb_log_file_size"
    files = 1
    if not capacity and ctx.version.family is Flavour.MYSQL:
        files = ctx.num("innodb_log_files_in_group") or 2
    current = ctx.num(name)
    current_total = None if current is None else current * files
    minutes = ctx.positions.redo_minutes
    spinning = reports_rotational(ctx.facts)
    rate = redo_rate(ctx.server)
    keep_label = slider("redo").position("keep").label or "keep"
    if minutes is None:
        held = ""
        if current_total and rate:
            held = f", about {duration_text(current_total / rate)} of the measured writes"
        ctx.leave(
            name,
            "redo",
            f'The redo slider is at "{keep_label}": it stays {size_text(current_total)}{held}.',
        )
        if current_total is not None:
            ctx.sentences["redo"] = (
                f"The redo log stays at {size_text(current_total)}{held}; "
                f"{recovery_words(current_total, spinning)}."
            )
        return
    words = _redo_words(minutes)
    fast_value = slider("redo").position("fast-recovery").value
    fast = isinstance(fast_value, int) and minutes <= fast_value
    planned_rate, said = planning_rate(ctx.server)
    measured = representative(ctx.server)
    basis = f"{said}, so {minutes} min of writes is"
    total = round_up(planned_rate * minutes * 60, 32 * MIB)
    vf = ctx.facts_for(name)
    if vf is None:  # pragma: no cover - every covered version has one of the two
        ctx.leave(name, "redo", f"{ctx.version} has no {name}.")
        return
    halved = fast and current_total is not None and total >= current_total
    if halved and current_total is not None:
        # Fast recovery asks for a shorter recovery: a larger log would lengthen it.
        total = current_total // 2
        basis = (
            f"{said}, so {minutes} min of writes would need {size_text(total * 2)} or more, "
            "no less than the log holds now; fast recovery never grows the log, so it is "
            "halved to"
        )
    elif not measured and not fast and current_total is not None and total < current_total:
        ctx.leave(
            name,
            "redo",
            f"It is {size_text(current_total)}; {said}, which is no reason to shrink it.",
        )
        ctx.sentences["redo"] = (
            f"The redo log stays at {size_text(current_total)} ({words} would be less, and "
            f"an assumed rate is no reason to shrink it); "
            f"{recovery_words(current_total, spinning)}."
        )
        return
    per_file = round_up(total / files, MIB)
    lows = [int(vf.min)] if vf.min is not None else []
    default = parse_int(str(vf.default)) if vf.default is not None else None
    if default and not fast:
        # Never below the version's default unless the person asks for fast recovery.
        lows.append(default)
    log_buffer = parse_int(ctx.final("innodb_log_buffer_size"))
    if ctx.mariadb and log_buffer:
        lows.append(round_up(log_buffer, MIB))
    per_file = max([per_file, *lows])
    highs = [int(vf.max)] if vf.max is not None else []
    if ctx.version.family is Flavour.MYSQL and not capacity:
        highs.append(512 * GIB // files)  # size x files may not exceed 512 GiB
    path = ctx.path
    grow_cap = None
    if path is not None and path.free_bytes and current_total is not None:
        grow_cap = current_total + path.free_bytes // 2
        highs.append(round_down(grow_cap // files, MIB))
    if highs and per_file > min(highs):
        per_file = round_down(min(highs), MIB)
        if grow_cap is not None and per_file * files >= grow_cap - MIB:
            ctx.warn(
                f"The redo log is capped at {size_text(per_file * files)}: it may take at most "
                f"half of the {size_text(path.free_bytes if path else None)} free in the datadir."
            )
    new_total = per_file * files
    if fast and current_total is not None and new_total >= current_total:
        ctx.leave(
            name,
            "redo",
            f"It is {size_text(current_total)}, already the smallest this server allows "
            "(or smaller than fast recovery needs), so it stays.",
        )
        ctx.sentences["redo"] = (
            f"The redo log stays at {size_text(current_total)}, already as small as this "
            f"server allows; {recovery_words(current_total, spinning)}."
        )
        return
    if current_total and abs(new_total - current_total) <= current_total // 10:
        ctx.leave(
            name,
            "redo",
            f"It is {size_text(current_total)}, within 10% of the {size_text(new_total)} that "
            f"{minutes} min of writes needs.",
        )
        ctx.sentences["redo"] = (
            f"The redo log stays at {size_text(current_total)}, within 10% of what {words} "
            f"needs; {recovery_words(current_total, spinning)}."
        )
        return
    each = f" ({files} files of {size_text(per_file)})" if files > 1 else ""
    recovery = recovery_words(new_total, spinning)
    reason = f"{basis[0].upper()}{basis[1:]} {size_text(new_total)}{each}; {recovery}."
    risk = f"Uses {size_text(new_total)} of disk in the datadir; {recovery}."
    if not vf.dynamic:
        risk += " It needs a clean restart; never delete the ib_logfile files by hand."
    grows = not current_total or new_total > current_total
    now = (
        f", against {recovery_span(current_total, spinning)} at {size_text(current_total)} now"
        if current_total
        else ""
    )
    ctx.sentences["redo"] = (
        f"At {words} the redo log goes "
        + (f"from {size_text(current_total)} " if current_total else "")
        + f"to {size_text(new_total)}: a "
        + ("larger log smooths page flushing" if grows else "smaller log shortens crash recovery")
        + f"; crash recovery {recovery_span(new_total, spinning)}{now} (it depends on how far "
        "the last checkpoint lags, not on the size alone)."
    )
    ctx.server_change(name, str(per_file), reason, "redo", risk=risk)
    if capacity and (ctx.var("innodb_log_file_size") is not None):
        ctx.leave(
            "innodb_log_file_size",
            "redo",
            "Deprecated on MySQL 8.0.30+: innodb_redo_log_capacity replaces it and wins when set.",
        )
