"""Slider 5b: fit the operating system (swappiness, dirty ratios; THP and noatime as advice)."""

from __future__ import annotations

from app.domain.plan import Change
from app.planner.context import Ctx, first_sentence
from app.planner.rules.advice import advise
from app.planner.values import GIB, size_text


def _sysctl(ctx: Ctx, key: str, current: int, proposed: int, reason: str) -> None:
    knob = ctx.knob(key)
    assert knob.linux is not None
    refused = ctx.kernel_refused()
    if refused is not None:
        # A change the host would refuse is no change: left alone, and said once up front.
        ctx.leave(key, "fit_os", f"{refused}. It would be {proposed} (now {current}): {reason}")
        ctx.warn(f"{refused}; InnoTune leaves them alone here (see Left alone, and why).")
        return
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
        advise(
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
        advise(
            ctx,
            "noatime",
            "fit_os",
            atime,
            "noatime",
            f"{path.mount_point or path.directory} ({path.fs_type}) is mounted with {atime}: "
            "each access-time update is a small metadata write that noatime avoids.",
        )
