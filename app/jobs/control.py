"""Remote control of a job on the target: upload, launch, follow, read, answer, list.

The job runs detached on the target (:mod:`app.targetjob`); this side only writes its
directory, starts it, reads its journal and state, and leaves it a cancel or confirm file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.describe.actions import ApplyError, sha256
from app.domain.errors import InnoTuneError
from app.domain.words import sentence
from app.jobs import snapshot as snap
from app.remote.transport import Transport
from app.targetjob import formats, pack
from app.targetjob.formats import (
    Bundle,
    JobState,
    JournalLine,
    applied_words,
)
from app.targetjob.health import ERROR_LINE

JOBS_ROOT = formats.JOBS_ROOT
FINAL = formats.FINAL
JOB_FILE = formats.ZIPAPP_NAME
DEFAULT_HEALTH_TIMEOUT = 300.0
DEFAULT_WATCH_SECONDS = 15.0
# How long the watchdog waits after the job's process is gone before it restores.
DEFAULT_WATCHDOG_GRACE = 10.0
# One poll of the journal over a link that went silent gives up after this long.
DEFAULT_POLL_TIMEOUT = 30.0

OnStep = Callable[["JobStep"], None]

_LAUNCH = r"""
dir=$1; id=$2
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed" >&2; exit 3; }
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then
    # KillMode=process: a server the job (re)starts by hand must outlive the job's unit.
    systemd-run --unit="innotune-apply-$id" --collect --quiet -p KillMode=process \
        python3 "$dir/job.pyz" "$dir" || exit
    # The dead-man switch: restores the snapshot if the job dies before it ends.
    systemd-run --unit="innotune-watchdog-$id" --collect --quiet -p KillMode=process \
        python3 "$dir/job.pyz" --watchdog "$dir" || echo "no watchdog started" >&2
    echo systemd-run
else
    setsid -f python3 "$dir/job.pyz" "$dir" </dev/null >>"$dir/job.out" 2>&1 || exit
    setsid -f python3 "$dir/job.pyz" --watchdog "$dir" </dev/null >>"$dir/watchdog.out" 2>&1 \
        || echo "no watchdog started" >&2
    echo setsid
fi
"""

_POLL = r"""
dir=$1
# A zombie is dead: an init that is slow to reap (containers) must not keep a job "alive".
alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
    s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ "$s" != Z ] && [ "$s" != X ]
}
live() {
    p=$(cat "$dir/pid" 2>/dev/null); w=$(cat "$dir/watchdog.pid" 2>/dev/null)
    if alive "$p"; then a=alive
    elif alive "$w"; then a=rescue
    elif [ -d "$dir" ]; then a=gone; else a=missing; fi
    echo "$a ${p:--} ${w:--}"
}
# The job writes its pid, then its first state; it journals each step before the state it
# leads to, and exits only after its final state. So whether it lives is read before the
# state (a job that ends mid-poll is seen running, never dead without its final state), the
# journal after the state (a final state comes with its end step), and a job not found
# alive is looked for again after (it may have started mid-poll). Found gone then, it may
# have ended too: its state and journal are read once more, after, and the last ones count.
off=$2
emit() {
    cat "$dir/state.json" 2>/dev/null; printf '\000'
    tail -c +"$off" "$dir/journal.jsonl" 2>/dev/null; printf '\000'
}
a=$(live)
emit
case $a in gone*|missing*) a=$(live) ;; esac
case $a in gone*|missing*) emit ;; esac
echo "$a"
"""


#: What the poll's last line says of the job's process.
LIVENESS = ("alive", "rescue", "gone", "missing")

#: A job is called dead (interrupted) only when a poll this long after agrees: on a busy host
#: a job that was running, and went on to apply, once read as dead for one poll.
DEAD_AGAIN = 1.0


class ApplyCancelled(ApplyError):
    """Cancelled before the job was launched: nothing on the host was changed."""


class JobInterrupted(InnoTuneError):
    """The connection dropped while following a job; the job goes on on the target."""

    def __init__(self, job_id: str, cause: str) -> None:
        super().__init__(
            f"Lost the connection while following job {job_id} ({cause}).",
            f"The job goes on on the host by itself. Reconnect and check it with "
            f"`innotune snapshots TARGET` (job {job_id}).",
        )
        self.job_id = job_id


# One journal line of the job on the target (the job writes the same class).
JobStep = JournalLine


@dataclass
class JobStatus:
    """Where a job is: its state, the steps so far, and what went wrong."""

    job_id: str
    # starting, running, awaiting-confirm, recovering (the job died, its watchdog is
    # restoring), interrupted, missing, or a FINAL state
    state: str
    steps: list[JobStep] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    log_lines: list[str] = field(default_factory=list)
    snapshot_id: str | None = None
    mode: str | None = None
    alive: bool = False
    restarted: bool = False
    downtime_seconds: float | None = None
    confirm_deadline: float | None = None
    cancelled: bool = False
    # The plan's changes the job carried, and those the host refused (id -> why).
    changes: list[str] = field(default_factory=list)
    not_applied: dict[str, str] = field(default_factory=dict)

    @property
    def applied_words(self) -> str:
        """The state, with how many changes are in force when the host refused some."""
        if self.state != "applied":
            return self.state
        return applied_words(self.changes, self.not_applied)

    @property
    def error_log_lines(self) -> list[str]:
        """The server's error-log lines the job kept that are errors (never its notes)."""
        return [ln for ln in self.log_lines if ERROR_LINE.search(ln)]

    @property
    def final(self) -> bool:
        """True when the job has ended (applied, refused, rolled-back or failed-rollback)."""
        return self.state in FINAL

    @property
    def ok(self) -> bool:
        """True when the job did what it was asked."""
        return self.state == ("rolled-back" if self.mode == "restore" else "applied")


def _sudo(transport: Transport) -> bool:
    return not transport.is_root


def job_dir(job_id: str) -> str:
    """Where the target keeps a job."""
    if "/" in job_id or job_id.startswith("."):
        raise ApplyError(f"Not a job id: {job_id!r}.")
    return f"{JOBS_ROOT}/{job_id}"


# -- upload, launch, follow ----------------------------------------------------------------


def _upload(transport: Transport, job_id: str, bundle: Bundle) -> str:
    sudo = _sudo(transport)
    directory = job_dir(job_id)
    snap.make_root_dir(transport, directory, sudo=sudo)
    code = pack.zipapp()
    transport.write_file_atomic(
        f"{directory}/{JOB_FILE}", code, sudo=sudo, mode="0600", owner="root:root"
    )
    text = bundle.to_json()
    transport.write_file_atomic(
        f"{directory}/bundle.json", text, sudo=sudo, mode="0600", owner="root:root"
    )
    back = transport.run(
        ["sha256sum", f"{directory}/bundle.json", f"{directory}/{JOB_FILE}"], sudo=sudo
    )
    sums = back.out.split()
    if not back.ok or sums[0::2] != [sha256(text), sha256(code)]:
        raise ApplyError(
            f"The job's files in {directory} do not read back as written.",
            "Nothing was changed. Check the disk space under /var/lib on the host.",
        )
    return directory


def launch(transport: Transport, job_id: str) -> str:
    """Start the uploaded job detached; how (``systemd-run`` or ``setsid``)."""
    directory = job_dir(job_id)
    result = transport.run(["sh", "-c", _LAUNCH, "sh", directory, job_id], sudo=_sudo(transport))
    if not result.ok:
        raise ApplyError(
            sentence(
                f"Could not start the job on the host: {result.err.strip() or result.exit_status}"
            ),
            "Nothing was changed (the snapshot is kept). InnoTune needs python3 on the host.",
        )
    return result.out.strip() or "setsid"


def _parse_steps(data: bytes) -> tuple[list[JobStep], int]:
    """Complete journal lines in ``data`` and how many bytes they took."""
    end = data.rfind(b"\n") + 1
    steps = [JournalLine.from_json(raw) for raw in data[:end].splitlines()]
    return [step for step in steps if step is not None], end


def _poll(
    transport: Transport, job_id: str, offset: int, timeout: float = DEFAULT_POLL_TIMEOUT
) -> tuple[list[JobStep], int, JobState | None, str]:
    # A bounded wait: over a blackholed link a read would otherwise hang for as long as
    # TCP keeps retransmitting (many minutes).
    result = transport.run(
        ["sh", "-c", _POLL, "sh", job_dir(job_id), str(offset + 1)],
        sudo=_sudo(transport),
        timeout=timeout,
    )
    # State, journal, [state, journal read again,] liveness: the last state and journal count.
    state_text, journal, last = [b"", b"", *result.stdout.split(b"\0")][-3:]
    # "alive|rescue|gone|missing JOB_PID WATCHDOG_PID": an answer without it (the shell or
    # sudo failed, the command was cut off) says nothing of the job, least of all that it died.
    words = last.decode(errors="replace").split()
    if len(words) != 3 or words[0] not in LIVENESS:
        why = result.err.strip() or f"no answer, exit status {result.exit_status}"
        raise ApplyError(sentence(f"Reading job {job_id} on the host failed: {why}"))
    steps, used = _parse_steps(journal)
    return steps, offset + used, JobState.from_json(state_text), " ".join(words)


def _confirmed(
    transport: Transport, job_id: str, offset: int, timeout: float = DEFAULT_POLL_TIMEOUT
) -> tuple[list[JobStep], int, JobState | None, str]:
    """One poll, confirmed when it reads the job as dead.

    A job read as interrupted is read again :data:`DEAD_AGAIN` later, and that reading counts.
    So is a poll whose answer could not be read (once: the second failure is raised).
    """
    try:
        steps, offset, state, alive = _poll(transport, job_id, offset, timeout)
    except ApplyError:
        time.sleep(DEAD_AGAIN)
        steps, offset, state, alive = _poll(transport, job_id, offset, timeout)
    if _status_from(job_id, [], state, alive).state != "interrupted":
        return steps, offset, state, alive
    time.sleep(DEAD_AGAIN)
    more, offset, state, alive = _poll(transport, job_id, offset, timeout)
    return steps + more, offset, state, alive


def _status_from(
    job_id: str, steps: list[JobStep], state: JobState | None, liveness: str
) -> JobStatus:
    alive, job_pid, watchdog_pid = (liveness.split() + ["-", "-"])[:3]
    if state is None:  # not written yet (or gone)
        state = JobState("missing" if alive == "missing" else "starting")
    name = state.state
    errors = list(state.errors)
    if name in ("running", "awaiting-confirm") and alive == "rescue":
        name = "recovering"  # the job died; its watchdog is restoring the snapshot
    elif name in ("running", "awaiting-confirm") and alive != "alive":
        name = "interrupted"  # the job and its watchdog died (host reboot, kill)
        errors.append(
            f"The job (process {job_pid}) and its watchdog (process {watchdog_pid}) are no "
            "longer running, and the job wrote no final state: the host restarted, or they "
            "were killed."
        )
    return JobStatus(
        job_id=job_id,
        state=name,
        steps=steps,
        errors=errors,
        warnings=list(state.warnings),
        log_lines=list(state.log_lines),
        snapshot_id=state.snapshot,
        mode=state.mode,
        alive=alive == "alive",
        restarted=state.restarted,
        downtime_seconds=state.downtime_seconds,
        confirm_deadline=state.confirm_deadline,
        cancelled=state.cancelled,
        changes=list(state.changes),
        not_applied=dict(state.not_applied),
    )


def follow(
    transport: Transport,
    job_id: str,
    on_step: OnStep | None = None,
    *,
    poll: float = 0.3,
    stop_at_confirm: bool = True,
    start_timeout: float = 20.0,
    poll_timeout: float = DEFAULT_POLL_TIMEOUT,
    cancel: threading.Event | None = None,
) -> JobStatus:
    """Follow the job's journal until it ends (or waits for a confirmation).

    Once ``cancel`` is set the job is asked to stop (:func:`request_cancel`) and is
    followed to its end, through a confirmation wait too (it rolls back there).

    Raises:
        JobInterrupted: the connection dropped, or one poll got no answer within
            ``poll_timeout`` (a blackholed link); the job goes on on the target.
    """
    offset = 0
    steps: list[JobStep] = []
    began = time.monotonic()
    asked = False
    while True:
        try:
            if cancel is not None and cancel.is_set() and not asked:
                request_cancel(transport, job_id)
                asked = True
            new, offset, state, alive = _confirmed(transport, job_id, offset, poll_timeout)
        except Exception as exc:  # noqa: BLE001 - any failure to poll is a lost contact
            raise JobInterrupted(job_id, str(exc) or type(exc).__name__) from exc
        for step in new:
            steps.append(step)
            if on_step is not None:
                on_step(step)
        status = _status_from(job_id, steps, state, alive)
        if status.final or (stop_at_confirm and status.state == "awaiting-confirm" and not asked):
            return status
        if status.state == "interrupted" or (
            status.state in ("starting", "missing") and time.monotonic() - began > start_timeout
        ):
            out = transport.run(
                ["cat", f"{job_dir(job_id)}/job.out"], sudo=_sudo(transport)
            ).out.strip()
            if out:
                status.errors.append(out[-2000:])
            return status
        time.sleep(poll)


def status(transport: Transport, job_id: str) -> JobStatus:
    """The whole journal and state of a job, running, ended or interrupted (after a reconnect)."""
    steps, _, state, alive = _confirmed(transport, job_id, 0)
    return _status_from(job_id, steps, state, alive)


reconnect = status


@dataclass(frozen=True)
class JobPlan:
    """What a job on the target was asked to do, read back from its bundle (a reconnect).

    Attributes:
        settings: ``key=value`` for each setting it puts in force (server variables as the
            plan expects them afterwards, then sysfs/sysctl values).
        files: the paths it writes.
    """

    job_id: str
    mode: str  # apply or restore
    snapshot_id: str | None
    settings: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    restart: bool = False
    restart_requested: bool = False
    confirm_within: float | None = None

    def text(self) -> str:
        """One short paragraph: what it changes, whether it restarts, the deadline."""
        if self.mode == "restore":
            return f"It restores snapshot {self.snapshot_id}: its option files and values."
        parts = []
        if self.settings:
            parts.append("It sets " + ", ".join(self.settings) + ".")
        if self.files:
            parts.append("It writes " + ", ".join(self.files) + ".")
        if not parts:
            parts.append("It changes nothing.")
        if self.restart:
            parts.append(
                "It restarts the server (asked for)."
                if self.restart_requested
                else "It restarts the server."
            )
        else:
            parts.append("No restart.")
        if self.confirm_within:
            parts.append(
                f"It rolls back unless kept within {self.confirm_within:.0f} s of the change."
            )
        if self.snapshot_id:
            parts.append(f"Snapshot {self.snapshot_id} was taken first.")
        return " ".join(parts)


def job_plan(transport: Transport, job_id: str) -> JobPlan:
    """What the job ``job_id`` on the target was asked to do (its ``bundle.json``).

    Raises:
        ApplyError: the job or its bundle is not on the target (or not readable).
    """
    result = transport.run(["cat", f"{job_dir(job_id)}/bundle.json"], sudo=_sudo(transport))
    problem = result.err.strip() or "no bundle"
    try:
        bundle = Bundle.from_json(result.stdout) if result.ok else None
    except formats.FormatError as exc:
        bundle, problem = None, str(exc)
    if bundle is None:
        raise ApplyError(sentence(f"Job {job_id} on the host cannot be read: {problem}"))
    settings = [f"{key}={value}" for key, value in sorted(bundle.expected.items())]
    for value in bundle.values:
        if value.kind == "dynamic" and value.key in bundle.expected:
            continue  # listed once, from the expected values
        where = f" ({value.device})" if value.device else ""
        settings.append(f"{value.key}={value.value}{where}")
    return JobPlan(
        job_id=job_id,
        mode=bundle.mode,
        snapshot_id=bundle.snapshot_id or None,
        settings=tuple(settings),
        files=tuple(f.path for f in bundle.files),
        restart=bundle.restart_needed,
        restart_requested=bundle.restart_requested,
        confirm_within=float(bundle.confirm_within) if bundle.confirm_within else None,
    )


def wait(transport: Transport, job_id: str, timeout: float = 600.0, poll: float = 0.3) -> JobStatus:
    """Poll :func:`status` until the job ends (or ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        current = status(transport, job_id)
        if current.final or current.state == "interrupted" or time.monotonic() > deadline:
            return current
        time.sleep(poll)


def list_jobs(transport: Transport) -> list[str]:
    """Ids of the jobs kept on the target, oldest first."""
    result = transport.run(
        [
            "sh",
            "-c",
            'for d in "$1"/*/; do [ -d "$d" ] && basename "$d"; done; true',
            "sh",
            JOBS_ROOT,
        ],
        sudo=_sudo(transport),
    )
    return sorted(result.out.split())


def request_cancel(transport: Transport, job_id: str) -> None:
    """Ask a running job to stop and roll back what it changed (``DIR/cancel``).

    The job reads it between steps; a restart under way is finished (and judged) first.
    """
    result = transport.run(
        ["sh", "-c", 'test -d "$1" && : > "$1/cancel"', "sh", job_dir(job_id)],
        sudo=_sudo(transport),
    )
    if not result.ok:
        raise ApplyError(
            sentence(f"Could not cancel job {job_id}: {result.err.strip() or 'no such job'}")
        )


def confirm(transport: Transport, job_id: str) -> None:
    """Keep a change applied with ``confirm_within`` (before its deadline)."""
    result = transport.run(
        ["sh", "-c", 'test -d "$1" && : > "$1/confirm"', "sh", job_dir(job_id)],
        sudo=_sudo(transport),
    )
    if not result.ok:
        raise ApplyError(
            sentence(f"Could not confirm job {job_id}: {result.err.strip() or 'no such job'}")
        )
