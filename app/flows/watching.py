"""Watch the server's own workload: no load added, its costs per commit over rounds.

The use case behind ``innotune watch`` and the Verify page's watch on a busy server: both
read through :func:`watch`, compare through :func:`compare` and speak through
:func:`watch_text`, :func:`comparison_text` and :func:`comparison_json`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.access.doctor import DoctorResult, Secrets
from app.domain.errors import InnoTuneError
from app.domain.target import Target
from app.domain.watch import (
    BY_KEY,
    COSTS,
    Sample,
    Watch,
    WatchComparison,
    commit_counter,
    compare_watches,
    has_figure,
    median,
    round_plan,
    series,
    traffic,
    value_text,
    verdict_text,
)

#: The Verify page's watch and the command's default window, in seconds.
WATCH_SECONDS = 30.0


def watch(
    conn: DoctorResult,
    target: Target,
    secrets: Secrets,
    seconds: float = WATCH_SECONDS,
    *,
    cancel: threading.Event | None = None,
    progress: Callable[[float], None] | None = None,
) -> Watch:
    """Read the server's counters, timers and the datadir's disk over ``seconds`` in rounds.

    Nothing is written: one session reads SHOW GLOBAL STATUS and performance_schema's
    summaries; the target's /proc/diskstats gives the disk, the server's threads' schedstat
    its CPU time and its wait for a CPU. Cancelled, the watch keeps the
    rounds taken so far.

    Raises:
        InnoTuneError: not connected, or the server could not be read.
    """
    from app.bench.route import server_pid, session_factory, where_clients_run
    from app.bench.settings import server_settings
    from app.inspect.watchread import (
        locate_disk,
        read_disk,
        read_server_cpu,
        read_status,
        read_timers,
        timers_note,
    )

    cancel = cancel or threading.Event()
    transport, instance = conn.transport, conn.instance
    if transport is None or instance is None:
        raise InnoTuneError("Not connected.", "Connect to the server first.")
    session = session_factory(conn, target, secrets)()
    try:
        row = session.query("SELECT @@version, @@version_comment, @@log_bin, @@datadir")[0]
        version, comment = str(row[0] or ""), str(row[1] or "")
        flavour = "mariadb" if "mariadb" in f"{version} {comment}".lower() else "mysql"
        log_bin = str(row[2]) in ("1", "ON")
        datadir = str(row[3] or "/var/lib/mysql").rstrip("/") or "/"
        timers_on, timers_words = timers_note(session, flavour)
        host_path = f"/proc/{instance.pid}/root{datadir}" if instance.container else datadir
        disk = locate_disk(transport, host_path, sudo=conn.can_sudo and not transport.is_root)
        settings = server_settings(session)
        # The server's process as its own namespace sees it (a container's), looked up now:
        # the pid found at login is stale after a restart.
        pid, cpu_transport = server_pid(conn, session), where_clients_run(conn)
        rounds, length = round_plan(seconds)
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        start = time.monotonic()

        def sample() -> Sample:
            status = read_status(session)
            at = time.monotonic() - start
            return Sample(
                elapsed=round(at, 4),
                status=status,
                disk=read_disk(transport, disk.device),
                timers=read_timers(session) if timers_on else {},
                cpu=read_server_cpu(cpu_transport, pid),
            )

        samples = [sample()]
        counter = commit_counter(flavour, log_bin, samples[0].status)
        for i in range(rounds):
            # Each round ends at its planned time, so a slow reading does not stretch them.
            if cancel.wait(max(0.0, start + (i + 1) * length - time.monotonic())):
                break
            samples.append(sample())
            if progress is not None:
                progress((i + 1) / rounds)
    finally:
        session.close()
    return Watch(
        target=target.label,
        started_at=started_at,
        server=f"{'MariaDB' if flavour == 'mariadb' else 'MySQL'} {version}",
        flavour=flavour,
        seconds=float(seconds),
        round_seconds=round(length, 3),
        commit_counter=counter,
        disk_device=disk.device,
        disk_note=disk.note,
        disk_own=disk.own,
        timers_note=timers_words,
        settings=settings,
        samples=tuple(samples),
    )


def compare(before: Watch, after: Watch) -> WatchComparison:
    """Each cost figure of the two watches judged, the traffic of each side beside it."""
    return compare_watches(before, after)


def watch_text(found: Watch) -> str:
    """A watch as text: its traffic, then each figure's median with its rounds' range."""
    lines = [
        f"Watched {found.target} ({found.server}) for {found.seconds:.0f} s from "
        f"{found.started_at}: {found.rounds} rounds of {found.round_seconds:.1f} s, no load "
        "added.",
        f"Traffic: {traffic(found).text()} (commits counted by {found.commit_counter}).",
        f"Disk: {found.disk_note}.",
        f"Latency: {found.timers_note}.",
        "",
    ]
    for fig in COSTS:
        values = series(found, fig.key)
        if not values:
            continue
        spread = f"rounds {value_text(fig.key, min(values))} – {value_text(fig.key, max(values))}"
        lines.append(f"  {fig.title}: {value_text(fig.key, median(values))}  ({spread})")
    if traffic(found).rounds == 0:
        lines.append("  No commits during the watch: nothing to put per commit.")
    return "\n".join(lines)


def comparison_text(before: Watch, after: Watch, found: WatchComparison) -> str:
    """Before against after: the traffic of each side, then each figure with its verdict."""
    lines = [
        f"Before: {before.started_at}, {found.before.text()}.",
        f"After:  {after.started_at}, {found.after.text()}.",
    ]
    if found.settings_changed:
        changed = ", ".join(f"{n} {b} → {a}" for n, (b, a) in found.settings_changed.items())
        lines.append(f"Settings changed: {changed}.")
    else:
        lines.append("Settings changed: none of those recorded.")
    if found.why_not:
        lines.append(f"No verdicts: {found.why_not}.")
    notes = sorted(
        {f.note for f in found.figures if f.verdict == "not_compared" and f.note != found.why_not}
    )
    lines.extend(f"Not judged: {note}." for note in notes)
    lines.append("")
    for fig in found.figures:
        if fig.verdict == "not_measured":
            continue
        title = BY_KEY[fig.key].title
        lines.append(
            f"  {title}: {value_text(fig.key, fig.before)} → {value_text(fig.key, fig.after)}"
            f"  {verdict_text(fig)}"
        )
    return "\n".join(lines)


def comparison_json(name: str, before: Watch, after: Watch, found: WatchComparison) -> Any:
    """What ``watch --compare FILE --json`` prints: per figure its verdict, before, after."""
    from app.domain.facts import to_jsonable

    def side(w: Watch, t: Any) -> dict[str, Any]:
        return {
            "started_at": w.started_at,
            "rounds": w.rounds,
            "commits_per_s": t.commits_per_s,
            "rows_per_commit": t.rows_per_commit,
        }

    return {
        "format": "innotune-watch-compare/1",
        "before_file": name,
        "traffic": {"before": side(before, found.before), "after": side(after, found.after)},
        "traffic_alike": not found.why_not,
        "why_not": found.why_not,
        "settings_changed": {
            n: {"before": b, "after": a} for n, (b, a) in found.settings_changed.items()
        },
        "figures": {
            f.key: {
                "title": BY_KEY[f.key].title,
                "unit": BY_KEY[f.key].unit,
                "verdict": f.verdict,
                "before": f.before,
                "after": f.after,
                "change_percent": f.change_percent,
                "low_percent": f.low_percent,
                "high_percent": f.high_percent,
                "before_rounds": f.before_rounds,
                "after_rounds": f.after_rounds,
                "traffic_before": found.before.text(),
                "traffic_after": found.after.text(),
                "note": f.note,
            }
            for f in found.figures
        },
        "after": to_jsonable(after),
    }


def measured_figures(found: Watch) -> list[str]:
    """The keys of the cost figures the watch has."""
    return [f.key for f in COSTS if has_figure(found, f.key)]
