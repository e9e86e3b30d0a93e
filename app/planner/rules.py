"""The rules of the six sliders: facts + positions → changes, each with the fact behind it.

Every rule either proposes a change (through ``Ctx.server_change`` or ``Ctx.propose``) or
says why it leaves a knob alone. Rules run in slider order and read each other's results
only through ``Ctx.final``.
"""

from __future__ import annotations

from app.domain.plan import CRASH_LOSS, Change, PoolRule
from app.domain.server import Flavour
from app.domain.words import count
from app.knobs import UnknownKnob
from app.knobs.sliders import Position, slider, slider_keys
from app.planner.context import DIRECT_IO_FS, Ctx, Disk, first_sentence, reports_rotational
from app.planner.sliders import (
    OS_RESERVE_DIVISOR,
    OS_RESERVE_MAX,
    OS_RESERVE_MIN,
    POOL_OVERHEAD,
    MemoryBudget,
    binlog_found,
    binlog_lock,
    binlog_where,
    crash_position,
    current_share,
    doublewrite_on,
    memory_budget,
    planning_rate,
    recommended_share,
    recovery_span,
    recovery_words,
    redo_rate,
    representative,
    uses_capacity,
)
from app.planner.values import (
    GIB,
    MIB,
    duration_text,
    parse_bool,
    parse_int,
    round_down,
    round_up,
    size_text,
    two_digits,
)

BINLOG_DISAGREE = (
    "The binary log is on and {why}: after an OS crash or power cut the binary log and the "
    "tables may disagree, so replicas or point-in-time recovery can hold transactions the "
    "primary lost, or miss ones it kept."
)


def _declared(key: str, value: object) -> Position:
    """The declared position of a slider at ``value`` (its knob values, reason and risk)."""
    spot = slider(key).at(value)
    if spot is None:
        raise ValueError(f"{key} has no position {value!r}")
    return spot


# -- 1. what may a crash cost? ------------------------------------------------------------


def crash_loss(ctx: Ctx) -> None:
    """innodb_flush_log_at_trx_commit, sync_binlog, and the binary-log warning.

    The position's trx_commit value, reason and risk are declared (resources/sliders.toml).
    """
    position = ctx.positions.crash_loss
    declared = _declared("crash_loss", position)
    trx = declared.knobs["innodb_flush_log_at_trx_commit"]
    timeout = ctx.num("innodb_flush_log_at_timeout") or 1
    current = ctx.num("innodb_flush_log_at_trx_commit")
    seconds = f"{timeout} second" + ("s" if timeout != 1 else "")
    label = f'"{declared.label or position}"'  # the words the slider shows
    nothing = f'"{_declared("crash_loss", "none").label}"'
    if position == "none" and current == 3:
        ctx.leave(
            "innodb_flush_log_at_trx_commit",
            "crash_loss",
            "It is 3 (flush at prepare and at commit), which loses nothing either.",
        )
    else:
        ctx.server_change(
            "innodb_flush_log_at_trx_commit",
            trx,
            (declared.why or "").format(seconds=seconds),
            "crash_loss",
            risk=(declared.risk or "").format(seconds=seconds),
            already=f"It is already {trx}, which is what {label} means.",
        )
    sync_binlog = ctx.num("sync_binlog")
    binlog_on = binlog_stays(ctx)
    if not ctx.server.binlog_enabled:
        ctx.leave(
            "sync_binlog", "crash_loss", "The binary log is off, so sync_binlog has no effect."
        )
    elif not binlog_on:
        ctx.leave(
            "sync_binlog",
            "crash_loss",
            "The binary log goes off (slider 7), so sync_binlog will have no effect.",
        )
    elif position == "none":
        ctx.server_change(
            "sync_binlog",
            "1",
            f"The binary log is on and sync_binlog is {sync_binlog}: an OS crash could lose "
            f"binary-log events of commits InnoDB kept; {nothing} needs it forced to disk "
            "at every commit group.",
            "crash_loss",
            risk="Every commit group pays a second flush (binary log and redo log); a single "
            "writer feels it fully.",
        )
    elif sync_binlog == 1 and _lossier_than_now(ctx, position):
        replicas = ctx.server.replicas_connected or 0
        if replicas:
            ctx.leave(
                "sync_binlog",
                "crash_loss",
                f"This server has {count(replicas, 'replica')} connected, reading its "
                "binary log, so the log stays forced to disk at every commit group "
                f"(sync_binlog 1), even at {label}.",
            )
        else:
            ctx.server_change(
                "sync_binlog",
                "0",
                "The binary log is on and sync_binlog is 1, so every commit group waits for "
                f"the binary log to reach the disk. At {label} the tables' commits no longer "
                "wait for the disk, so an OS crash can lose the last of them whatever the "
                "binary log keeps: the OS writes the binary log back too (sync_binlog 0), and "
                "commits stop paying that flush.",
                "crash_loss",
                risk="An OS crash or power cut can lose the binary log's last events (the OS "
                "writes them back on its own schedule, often within 30 seconds), so replicas "
                "and point-in-time recovery can miss commits; a crash of the server alone "
                "loses none of them.",
            )
    else:
        ctx.leave(
            "sync_binlog",
            "crash_loss",
            f"At {label} the binary log's syncing stays as it is ({sync_binlog}); "
            f"only {nothing} forces it to 1.",
        )
    if binlog_on:
        final_trx = parse_int(ctx.final("innodb_flush_log_at_trx_commit"))
        final_sync = parse_int(ctx.final("sync_binlog"))
        whys = []
        if final_trx not in (1, 3):
            whys.append(f"innodb_flush_log_at_trx_commit is {final_trx}")
        if final_sync != 1:
            whys.append(f"sync_binlog is {final_sync}")
        if whys:
            ctx.warn(BINLOG_DISAGREE.format(why=" and ".join(whys)))
    _group_commit_note(ctx)
    if ctx.server.replica and trx != "1":
        ctx.warn(
            f"This server is a replica: at {label} an OS crash can leave its tables behind "
            "its replication position, so it may skip transactions; plan to re-clone it from "
            "the primary after an OS crash."
        )
    path = ctx.path
    if path is not None and path.barriers_off:
        ctx.warn(
            f"{path.mount_point or path.directory} is mounted with write barriers off: even at "
            f"{nothing} a power cut can lose commits unless the write cache has a battery."
        )


def binlog_stays(ctx: Ctx) -> bool:
    """True when the binary log is on and the plan does not turn it off (slider 7)."""
    return ctx.server.binlog_enabled and parse_bool(ctx.final("log_bin")) is not False


# -- 7. the binary log (planned first: slider 1 reads whether it stays) -------------------

#: The measured price of the binary log, as the slider's explanation cites it.
BINLOG_MEASURED = (
    "on a Debian sid host with MySQL 9.7 (sysbench oltp_write_only, 4 clients, every commit "
    "flushed, 8 GiB buffer pool, 2 GiB redo log) this measured 3,795 transactions per second "
    "without it against 2,463 with it"
)


def binlog(ctx: Ctx) -> None:
    """The binary log: kept unless the person turns it off, never off while something uses it.

    Turning it off is a line ``skip-log-bin`` in InnoTune's option file (log_bin is not
    dynamic; both MySQL 8.0+ and MariaDB read it, checked on MySQL 9.7 and MariaDB 11.8),
    so it takes a restart. The sentence names what InnoTune found.
    """
    server = ctx.server
    keep = ctx.positions.binlog
    if not server.binlog_enabled:
        default = " (MariaDB's default)" if ctx.mariadb else ""
        said = f"The binary log is off{default}; InnoTune never turns it on."
        ctx.sentences["binlog"] = said
        ctx.leave("log_bin", "binlog", said)
        return
    found = "; ".join(binlog_found(server))
    where = binlog_where(server)
    lock = binlog_lock(server)
    if keep:
        said = (
            f"The binary log stays on: {where}. It serves replicas, point-in-time recovery "
            f"and some backup tools; InnoTune found: {found}."
        )
        ctx.sentences["binlog"] = said
        ctx.leave("log_bin", "binlog", said)
        return
    if lock is not None:
        said = f"The binary log stays on: {lock}, so it cannot go off. InnoTune found: {found}."
        ctx.sentences["binlog"] = said
        ctx.leave("log_bin", "binlog", said)
        ctx.warn(f"The binary log stays on although you asked to turn it off: {lock}.")
        return
    facts = ctx.facts_for("log_bin")
    ctx.sentences["binlog"] = (
        "The binary log goes off at the restart: from then on replicas, point-in-time "
        f"recovery and tools that read it get nothing new. InnoTune found: {found}."
    )
    ctx.propose(
        Change(
            id="log_bin",
            slider="binlog",
            target="option_file",
            key="log_bin",
            current="ON",
            proposed="OFF",
            reason=(
                f"You chose to turn the binary log off; {where}. InnoTune found: {found}. "
                "Each commit then waits for one flush instead of two: "
                f"{BINLOG_MEASURED}. It is written as skip-log-bin in InnoTune's option file, "
                "read after the others."
            ),
            risk=(
                "Replicas, point-in-time recovery and tools that read the binary log get "
                "nothing from the restart on; the logs already written stay on disk."
            ),
            live=False,
            restart_needed=True,
            link=facts.link if facts is not None else "",
            confidence=facts.confidence if facts is not None else "unverified",
        )
    )


def _lossier_than_now(ctx: Ctx, position: str) -> bool:
    """True when the person moved crash loss to a lossier position than the server's now.

    InnoTune lowers durability only where the person asked: a server already at "os" with
    sync_binlog 1 keeps it.
    """
    return CRASH_LOSS.index(position) > CRASH_LOSS.index(crash_position(ctx.server))


def _group_commit_note(ctx: Ctx) -> None:
    """At 'none' on a slow-sync disk with the binary log on, name the group-commit delay."""
    name = "binlog_commit_wait_count" if ctx.mariadb else "binlog_group_commit_sync_delay"
    probe = ctx.facts.disk_probe
    rate = probe.sync_writes_per_s if probe else None
    if ctx.facts_for(name) is None or not binlog_stays(ctx):
        return
    if ctx.positions.crash_loss != "none" or rate is None or rate >= 1000:
        return
    ctx.leave(
        name,
        "none",
        f"The datadir's disk takes only {rate:.0f} synced writes per second and every commit "
        f"flushes the binary log: {name} can let more commits share one flush, at the cost of "
        "latency for each. InnoTune does not set it, because whether it helps depends on how "
        "many clients commit at once, which one inspection does not see.",
    )


# -- 2. memory ----------------------------------------------------------------------------


def _pool_unit(ctx: Ctx, pool: int) -> tuple[int, str]:
    """The granularity the server rounds the pool to, and why."""
    if ctx.mariadb:
        chunk_facts = ctx.facts_for("innodb_buffer_pool_chunk_size")
        chunk = ctx.num("innodb_buffer_pool_chunk_size") or 0
        if chunk_facts is not None and not chunk_facts.ignored and chunk >= MIB:
            return chunk, f"a multiple of innodb_buffer_pool_chunk_size ({size_text(chunk)})"
        return MIB, "a multiple of 1 MiB"
    chunk = ctx.num("innodb_buffer_pool_chunk_size") or 128 * MIB
    instances = ctx.num("innodb_buffer_pool_instances") or 1
    if pool < GIB:
        # MySQL starts with one instance when the pool is below 1 GiB (the manual: the
        # option "takes effect only when you set innodb_buffer_pool_size to 1GB or more").
        instances = 1
    defaults_to_8 = ctx.version.series in ((5, 7), (8, 0)) and pool >= GIB
    instances_origin = next(
        (v.origin for v in ctx.server.variables if v.name == "innodb_buffer_pool_instances"), None
    )
    default_instances = instances_origin in (None, "COMPILE-TIME")
    if defaults_to_8 and default_instances:
        # At the next start the default becomes 8 instances once the pool reaches 1 GiB.
        instances = max(instances, 8)
    elif ctx.version.series >= (8, 4) and default_instances and pool > GIB:
        # 8.4's default: min(pool / chunk / 2, logical CPUs / 4), within 1-64. MySQL rounds
        # the pool UP to chunk x instances, so plan on the count it will start with.
        cpus = ctx.machine.cpu_threads or 4
        instances = max(instances, min(64, max(1, pool // chunk // 2), max(1, cpus // 4)))
    unit = chunk * instances
    return unit, (
        f"a multiple of innodb_buffer_pool_chunk_size x innodb_buffer_pool_instances "
        f"({size_text(chunk)} x {instances})"
    )


def memory(ctx: Ctx) -> None:
    """innodb_buffer_pool_size as a share of RAM that fits."""
    name = "innodb_buffer_pool_size"
    key_buffer = parse_int(ctx.final("key_buffer_size"))
    budget = memory_budget(ctx.facts, key_buffer)
    current = ctx.num(name)
    if budget is None or current is None:
        ctx.leave(name, "memory", "The host's RAM is unknown, so no size can be shown to fit.")
        return
    share = ctx.positions.memory_share
    want = budget.ram * share // 100
    temptable = dict(budget.other_parts).get("temptable_max_ram", 0)
    if temptable > budget.ram // 4:
        ctx.warn(
            f"temptable_max_ram ({size_text(temptable)}) lets in-memory temporary tables take "
            f"{temptable * 100 // budget.ram}% of the {size_text(budget.ram)} RAM, and the buffer "
            "pool gets only what is left after it; lower temptable_max_ram (it is dynamic) to give "
            "the pool that room. InnoTune does not change it."
        )
    vf = ctx.facts_for(name)
    minimum = int(vf.min) if vf is not None and vf.min is not None else 5 * MIB
    if current > budget.fits:
        ctx.warn(
            f"The buffer pool ({size_text(current)}) is larger than fits on {ctx.host}: "
            f"{budget.words()}. With every connection busy Linux may swap or its OOM killer "
            "may end the server."
        )
    if budget.fits < minimum:
        ctx.leave(
            name,
            "memory",
            f"No buffer pool fits: {budget.words()}. Lower max_connections or the "
            "per-connection buffers, or add RAM.",
        )
        ctx.sentences["memory"] = (
            f"No buffer pool fits beside the rest, so it stays at {size_text(current)}; "
            f"{budget.free_words(current)}."
        )
        return
    target = min(want, budget.fits)
    unit, rounding = _pool_unit(ctx, target)
    if unit > target:
        unit, rounding = MIB, "a multiple of 1 MiB"
    proposed = max(minimum, round_down(target, unit))
    # Within half a slider step (0.5% of RAM) of the current size: already there.
    # The current share (rounded to a whole percent and kept within 1-90) is the memory
    # slider's "keep": a 128 MiB pool on 128 GiB keeps at 1%, it does not go to 1.28 GiB.
    near = abs(target - current) <= budget.ram // 200 + MIB or proposed == current
    kept = share == current_share(ctx.facts)
    if (near or kept) and current <= budget.fits:
        recommended = recommended_share(ctx.facts)
        advice = ""
        if recommended is not None and recommended.value != share:
            advice = f" InnoTune recommends {recommended.value}% of RAM for this host."
        if kept:
            why = (
                f"The slider is at the current share ({share}% of the {size_text(budget.ram)} "
                f"RAM), which keeps the buffer pool at {size_text(current)}.{advice}"
            )
        else:
            why = (
                f"It is {size_text(current)}, already about {share}% of the "
                f"{size_text(budget.ram)} RAM, and it fits.{advice}"
            )
        ctx.leave(name, "memory", why)
        ctx.sentences["memory"] = (
            f"The buffer pool stays at {size_text(current)} (about {share}% of RAM); "
            f"{budget.free_words(current)}."
        )
        return
    if want > current > proposed:
        # The person asked for more than now, and even now does not fit: shrinking it
        # would contradict the slider; the warning above says what to lower instead.
        ctx.leave(
            name,
            "memory",
            f"You chose {share}% of RAM, more than the {size_text(current)} now, "
            f"but no larger pool fits: {budget.words()}.",
        )
        ctx.sentences["memory"] = (
            f"You chose {share}% of RAM, but not even the {size_text(current)} pool now fits, "
            f"so it stays at {size_text(current)}; {budget.free_words(current)}."
        )
        return
    capped = f"; {share}% of RAM would not fit, so it is capped" if want > budget.fits else ""
    reason = (
        f"{ctx.host} has {size_text(budget.ram)} RAM and the slider gives the buffer pool "
        f"{share}% of it; {budget.words()}{capped}. Rounded down to {rounding}: "
        f"{size_text(proposed)}."
    )
    free = budget.free_words(proposed)
    risk = (
        f"{free[0].upper()}{free[1:]} (all {budget.max_connections} connections using their "
        "buffers); if other processes grow beyond that, Linux swaps or its OOM killer ends the "
        "server (a crash)."
    )
    ctx.sentences["memory"] = (
        f"The buffer pool goes from {size_text(current)} to {size_text(proposed)} ({share}% of "
        f"RAM{', capped to what fits' if want > budget.fits else ''}, rounded down to what the "
        f"server allocates); {budget.free_words(proposed)}."
    )
    restart = False
    size_max = ctx.num("innodb_buffer_pool_size_max")
    if size_max is not None and proposed > size_max:
        restart = True
        reason += (
            f" It is above innodb_buffer_pool_size_max ({size_text(size_max)}), so it takes "
            "effect at the next restart."
        )
    instances = ctx.num("innodb_buffer_pool_instances") or 1
    if not ctx.mariadb and proposed < GIB and instances > 1 and not restart:
        # innodb_buffer_pool_size_validate() (ha_innodb.cc) refuses a live resize below
        # 1 GiB while there are several instances: a warning, and the pool stays as it is.
        restart = True
        reason += (
            f" MySQL refuses to resize the pool live below 1 GiB while "
            f"innodb_buffer_pool_instances is {instances}, so it takes effect at the next "
            "restart, which starts it with one instance."
        )
    if ctx.server_change(name, str(proposed), reason, "memory", risk=risk, restart=restart):
        ctx.pool_rules.append(_pool_rule(ctx, budget, share, minimum, target))
    if ctx.facts_for("innodb_buffer_pool_instances") is not None:  # gone from MariaDB 10.6
        ctx.leave(
            "innodb_buffer_pool_instances", "memory", ctx.advice("innodb_buffer_pool_instances")
        )


def _pool_rule(ctx: Ctx, budget: MemoryBudget, share: int, minimum: int, target: int) -> PoolRule:
    """The memory rule as data, for exports that size the pool on each host of a fleet."""
    units: list[tuple[int, int]] = []
    # _pool_unit depends on the pool only across 1 GiB (MySQL's default of 8 instances);
    # 8.4's CPU-dependent count is taken as the planned host's (its target's unit).
    for threshold in sorted({0, GIB, target}):
        unit = _pool_unit(ctx, max(threshold, 1))[0]
        if not units or units[-1][1] != unit:
            units.append((threshold, unit))
    return PoolRule(
        key="innodb_buffer_pool_size",
        share_percent=share,
        reserve_divisor=OS_RESERVE_DIVISOR,
        reserve_min=OS_RESERVE_MIN,
        reserve_max=OS_RESERVE_MAX,
        fixed_bytes=budget.other_processes + budget.connections + budget.other_buffers,
        overhead=POOL_OVERHEAD,
        units=tuple(units),
        minimum=minimum,
    )


# -- 3. redo ------------------------------------------------------------------------------


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


# -- option lines the server no longer reads -----------------------------------------------


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


# -- reported, never changed --------------------------------------------------------------

#: Switches InnoTune keeps as they are and reports when they are off (the catalogue says so).
REPORTED_WHEN_OFF = {
    "innodb_adaptive_flushing": (
        "InnoDB no longer adapts page flushing to the redo rate, which invites checkpoint "
        "stalls under sustained writes"
    ),
    "innodb_file_per_table": (
        "new tables go into the shared system tablespace, which never gives space back"
    ),
}


def reported(ctx: Ctx) -> None:
    """The switches InnoTune only reports: a warning when off, left alone either way."""
    for name, harm in REPORTED_WHEN_OFF.items():
        if ctx.facts_for(name) is None:
            continue
        slider = ctx.knob(name).slider
        value = ctx.var(name)
        if parse_bool(value) is False:
            ctx.warn(
                f"{name} is OFF: {harm}. InnoTune does not change it; turn it back ON unless "
                "it was turned off on purpose."
            )
            ctx.leave(name, slider, "It is OFF; reported in the warnings, not changed.")
        else:
            ctx.leave(name, slider, f"It is {value or 'ON'}, as it should be; left alone.")


# -- 4. doublewrite -----------------------------------------------------------------------


def _tear_proof(ctx: Ctx) -> tuple[bool, str]:
    path = ctx.path
    if path is None:
        return False, "the datadir's storage is unknown"
    fs = path.fs_type or "unknown"
    if fs == "zfs":
        return (
            True,
            f"the datadir is on ZFS ({path.source}), which never overwrites a page in place",
        )
    if path.data_mode == "journal":
        return False, (
            "the datadir's ext4 is mounted data=journal, which does not make InnoDB's 16 KiB "
            "pages atomic"
        )
    disks = ", ".join(d.name for d in ctx.disks) or "its devices"
    return False, (
        f"the datadir is on {fs} over {disks}, which can tear a 16 KiB page on power loss, and "
        "no atomic 16 KiB writes were detected"
    )


def doublewrite(ctx: Ctx) -> None:
    """innodb_doublewrite: off only where the storage cannot tear pages."""
    name = "innodb_doublewrite"
    current = ctx.var(name)
    is_on = doublewrite_on(current)
    safe, why = _tear_proof(ctx)
    restart = not ctx.mariadb or not ctx.at_least("11.0.6")  # to or from OFF: restart
    value = _declared("doublewrite", ctx.positions.doublewrite).knobs[name]
    if ctx.positions.doublewrite:
        if is_on:
            ctx.leave(name, "doublewrite", f"It is already on ({current}).")
        else:
            ctx.server_change(
                name,
                value,
                f"You chose torn-page protection; it is {current} now and {why}.",
                "doublewrite",
                risk="Every page is written twice; on spinning disks under a sustained heavy "
                "write load the doublewrite area can limit throughput.",
                restart=restart,
            )
    elif not safe:
        ctx.leave(name, "doublewrite", f"Locked on: {why}.")
        if not is_on:
            ctx.warn(
                f"innodb_doublewrite is {current}, but {why}: a torn page can make a table "
                "unreadable after a power cut."
            )
    elif is_on:
        ctx.server_change(
            name,
            value,
            f"You chose no torn-page protection and {why}.",
            "doublewrite",
            risk="Safe only while the datadir stays on this storage; moved elsewhere, a torn "
            "page after a power cut can make a table unreadable.",
            restart=restart,
        )
    else:
        ctx.leave(name, "doublewrite", f"It is already {current} and {why}.")
    path = ctx.path
    if path is not None and path.data_mode == "journal":
        _advice(
            ctx,
            "ext4_data_journal",
            "doublewrite",
            "journal",
            "ordered",
            f"{path.mount_point or path.directory} is ext4 mounted data=journal, which "
            "disables O_DIRECT and does not replace the doublewrite buffer.",
        )
    else:
        fs = path.fs_type if path is not None and path.fs_type else "unknown"
        ctx.leave(
            "ext4_data_journal",
            "doublewrite",
            f"The datadir's filesystem ({fs}) is not mounted data=journal.",
        )


# -- 5. fit the disks ---------------------------------------------------------------------


def _sysfs(ctx: Ctx, key: str, disk: str, current: str | None, proposed: str, reason: str) -> None:
    knob = ctx.knob(key)
    assert knob.linux is not None
    ctx.propose(
        Change(
            id=f"{key}@{disk}",
            slider=knob.slider,
            target="sysfs",
            key=key,
            current=current,
            proposed=proposed,
            reason=reason,
            risk=first_sentence(knob.risks),
            live=True,
            restart_needed=False,
            link=knob.linux.link,
            confidence=knob.linux.confidence,
            device=disk,
            path=knob.linux.path.replace("{disk}", disk),
            persist=knob.linux.persist.replace("<disk>", disk).replace("<value>", proposed),
        )
    )


#: The manual ("Configuring InnoDB I/O Capacity"): values above 20000 are generally not
#: recommended unless lower values are shown to be insufficient for the workload.
IO_CAPACITY_CEILING = 20000


def _io_capacity(ctx: Ctx) -> None:
    probe = ctx.facts.disk_probe
    measured = probe.page_writes_per_s if probe else None
    if not measured:
        why = (
            "The disk probe measured only synced single writes (a flush's latency), not how "
            "many pages per second the disk takes; inspect again measuring the disk's sync rate "
            "to size it."
            if probe is not None and probe.sync_writes_per_s
            else "The disk's page-write rate was not measured (inspect again measuring the "
            "disk's sync rate to size it)."
        )
        for name in ("innodb_io_capacity", "innodb_io_capacity_max"):
            ctx.leave(name, "fit_disks", why)
        return
    assert probe is not None
    how = probe.page_method or "the probe"
    where = (
        f"{probe.directory} took {measured:.0f} writes of 16 KiB pages per second from "
        f"{probe.page_queue_depth or 'several'} writers at once ({how})"
    )
    target = max(100, two_digits(measured))
    notes = []
    if target > IO_CAPACITY_CEILING:
        target = IO_CAPACITY_CEILING
        notes.append(
            f"capped at {IO_CAPACITY_CEILING}: the manual advises against more unless lower "
            "values are shown to be too little for the workload"
        )
    vf = ctx.facts_for("innodb_io_capacity")
    default = parse_int(str(vf.default)) if vf is not None and vf.default is not None else None
    solid = [d for d in ctx.disks if d.kind in ("nvme", "ssd")]
    if default and solid and target < default:
        notes.append(
            f"below {ctx.version}'s default of {default} because {solid[0].words} that took "
            f"only {measured:.0f} page writes per second here: asking background flushing for "
            "more than the disk takes only makes it fall behind and compete with commits"
        )
    note = "; ".join(notes)
    current = ctx.num("innodb_io_capacity")
    if current is not None and 0.8 * target <= current <= 1.25 * target:
        ctx.leave("innodb_io_capacity", "fit_disks", f"It is {current}, close to what {where}.")
    else:
        ctx.server_change(
            "innodb_io_capacity",
            str(target),
            f"{where}, so background flushing can plan with about {target}"
            + (f" ({note})" if note else "")
            + ".",
            "fit_disks",
        )
    final = parse_int(ctx.final("innodb_io_capacity")) or target
    cap_max = 2 * final
    current_max = ctx.num("innodb_io_capacity_max")
    if current_max is not None and cap_max <= current_max <= 1.25 * cap_max:
        ctx.leave(
            "innodb_io_capacity_max",
            "fit_disks",
            f"It is {current_max}, about twice innodb_io_capacity.",
        )
    else:
        ctx.server_change(
            "innodb_io_capacity_max",
            str(cap_max),
            f"Twice innodb_io_capacity ({final}), the burst budget when flushing falls behind; "
            "never below innodb_io_capacity.",
            "fit_disks",
        )


def _order_io_capacity(ctx: Ctx) -> None:
    """Put the pair in an order the server takes one statement at a time.

    MySQL clamps ``SET GLOBAL innodb_io_capacity`` to the current innodb_io_capacity_max
    (and the max to the current io_capacity), so raising io_capacity needs the max raised
    first, lowering it needs io_capacity lowered first. The apply job keeps this order.
    """
    spots = {c.id: i for i, c in enumerate(ctx.changes)}
    if "innodb_io_capacity" not in spots or "innodb_io_capacity_max" not in spots:
        return
    i, j = sorted((spots["innodb_io_capacity"], spots["innodb_io_capacity_max"]))
    cap = ctx.changes[spots["innodb_io_capacity"]]
    cap_max = ctx.changes[spots["innodb_io_capacity_max"]]
    new, old = parse_int(cap.proposed), parse_int(cap.current)
    raising = new is not None and old is not None and new > old
    first, second = (cap_max, cap) if raising else (cap, cap_max)
    ctx.changes[i], ctx.changes[j] = first, second


def _consistent_io_capacity(ctx: Ctx) -> None:
    """Never io_capacity_max < io_capacity: drop whichever change would cause it."""
    _order_io_capacity(ctx)
    cap = parse_int(ctx.final("innodb_io_capacity"))
    cap_max = parse_int(ctx.final("innodb_io_capacity_max"))
    if cap is None or cap_max is None or cap_max >= cap:
        return
    for dropped in ("innodb_io_capacity", "innodb_io_capacity_max"):
        if ctx.withdraw(
            dropped,
            "Withdrawn: with the other of innodb_io_capacity / innodb_io_capacity_max left as "
            "it is, it would put innodb_io_capacity_max below innodb_io_capacity.",
        ):
            ctx.warn(
                "innodb_io_capacity and innodb_io_capacity_max must change together here; "
                "accept both or neither."
            )
            if (parse_int(ctx.final("innodb_io_capacity_max")) or 0) >= (
                parse_int(ctx.final("innodb_io_capacity")) or 0
            ):
                return


def _flush_neighbors(ctx: Ctx) -> None:
    name = "innodb_flush_neighbors"
    disks = ctx.disks
    current = ctx.num(name)
    if not disks or any(d.kind in ("unknown", "virtual") for d in disks):
        odd = next((d for d in disks if d.kind in ("unknown", "virtual")), None)
        why = (
            f"{odd.words}: whether it spins is not known (virtual disks often report rotational)."
            if odd
            else "The disks under the datadir are unknown."
        )
        ctx.leave(name, "fit_disks", why)
        return
    spinning = [d for d in disks if d.spinning]
    if spinning:
        if current in (1, 2):
            ctx.leave(name, "fit_disks", f"It is {current}; {spinning[0].words}, which suits it.")
            return
        ctx.server_change(
            name,
            "1",
            f"{spinning[0].words}, so writing neighbouring dirty pages together saves seeks.",
            "fit_disks",
        )
        return
    words = "; ".join(d.words for d in disks)
    if ctx.mariadb:
        ctx.leave(
            name,
            "fit_disks",
            f"{words}: MariaDB already treats it as 0 for tablespaces on SSD.",
        )
        return
    ctx.server_change(
        name,
        "0",
        f"{words}, so there are no seeks to save: neighbour flushing only writes pages "
        "earlier and more often (seeds/002: 26% fewer pages written without it).",
        "fit_disks",
    )


def _direct_io(ctx: Ctx) -> tuple[bool, str]:
    path = ctx.path
    if path is None or path.fs_type is None:
        return False, "the datadir's filesystem is unknown"
    if path.data_mode == "journal":
        return False, "ext4 data=journal disables O_DIRECT"
    if path.fs_type in DIRECT_IO_FS:
        where = path.mount_point or path.directory
        return True, f"the datadir is on {path.fs_type} ({where}), which supports direct I/O"
    return False, f"direct I/O on {path.fs_type} is not known to work for InnoDB"


def _flush_method(ctx: Ctx) -> None:
    ok, why = _direct_io(ctx)
    if ctx.mariadb and ctx.at_least("11.0.0"):
        ctx.leave(
            "innodb_flush_method",
            "fit_disks",
            "Deprecated since MariaDB 11.0; the buffering switches replace it.",
        )
        buffering = parse_bool(ctx.var("innodb_data_file_buffering"))
        if not ok:
            ctx.leave("innodb_data_file_buffering", "fit_disks", f"Left as it is: {why}.")
        elif buffering:
            ctx.server_change(
                "innodb_data_file_buffering",
                "OFF",
                f"Data files go through the page cache now and {why}: OFF stops caching every "
                "page twice.",
                "fit_disks",
            )
        else:
            ctx.leave("innodb_data_file_buffering", "fit_disks", "It is already OFF (direct I/O).")
        return
    name = "innodb_flush_method"
    current = (ctx.var(name) or "").strip() or "fsync"  # MySQL 5.7 shows the default as empty
    if current.lower() in ("o_direct", "o_direct_no_fsync"):
        path = ctx.path
        if path is not None and path.data_mode == "journal":
            ctx.leave(
                name,
                "fit_disks",
                f"It is {current}, but ext4 mounted data=journal disables O_DIRECT: the kernel "
                "serves these writes through the page cache (see the data=journal advice).",
            )
            return
        ctx.leave(name, "fit_disks", f"It is already {current}.")
        return
    if current.lower() != "fsync":
        ctx.leave(name, "fit_disks", f"It is {current}, a deliberate choice InnoTune keeps.")
        return
    if not ok:
        ctx.leave(name, "fit_disks", f"Left at {current}: {why}.")
        return
    ctx.server_change(
        name,
        "O_DIRECT",
        f"It is {current}, so every page is cached twice (buffer pool and page cache), and {why}.",
        "fit_disks",
    )


def _scheduler_for(ctx: Ctx, disk: Disk) -> tuple[str | None, str]:
    d = disk.device
    if disk.kind in ("nvme", "ssd"):
        want, why = "none", f"{disk.words}: reordering for a spinning head only costs CPU there"
    elif disk.kind == "hwraid" and (d.write_cache or "") == "write back":
        # seeds/004 measured noop against cfq; cite it only where cfq is what is replaced.
        seen = " (seeds/004: 4x over cfq)" if (d.scheduler or "") == "cfq" else ""
        want, why = (
            "none",
            f"{disk.words} with a write-back cache: the controller orders writes itself{seen}",
        )
    elif disk.spinning:
        cache = "" if disk.kind == "hdd" else " and no controller cache was reported"
        want, why = (
            "mq-deadline",
            f"{disk.words}{cache}: a deadline scheduler keeps commits' flushes from starving",
        )
    else:
        return None, f"{disk.words}: the scheduler that suits it is not known"
    available = d.schedulers_available
    legacy = False
    if len(available) > 1:
        legacy = "mq-deadline" not in available and "deadline" in available
    elif disk.kind != "nvme":
        kernel = ctx.kernel
        if kernel is not None:
            legacy = kernel <= (4, 20)
        else:
            legacy = (d.scheduler or "") in ("noop", "deadline", "cfq")
    if legacy:
        want = {"none": "noop", "mq-deadline": "deadline"}[want]
        why += " (this kernel has the legacy schedulers, so the older name)"
    if len(available) > 1 and want not in available:
        return None, f"{disk.name} does not offer {want} (it offers {', '.join(available)})"
    return want, why


def _scheduler(ctx: Ctx) -> None:
    for disk in ctx.disks:
        d = disk.device
        if disk.kind in ("virtual", "unknown"):
            ctx.leave(
                "queue/scheduler",
                "fit_disks",
                f"{disk.words}: the storage behind it decides, so its scheduler is left alone.",
                d.name,
            )
            continue
        want, why = _scheduler_for(ctx, disk)
        if want is None:
            ctx.leave("queue/scheduler", "fit_disks", why, d.name)
        elif d.scheduler == want:
            ctx.leave("queue/scheduler", "fit_disks", f"It is already {want}; {why}.", d.name)
        else:
            _sysfs(ctx, "queue/scheduler", d.name, d.scheduler, want, f"{why}.")


def _read_ahead(ctx: Ctx) -> None:
    path = ctx.path
    if path is None or path.device is None:
        return
    top = path.find(path.device)
    if top is not None and top.kind == "partition" and top.lower:
        top = path.find(top.lower[0])
    if top is None or top.read_ahead_kb is None:
        ctx.leave(
            "queue/read_ahead_kb", "fit_disks", "The read-ahead of the datadir's device is unknown."
        )
        return
    if top.read_ahead_kb > 1024:
        _sysfs(
            ctx,
            "queue/read_ahead_kb",
            top.name,
            str(top.read_ahead_kb),
            "128",
            f"The datadir's filesystem reads through {top.name}, whose read-ahead is "
            f"{top.read_ahead_kb} KiB: InnoDB reads ahead itself, so that much mostly wastes "
            "I/O that writes need.",
        )
    else:
        ctx.leave(
            "queue/read_ahead_kb",
            "fit_disks",
            f"{top.name} reads ahead {top.read_ahead_kb} KiB, which is not excessive.",
            top.name,
        )


def _io_threads(ctx: Ctx) -> None:
    cpus = ctx.machine.cpu_threads or 0
    current = ctx.num("innodb_write_io_threads")
    nvme = [d for d in ctx.disks if d.kind == "nvme"]
    if nvme and cpus >= 8 and current is not None and current < 8:
        ctx.server_change(
            "innodb_write_io_threads",
            "8",
            f"{nvme[0].words}, which takes many writes in parallel, and the host has {cpus} CPUs.",
            "fit_disks",
        )
    else:
        ctx.leave(
            "innodb_write_io_threads",
            "fit_disks",
            ctx.advice("innodb_write_io_threads"),
        )
    ctx.leave(
        "innodb_read_io_threads",
        "fit_disks",
        ctx.advice("innodb_read_io_threads"),
    )


def _fdatasync(ctx: Ctx) -> None:
    name = "innodb_use_fdatasync"
    if ctx.facts_for(name) is None:
        return
    if parse_bool(ctx.var(name)) is False:
        ctx.server_change(
            name,
            "ON",
            f"{ctx.version} flushes with fsync(); fdatasync() skips the file metadata InnoDB "
            "does not need.",
            "fit_disks",
        )
    else:
        ctx.leave(name, "fit_disks", "It is already ON.")


def fit_disks(ctx: Ctx) -> None:
    """io_capacity, flush_neighbors, flush method, threads, scheduler, read-ahead."""
    _io_capacity(ctx)
    _flush_neighbors(ctx)
    _flush_method(ctx)
    _fdatasync(ctx)
    _io_threads(ctx)
    _scheduler(ctx)
    _read_ahead(ctx)
    ctx.leave("queue/nr_requests", "fit_disks", ctx.advice("queue/nr_requests"))
    _consistent_io_capacity(ctx)


# -- 5b. fit the OS -----------------------------------------------------------------------


def _sysctl(ctx: Ctx, key: str, current: int, proposed: int, reason: str) -> None:
    knob = ctx.knob(key)
    assert knob.linux is not None
    ctx.propose(
        Change(
            id=key,
            slider="fit_os",
            target="sysctl",
            key=key,
            current=str(current),
            proposed=str(proposed),
            reason=reason,
            risk=first_sentence(knob.risks),
            live=True,
            restart_needed=False,
            link=knob.linux.link,
            confidence=knob.linux.confidence,
            path=knob.linux.path,
            persist=knob.linux.persist.replace("<value>", str(proposed)),
        )
    )


def _advice(
    ctx: Ctx, key: str, slider: str, current: str | None, proposed: str, reason: str
) -> None:
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


def _mariadb_turns_thp_off(ctx: Ctx) -> bool:
    if not ctx.mariadb:
        return False
    series, patch = ctx.version.series, ctx.version.patch
    firsts = {(10, 6): 17, (10, 11): 7, (11, 0): 5, (11, 1): 4, (11, 2): 3, (11, 3): 2}
    if series in firsts:
        return patch >= firsts[series]
    return series >= (11, 4)


def fit_os(ctx: Ctx) -> None:
    """Swappiness, dirty ratios; THP and noatime as advice."""
    m = ctx.machine
    if m.swappiness is None:
        ctx.leave("vm.swappiness", "fit_os", "The current swappiness is unknown.")
    elif not m.swap_total_bytes:
        ctx.leave(
            "vm.swappiness",
            "fit_os",
            "The host has no swap (or its size is unknown), so swappiness cannot swap the "
            "buffer pool out.",
        )
    elif 1 <= m.swappiness <= 10:
        ctx.leave("vm.swappiness", "fit_os", f"It is {m.swappiness}, already low.")
    else:
        why = (
            "0 makes the OOM killer more likely to end the server"
            if m.swappiness == 0
            else "Linux may swap parts of the buffer pool out to keep file cache"
        )
        _sysctl(
            ctx,
            "vm.swappiness",
            m.swappiness,
            1,
            f"Swappiness is {m.swappiness} and the host has {size_text(m.swap_total_bytes)} of "
            f"swap: {why}; 1 is what MariaDB recommends for a database host.",
        )
    ram = m.mem_total_bytes or 0
    if m.dirty_bytes or m.dirty_background_bytes:
        ctx.leave(
            "vm.dirty_ratio", "fit_os", "The host sets vm.dirty_bytes instead; left as it is."
        )
        ctx.leave(
            "vm.dirty_background_ratio",
            "fit_os",
            "The host sets vm.dirty_background_bytes instead.",
        )
    elif ram < 16 * GIB or m.dirty_ratio is None or m.dirty_background_ratio is None:
        for key in ("vm.dirty_ratio", "vm.dirty_background_ratio"):
            ctx.leave(
                key,
                "fit_os",
                f"{size_text(ram) if ram else 'Unknown'} RAM: the kernel default suits it.",
            )
    else:
        share = 20 * ram // 100
        if m.dirty_ratio > 10:
            _sysctl(
                ctx,
                "vm.dirty_ratio",
                m.dirty_ratio,
                10,
                f"{m.dirty_ratio}% of the memory the kernel can use for page cache (free plus "
                f"reclaimable, up to about {size_text(share)} of the {size_text(ram)} RAM) may "
                "fill with dirty pages (binary log, temporary files) for one fsync to push out.",
            )
        else:
            ctx.leave("vm.dirty_ratio", "fit_os", f"It is {m.dirty_ratio}, already low.")
        ratio_change = next((c for c in ctx.changes if c.id == "vm.dirty_ratio"), None)
        ratio = int(ratio_change.proposed) if ratio_change else m.dirty_ratio
        background = min(5, ratio - 1)
        if ratio < 2:
            ctx.leave(
                "vm.dirty_background_ratio",
                "fit_os",
                f"vm.dirty_ratio is {ratio}, too low to keep a background threshold below it.",
            )
        elif m.dirty_background_ratio > 5 and m.dirty_background_ratio > background:
            _sysctl(
                ctx,
                "vm.dirty_background_ratio",
                m.dirty_background_ratio,
                background,
                f"With {size_text(ram)} RAM background writeback should start early, in small "
                f"steps, and below vm.dirty_ratio ({ratio}).",
            )
        else:
            ctx.leave(
                "vm.dirty_background_ratio",
                "fit_os",
                f"It is {m.dirty_background_ratio}, already low.",
            )
    thp = m.thp_enabled
    if thp != "always":
        why = f"It is {thp}." if thp else "Its setting is unknown."
        ctx.leave("transparent_hugepage", "fit_os", why)
    elif _mariadb_turns_thp_off(ctx):
        ctx.leave(
            "transparent_hugepage",
            "fit_os",
            f"It is always, but {ctx.version} turns THP off for its own process.",
        )
    else:
        _advice(
            ctx,
            "transparent_hugepage",
            "fit_os",
            "always",
            "madvise",
            "Transparent huge pages are 'always': the server's memory can be collapsed into huge "
            "pages in the background, causing latency spikes and memory that is never given back.",
        )
    path = ctx.path
    if path is None or path.fs_type is None:
        ctx.leave("noatime", "fit_os", "The datadir's filesystem is unknown.")
    elif path.noatime:
        ctx.leave("noatime", "fit_os", f"{path.mount_point} is already mounted noatime.")
    else:
        atime = "relatime" if path.option("relatime") is not None else "atime updates on"
        _advice(
            ctx,
            "noatime",
            "fit_os",
            atime,
            "noatime",
            f"{path.mount_point or path.directory} ({path.fs_type}) is mounted with {atime}: "
            "each access-time update is a small metadata write that noatime avoids.",
        )


# -- 6. MyISAM ----------------------------------------------------------------------------


def myisam(ctx: Ctx) -> None:
    """key_buffer_size only where MyISAM tables hold data, and the advice to convert them."""
    name = "key_buffer_size"
    used = [e for e in ctx.server.engines if e.engine.lower() == "myisam" and e.tables > 0]
    if not used or not any(e.data_bytes + e.index_bytes for e in used):
        ctx.leave(
            name,
            "myisam",
            "No MyISAM table holds data, so the key buffer does not matter for writes.",
        )
        return
    tables = sum(e.tables for e in used)
    index = sum(e.index_bytes for e in used)
    data = sum(e.data_bytes for e in used)
    hold = "holds" if tables == 1 else "hold"
    ctx.warn(
        f"{count(tables, 'MyISAM table')} {hold} {size_text(data + index)}: MyISAM has no "
        "transactions and no crash recovery, so a crash can lose or corrupt recent changes "
        "whatever slider 1 says. Convert them: ALTER TABLE db.tbl ENGINE=InnoDB;"
    )
    if not ctx.positions.myisam:
        ctx.leave(name, "myisam", "The MyISAM slider is off: the key buffer stays as it is.")
        return
    proposed = max(8 * MIB, round_up(index * 1.2, MIB))
    current = ctx.num(name)
    if current is not None and abs(proposed - current) <= current // 10:
        ctx.leave(name, "myisam", f"It is {size_text(current)}, about the MyISAM index size.")
        return
    ctx.server_change(
        name,
        str(proposed),
        f"{count(tables, 'MyISAM table')} {hold} {size_text(index)} of indexes, so the key "
        "buffer holds them all with a fifth to spare (at least 8 MiB).",
        "myisam",
        risk="Memory given to the key buffer is taken from the buffer pool's room; MyISAM itself "
        "still loses or corrupts recent changes in a crash.",
    )


#: The rules in the order they run: slider by slider (the binary log first: slider 1 asks
#: whether it stays; MyISAM before memory: the key buffer takes from the pool's room), then
#: the knobs no slider drives.
RULES = (
    binlog,
    crash_loss,
    myisam,
    memory,
    redo,
    doublewrite,
    fit_disks,
    fit_os,
    reported,
    obsolete_lines,
)
