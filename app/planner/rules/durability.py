"""What a crash may cost: slider 1 (crash loss), slider 7 (the binary log), slider 4 (torn pages).

The crash-loss rule reads whether the binary log stays (planned first); the doublewrite
rule turns pages' tearing into a lock or a change.
"""

from __future__ import annotations

from app.domain.plan import CRASH_LOSS, Change
from app.domain.words import count
from app.knobs.sliders import Position, slider
from app.planner.binlog import binlog_found, binlog_lock, binlog_where
from app.planner.context import Ctx
from app.planner.rules.advice import advise
from app.planner.starts import crash_position, doublewrite_on
from app.planner.values import parse_bool, parse_int

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
        advise(
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
