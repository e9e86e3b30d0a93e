"""Slider 5: fit the disks (I/O capacity, neighbour flushing, flush method, threads, queues)."""

from __future__ import annotations

from app.domain.plan import Change
from app.planner.context import DIRECT_IO_FS, Ctx, Disk, first_sentence
from app.planner.values import parse_bool, parse_int, two_digits


def _sysfs(ctx: Ctx, key: str, disk: str, current: str | None, proposed: str, reason: str) -> None:
    knob = ctx.knob(key)
    assert knob.linux is not None
    device = ctx.path.find(disk) if ctx.path is not None else None
    refused = ctx.queue_refused(device) if device is not None else None
    if refused is not None:
        ctx.leave(
            key, knob.slider, f"{refused}. It would be {proposed} (now {current}): {reason}", disk
        )
        ctx.warn(f"{refused}; InnoTune leaves its queue settings alone (see Left alone, and why).")
        return
    persist = knob.linux.persist.replace("<disk>", disk).replace("<value>", proposed)
    kept = ctx.machine.capabilities.udev is not False
    if not kept:
        # Without udev a rule is read by nothing: the value is set live, and said to last
        # only until the next reboot, rather than kept in a file nothing reads.
        seen = ctx.machine.capabilities.udev_seen
        persist = f"not kept: it lasts until the next reboot ({seen})"
        reason += f" Set live only, since no udev rule would keep it after a reboot: {seen}."
    added = ctx.propose(
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
            persist=persist,
            kept=kept,
        )
    )
    if added and not kept:
        seen = ctx.machine.capabilities.udev_seen
        if not any(x.knob == "udev rule" and x.device == disk for x in ctx.left_alone):
            ctx.leave(
                "udev rule",
                knob.slider,
                f"Not written for {disk}, since nothing would read it: {seen}. Its queue "
                "settings are set live only and last until the next reboot.",
                disk,
            )
        ctx.warn(
            f"{disk}'s queue settings are set live only and last until the next reboot, since "
            f"no udev rule would keep them: {seen}."
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
