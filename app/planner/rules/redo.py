"""Slider 3: the redo log's size from the measured redo rate; the log buffer's from its waits."""

from __future__ import annotations

from app.domain.server import Flavour
from app.knobs.sliders import slider
from app.planner.context import Ctx, reports_rotational
from app.planner.redolog import (
    planning_rate,
    recovery_range,
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


def _redo_words(minutes: int, measured: bool = True) -> str:
    """The redo slider's words for ``minutes``: its position's label, or the minutes.

    Without measured writes the label's "(about an hour of writes)" is left out: no writes
    were seen, so the size comes from an assumed rate, which the sentence says.
    """
    preset = slider("redo").at(minutes)
    if preset is not None and preset.label:
        return f'"{preset.label if measured else preset.label.split(" (")[0]}"'
    return f"{minutes} min of writes" if measured else f"{minutes} min at the assumed rate"


def _default_total(ctx: Ctx, per_file_default: int | None, files: int) -> int:
    """The whole redo log the server has by default (the catalogue's default for its version).

    MySQL before 8.0.30 multiplies innodb_log_file_size by innodb_log_files_in_group (2 by
    default); MariaDB 10.5+ has one file; MySQL 8.0.30+ has innodb_redo_log_capacity.
    """
    if not per_file_default:
        return 0
    default_files = 1
    if files > 1 or (ctx.version.family is Flavour.MYSQL and not uses_capacity(ctx.version)):
        group = ctx.facts_for("innodb_log_files_in_group")
        default_files = (parse_int(str(group.default)) if group and group.default else None) or 2
    return per_file_default * default_files


#: What a log below the default costs, from the field report the catalogue cites.
SMALL_LOG_PRICE = (
    "makes InnoDB write pages back sooner and more often to free log space (in "
    "one field report a log twice as large wrote 18% fewer pages)"
)


def _fast_kept(  # noqa: PLR0913 - the figures of one sentence
    ctx: Ctx,
    name: str,
    words: str,
    current: int,
    default: int,
    within: int,
    rate: float,
    measured: bool,
    minutes: int,
    spinning: bool,
) -> None:
    """Fast recovery where the log already recovers within its target: it stays, and says why.

    ``within`` is the log that ``minutes`` of writes fill; a log larger than that is the
    server's default here (a smaller one is never planned).
    """
    held = f"about {duration_text(current / rate)} of " + (
        "the measured writes" if measured else "writes at an assumed 1 GiB of redo per hour"
    )
    if current > within:
        saved = recovery_range(current, spinning)[1] - recovery_range(current / 2, spinning)[1]
        because = (
            "that is the server's default, the smallest InnoTune plans: a smaller log "
            f"{SMALL_LOG_PRICE}, and a log half as large would save at most about "
            f"{duration_text(saved)} of recovery"
        )
    else:
        because = (
            f"that is no more than {minutes} min of writes, so it already recovers within what "
            "fast recovery asks"
            + (
                ", and it is the server's default, the smallest InnoTune plans"
                if current <= default
                else ""
            )
        )
    said = f"{size_text(current)} ({held}): {because}"
    ctx.leave(name, "redo", f"It stays {said}.")
    ctx.sentences["redo"] = (
        f"At {words} the redo log stays at {said}; {recovery_words(current, spinning)}."
    )


def redo(ctx: Ctx) -> None:  # noqa: C901 - the cases of one size, each with its words
    """The redo log's size from the measured redo rate (and the log buffer's from its waits).

    No position plans a log below the server's default size (the catalogue's default for
    its version): a smaller log makes InnoDB flush pages in a hurry and saves little
    recovery. "Fast recovery" keeps the log at most its minutes of writes, never below the
    default: a log that already holds no more stays as it is, and says so.
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
    fast_value = slider("redo").position("fast-recovery").value
    fast = isinstance(fast_value, int) and minutes <= fast_value
    planned_rate, said = planning_rate(ctx.server)
    measured = representative(ctx.server)
    words = _redo_words(minutes, measured)
    span = f"{minutes} min of writes" if measured else f"{minutes} min at that rate"
    basis = f"{said}, so {span} is"
    total = round_up(planned_rate * minutes * 60, 32 * MIB)
    vf = ctx.facts_for(name)
    if vf is None:  # pragma: no cover - every covered version has one of the two
        ctx.leave(name, "redo", f"{ctx.version} has no {name}.")
        return
    default_total = _default_total(
        ctx, parse_int(str(vf.default)) if vf.default is not None else None, files
    )
    if fast:
        if current_total is not None and default_total <= current_total <= max(
            total, default_total
        ):
            _fast_kept(
                ctx,
                name,
                words,
                current_total,
                default_total,
                total,
                planned_rate,
                measured,
                minutes,
                spinning,
            )
            return
        if total < default_total:
            basis = (
                f"{said}, so {span} would be {size_text(total)}, below the "
                f"server's default; no position plans less than the default, so it is"
            )
        total = max(total, default_total)
    elif not measured and current_total is not None and total < current_total:
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
    if default_total:
        # Never below the version's default, whatever the position.
        lows.append(round_up(default_total / files, MIB))
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
    if current_total and abs(new_total - current_total) <= current_total // 10:
        # Said alone, the assumed rate is named (the sentence that says it is not beside it).
        alone = span if measured else f"{minutes} min at an assumed 1 GiB of redo an hour"
        ctx.leave(
            name,
            "redo",
            f"It is {size_text(current_total)}, within 10% of the {size_text(new_total)} that "
            f"{alone} needs.",
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
        + (
            "larger log smooths page flushing"
            if grows
            else f"smaller log shortens crash recovery but {SMALL_LOG_PRICE}"
        )
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
