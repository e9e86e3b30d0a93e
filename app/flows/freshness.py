"""How old a host's facts are, and whether the server changed since they were read.

Facts are a picture of one moment (``HostFacts.collected_at``, this computer's clock, UTC).
An apply or a rollback afterwards changes the values, and a restart the pid and the uptime
too: facts from before such a change are out of date, and every page or command that shows
them or plans from them says so. The wizard knows the jobs it ran (:class:`ServerChange`);
with a connection, :func:`restarted_since` tells a restart by anyone from the server's own
uptime and pid; without one, the snapshots this computer keeps of the host tell an apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

from app.access.doctor import DoctorResult
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.words import count

# A server's start time worked out twice (collected_at - uptime then, now - uptime now) moves
# by the rounding of both clocks and uptimes; a restart moves it by at least the downtime.
START_SLACK_SECONDS = 5


@dataclass(frozen=True)
class ServerChange:
    """A job that changed the server (an apply, a rollback), seen ending at ``at``."""

    what: str  # "the apply", "the rollback"
    at: datetime  # aware, this computer's clock
    restarted: bool
    job_id: str = ""
    state: str = ""  # the job's state when seen: a new state of the same job is a new change
    target: str = ""  # the host it changed, as facts name it ("": any)


def of_target(changes: Sequence[ServerChange], target: str) -> list[ServerChange]:
    """The changes made to ``target`` (facts of another host are not put out of date)."""
    return [c for c in changes if c.target in ("", target)]


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time as an aware datetime (UTC when it names no zone); None if unreadable."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def ago(seconds: float) -> str:
    """How long ago, in plain words: "just now", "40 seconds ago", "3 minutes ago"."""
    if seconds < -60:
        return "later than this computer's clock says it is now"
    if seconds < 5:
        return "just now"
    if seconds < 60:
        return f"{count(int(seconds), 'second')} ago"
    if seconds < 3600:
        return f"{count(int(seconds // 60), 'minute')} ago"
    if seconds < 2 * 86400:
        return f"{count(int(seconds // 3600), 'hour')} ago"
    return f"{count(int(seconds // 86400), 'day')} ago"


def clock(when: datetime, now: datetime, tz: tzinfo | None = None) -> str:
    """``when`` in local time: "14:02:31" today, "2026-11-27 14:02:31" another day."""
    local, today = when.astimezone(tz), now.astimezone(tz)
    if local.date() == today.date():
        return local.strftime("%H:%M:%S")
    return local.strftime("%Y-%m-%d %H:%M:%S")


def changes_since(collected_at: str, changes: Sequence[ServerChange]) -> list[ServerChange]:
    """The changes after the facts were read (all of them when the time is unreadable)."""
    read = parse_time(collected_at)
    return [c for c in changes if read is None or c.at > read]


def _names(changes: Sequence[ServerChange], now: datetime, tz: tzinfo | None) -> str:
    parts = [f"{c.what} at {clock(c.at, now, tz)}" for c in changes]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def dated(
    collected_at: str,
    changes: Sequence[ServerChange] = (),
    *,
    now: datetime | None = None,
    tz: tzinfo | None = None,
    lead: str = "Read",
    subject: str | None = None,
) -> str:
    """When facts were read, and whether a change since has put them out of date.

    "Read at 14:02:31, 3 minutes ago." or, after an apply with a restart, "Read at
    14:02:31, 6 minutes ago, before the apply at 14:05:10 restarted the server: the pid,
    uptime and values shown are out of date." ``lead`` begins the sentence ("Planned from
    facts read"), ``subject`` names what is out of date (else what a change alters).
    """
    now = now or datetime.now(UTC)
    read = parse_time(collected_at)
    if read is None:
        text = f"{lead} at {collected_at}"
    else:
        text = f"{lead} at {clock(read, now, tz)}, {ago((now - read).total_seconds())}"
    since = changes_since(collected_at, changes)
    if not since:
        return text + "."
    restarted = any(c.restarted for c in since)
    verb = "restarted" if restarted else "changed"
    if subject is None:
        subject = "the pid, uptime and values shown" if restarted else "the values shown"
    return f"{text}, before {_names(since, now, tz)} {verb} the server: {subject} are out of date."


def is_old(collected_at: str, changes: Sequence[ServerChange]) -> bool:
    """True when a change came after the facts were read."""
    return bool(changes_since(collected_at, changes))


# -- restarts seen from the server itself (the command line) ---------------------------------


@dataclass(frozen=True)
class Restart:
    """The server restarted since facts were read: what gave it away, in words."""

    why: str


def restarted_since(
    facts: HostFacts,
    uptime_now: int | None,
    pid_now: int | None = None,
    now: datetime | None = None,
) -> Restart | None:
    """Whether the server the facts describe restarted since they were read.

    The server's start time is worked out from the facts (read at ``collected_at`` with an
    uptime of ``uptime_seconds``) and from now (``uptime_now``); a later start is a restart.
    A different pid says the same (a container's host pid included). None when neither tells
    a restart, or the facts hold no server.
    """
    server = facts.server
    if server is None:
        return None
    now = now or datetime.now(UTC)
    read = parse_time(facts.collected_at)
    then = server.uptime_seconds
    if read is not None and then is not None and uptime_now is not None:
        started_then = read - timedelta(seconds=then)
        started_now = now - timedelta(seconds=uptime_now)
        if (started_now - started_then).total_seconds() > START_SLACK_SECONDS:
            return Restart(
                f"it has been up {count(uptime_now, 'second')}, so it started at "
                f"{clock(started_now, now)}, after these facts were read at {clock(read, now)} "
                f"(up {count(then, 'second')} then)"
            )
    pid_then = server.instance.pid
    if pid_now is not None and pid_then and pid_now != pid_then:
        return Restart(f"its pid is {pid_now} now, {pid_then} in these facts")
    return None


def applied_since(facts: HostFacts, directory: Path) -> list[str]:
    """The snapshots this computer keeps of the host, taken after the facts were read.

    Each was taken as an apply began: that apply changed the server after these facts. Their
    ids, oldest first; none when the facts' time is unreadable or nothing was kept.
    """
    from app.jobs.snapshot import list_locally

    read = parse_time(facts.collected_at)
    if read is None:
        return []
    stamp = read.timestamp()
    return [s.id for s in list_locally(directory) if s.taken > stamp]


# -- facts from a file (the command line) ----------------------------------------------------


def live_restart(conn: DoctorResult, facts: HostFacts) -> Restart | None:
    """Whether the server ``conn`` reaches is the one of ``facts``, restarted since.

    None when it did not restart, or when it is not the same server (another host, another
    instance): then nothing can be told from it.
    """
    from app.inspect.instances import find_again

    server, instance, session = facts.server, conn.instance, conn.session
    if server is None or instance is None or session is None:
        return None
    if conn.transport is None or conn.transport.label != facts.target:
        return None
    if find_again([instance], server.instance) is None:
        return None
    try:
        rows = session.query("SHOW GLOBAL STATUS LIKE 'Uptime'")
    except InnoTuneError:
        rows = []
    uptime = next((int(v) for _k, v in rows if v and str(v).isdigit()), None)
    return restarted_since(facts, uptime, instance.pid)


def file_notes(
    facts: HostFacts,
    name: str,
    conn: DoctorResult | None = None,
    now: datetime | None = None,
    tz: tzinfo | None = None,
) -> list[str]:
    """What to say about facts read from the file ``name``: how old, and what changed since.

    With a connection to the same server, its uptime and pid tell a restart; without one,
    the snapshots this computer keeps of the host tell an apply made since.
    """
    from app.places import local_snapshot_dir

    now = now or datetime.now(UTC)
    lead = f"The facts in {name}, of {facts.target}, were read"
    lines = [dated(facts.collected_at, now=now, tz=tz, lead=lead)]
    again = "Plan from the server itself (TARGET without --facts) to read them again."
    restart = live_restart(conn, facts) if conn is not None else None
    if restart is not None:
        lines.append(
            f"Warning: the server restarted since these facts were read ({restart.why}): its "
            f"values may differ now. {again}"
        )
    applied = applied_since(facts, local_snapshot_dir(facts.target))
    if applied:
        lines.append(
            f"Warning: InnoTune applied changes to {facts.target} after these facts were read "
            f"(snapshot {', '.join(applied)}): its values, and its pid and uptime if it "
            f"restarted, may differ now. {again}"
        )
    return lines
