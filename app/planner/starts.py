"""Where each slider starts on a host, and why.

The sliders that trade speed for a resource start at InnoTune's recommendation; crash loss
and torn-page protection start where the server is now. Pure functions of the facts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from app.domain.hostfacts import HostFacts
from app.domain.plan import SliderPositions
from app.domain.serverfacts import ServerFacts
from app.knobs.sliders import slider, sliders
from app.planner.budget import current_share, memory_budget
from app.planner.context import server_variable
from app.planner.memorysum import POOL_OVERHEAD, share_text
from app.planner.redolog import redo_minutes_of, representative
from app.planner.values import GIB, duration_text, parse_bool, parse_int, size_text


def crash_position(server: ServerFacts) -> str:
    """The crash-cost position the server is in now.

    trx_commit 0 is "any", 2 is "os"; 1 (and MariaDB's 3) is "none", which a binary log
    with sync_binlog other than 1 does not change: the slider then starts at "none" and
    the plan makes that true with sync_binlog=1 (never at a lossier position).
    """
    trx = parse_int(server_variable(server, "innodb_flush_log_at_trx_commit"))
    if trx == 0:
        return "any"
    if trx == 2:
        return "os"
    return "none"


def doublewrite_on(value: str | None) -> bool:
    """ON, DETECT_AND_RECOVER (MySQL) and fast (MariaDB) protect pages; OFF, DETECT_ONLY don't."""
    if value is None:
        return True
    flag = parse_bool(value)
    if flag is not None:
        return flag
    return value.strip().upper() in ("DETECT_AND_RECOVER", "FAST")


@dataclass(frozen=True)
class Start:
    """Where a slider starts on a host, and why.

    Attributes:
        value: the SliderPositions value.
        why: the reason, from the facts, in plain words.
        recommended: True when it is InnoTune's recommendation for this host; False when
            the slider starts where the server is now (crash loss, torn-page protection:
            InnoTune never lowers durability unless the person asks).
    """

    value: object
    why: str
    recommended: bool = True


#: A dedicated server's buffer pool: 75% of RAM above 4 GiB, 50% up to it (the shares
#: MySQL's innodb_dedicated_server uses), never more than fits.
DEDICATED_LARGE_SHARE = 75
DEDICATED_SMALL_SHARE = 50
DEDICATED_LARGE_RAM = 4 * GIB
#: Other processes holding more than this share of RAM make the host a shared one.
SHARED_HOST_SHARE = 10
#: A shared host's buffer pool: at most half of what is left after the other processes.
SHARED_POOL_SHARE = 50


def recommended_share(facts: HostFacts) -> Start | None:
    """InnoTune's buffer-pool share for this host, from the host (not from the current share).

    RAM, the resident memory of the other processes the facts list, the OS reserve and
    what the server needs beside the pool (memory_budget) decide what fits; a dedicated
    host gets MySQL's innodb_dedicated_server share (75% of RAM above 4 GiB, 50% below),
    a shared one at most half of what the other processes leave. A pool that already
    fits and is larger is kept: InnoTune does not shrink a pool that fits. None when RAM
    or the server is unknown.
    """
    budget = memory_budget(facts)
    if budget is None:
        return None
    ram = budget.ram
    others = budget.others
    held = "other processes and database servers" if budget.other_servers else "other processes"
    shared = others * 100 > ram * SHARED_HOST_SHARE
    if shared:
        target = (ram - others) * SHARED_POOL_SHARE // 100
        kind = (
            f"{held} hold {size_text(others)} ({share_text(others, ram)} of RAM), so this "
            f"is a shared host: the pool may take at most half of the {size_text(ram - others)} "
            "they leave"
        )
    else:
        big = ram > DEDICATED_LARGE_RAM
        target = ram * (DEDICATED_LARGE_SHARE if big else DEDICATED_SMALL_SHARE) // 100
        seen = (
            f"{held} hold only {size_text(others)}"
            if others
            else "no other process was seen holding much memory"
        )
        kind = (
            f"{seen}, so this is a database host: the pool may "
            f"take {DEDICATED_LARGE_SHARE if big else DEDICATED_SMALL_SHARE}% of RAM, as "
            "MySQL's innodb_dedicated_server gives "
            + ("above 4 GiB of RAM" if big else "up to 4 GiB of RAM")
        )
    # What fits with a margin left free beyond the OS reserve (what ``thin`` asks for).
    margin = budget.thin_below
    spare = max(0, budget.sum.room - margin)
    roomy = int(spare / POOL_OVERHEAD)
    room = min(target, roomy)
    # Rounded down, so the share's own size (RAM x share) never exceeds the room.
    share = min(90, max(1, room * 100 // ram))
    if roomy >= target:
        fit = f"; it fits ({budget.words()})"
    elif spare:
        fit = (
            f"; {budget.words()}; {size_text(margin)} of that stays free for surprises, which "
            f"leaves {size_text(spare)} for the pool and its bookkeeping and caps the pool at "
            f"{size_text(roomy)}"
        )
    else:
        fit = (
            f"; {budget.words()}; {size_text(margin)} should stay free for surprises, more than "
            "that, so no pool fits with that margin"
        )
    why = f"The host has {size_text(ram)} of RAM; {kind}{fit}."
    now = current_share(facts)
    server = facts.server
    pool = parse_int(server_variable(server, "innodb_buffer_pool_size")) if server else None
    if now is not None and pool is not None and now > share and pool <= budget.fits:
        return Start(
            now,
            f"The buffer pool is {size_text(pool)} ({share_text(pool, ram)} of RAM), more than the "
            f"{share}% InnoTune would give it, and it fits, so it stays: InnoTune does not "
            f"shrink a pool that fits. {why}",
        )
    return Start(share, why)


def recommended_redo(facts: HostFacts) -> Start:
    """The redo slider's start: an hour of writes, unless the log already holds that much."""
    server = facts.server
    balanced = slider("redo").position("balanced")
    held = redo_minutes_of(facts)
    if server is not None and held is not None and representative(server) and held >= 60:
        return Start(
            None,
            f"The redo log already holds about {duration_text(held * 60)} of the measured "
            "writes, at least the hour InnoTune recommends, so it keeps its size.",
        )
    if server is not None and not representative(server):
        return Start(
            balanced.value,
            "A larger redo log lets InnoDB write pages back in large, calm batches instead of "
            "in a hurry when it fills; the sample measured no writes, so it is sized for an "
            "assumed 1 GiB of redo an hour. The price is a longer crash recovery (below).",
        )
    return Start(
        balanced.value,
        "About an hour of writes lets InnoDB write pages back in large, calm batches instead "
        "of in a hurry when the log fills; the price is a longer crash recovery (below).",
    )


def _myisam_holds_data(server: ServerFacts) -> bool:
    return any(
        e.engine.lower() == "myisam" and e.tables > 0 and e.data_bytes + e.index_bytes > 0
        for e in server.engines
    )


def starting_points(facts: HostFacts) -> dict[str, Start]:
    """Where each slider starts on this host, and why (slider key -> Start).

    The sliders that trade speed for a resource (memory, redo, the disk and OS fits,
    MyISAM) start at InnoTune's recommendation; crash loss and torn-page protection start
    where the server is now, never at a lossier position.

    Raises:
        ValueError: the facts hold no server.
    """
    server = facts.server
    if server is None:
        raise ValueError("no server in these facts")
    crash = crash_position(server)
    dw = doublewrite_on(server_variable(server, "innodb_doublewrite"))
    starts: dict[str, Start] = {
        "crash_loss": Start(
            crash,
            "InnoTune never lowers durability unless you move this slider.",
            recommended=False,
        ),
        "doublewrite": Start(
            dw,
            "InnoTune changes torn-page protection only if you do.",
            recommended=False,
        ),
        "redo": recommended_redo(facts),
        "binlog": Start(
            True,
            "InnoTune keeps the binary log unless you turn it off here.",
            recommended=False,
        ),
        "fit_disks": Start(
            True,
            "The disk settings follow the disks under the data directory and the measured "
            "sync rate; each change below can be turned down on its own.",
        ),
        "fit_os": Start(
            True,
            "A database host wants its memory kept and its writes flowing steadily; each "
            "change below can be turned down on its own.",
        ),
    }
    memory = recommended_share(facts)
    if memory is not None:
        starts["memory"] = memory
    if _myisam_holds_data(server):
        starts["myisam"] = Start(
            True, "MyISAM tables hold data here, so the key buffer is sized for their indexes."
        )
    else:
        starts["myisam"] = Start(
            False, "No MyISAM table holds data, so the key buffer does not matter for writes."
        )
    return starts


def default_positions(facts: HostFacts) -> SliderPositions:
    """The starting positions: InnoTune's recommendation, durability where the server is.

    The same for the wizard and ``innotune plan`` without slider options (see
    :func:`starting_points`). Sliders the facts say nothing about start at their declared
    default.

    Raises:
        ValueError: the facts hold no server.
    """
    starts: dict[str, Any] = {s.field: s.default for s in sliders()}
    for key, start in starting_points(facts).items():
        starts[slider(key).field] = start.value
    return dataclasses.replace(SliderPositions(), **starts)
