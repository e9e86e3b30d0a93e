"""Slider 2: the buffer pool as a share of RAM that fits, rounded as the server rounds it."""

from __future__ import annotations

from app.domain.plan import PoolRule
from app.planner.budget import (
    OS_RESERVE_DIVISOR,
    OS_RESERVE_MAX,
    OS_RESERVE_MIN,
    MemoryBudget,
    current_share,
    memory_budget,
)
from app.planner.context import Ctx
from app.planner.memorysum import POOL_OVERHEAD, share_text
from app.planner.starts import recommended_share
from app.planner.values import GIB, MIB, parse_int, round_down, size_text


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
            f"The buffer pool stays at {size_text(current)} "
            f"({share_text(current, budget.ram)} of RAM); {budget.free_words(current)}."
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
    own = share_text(proposed, budget.ram)
    asked = ""
    if want > budget.fits:
        asked = f"; the {share}% asked does not fit"
    elif own != f"{share}%":
        asked = f"; the {share}% asked, rounded down to what the server allocates"
    ctx.sentences["memory"] = (
        f"The buffer pool goes from {size_text(current)} to {size_text(proposed)} ({own} of "
        f"RAM{asked}); {budget.free_words(proposed)}."
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
        fixed_bytes=budget.others + budget.connections + budget.other_buffers,
        overhead=POOL_OVERHEAD,
        units=tuple(units),
        minimum=minimum,
    )
