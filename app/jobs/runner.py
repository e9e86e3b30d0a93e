"""The runner: snapshot → bundle → upload → one detached job on the target → follow it.

From the first write to the verified restart the work runs on the target, as one
detached process (the :mod:`app.targetjob` zipapp, under ``systemd-run`` where systemd runs,
else ``setsid -f``), so a dropped SSH link or a closed laptop cannot leave a half-applied
change: the job finishes, or rolls back by itself. This side only prepares and watches:

1. take the snapshot through the transport and store it locally and on the target
   (root-only) BEFORE anything is written; refuse when a file is no longer what the plan
   saw;
2. write the bundle (files with their expected checksums, values, statements, commands,
   the validation and restart commands, how to judge health, the settings expected in
   force: a :class:`~app.targetjob.formats.Bundle` built from the preview's Actions) and the
   job's zipapp into ``/var/lib/innotune/jobs/<id>/`` (0700);
3. launch it detached and follow its journal, handing each step to a callback;
4. :func:`status` reads a running or interrupted job after a reconnect; :func:`rollback`
   restores any snapshot with the same job in restore mode; :func:`confirm` keeps a
   change made with ``confirm_within``.

The snapshot and the bundle record the server instance (:func:`instance_record`); the job
records the snapshot's state and keeps at most ``keep`` snapshots of its instance; this
side prunes its local copies the same way afterwards (:mod:`app.jobs.history`).

``restart_anyway`` restarts the server after the changes even when every one of them takes
effect live: the restart proves that the server starts with the new option files, so the
values survive the next restart; a later rollback of that snapshot restarts too.

Cancelling (a ``threading.Event`` given to :func:`apply`) does the safe thing at every
point: before the launch nothing on the host was changed, so the job and its snapshot are
removed and :class:`ApplyCancelled` is raised; after it, the job on the target is asked to
stop (``DIR/cancel``) and rolls back what it changed, waiting for a restart under way to
finish first; a job that ended before it saw the request is rolled back by a restore job.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.describe.actions import Action, ApplyError, restart_carried, sha256
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ServerFacts
from app.domain.words import sentence
from app.jobs import snapshot as snap
from app.remote.transport import Transport
from app.targetjob import formats, pack
from app.targetjob.formats import (
    Bundle,
    CommandItem,
    FileItem,
    JobState,
    JournalLine,
    PersistItem,
    ValueItem,
)

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
tail -c +"$2" "$dir/journal.jsonl" 2>/dev/null; printf '\000'
cat "$dir/state.json" 2>/dev/null; printf '\000'
# A zombie is dead: an init that is slow to reap (containers) must not keep a job "alive".
alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
    s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ "$s" != Z ] && [ "$s" != X ]
}
p=$(cat "$dir/pid" 2>/dev/null); w=$(cat "$dir/watchdog.pid" 2>/dev/null)
if alive "$p"; then echo alive
elif alive "$w"; then echo rescue
elif [ -d "$dir" ]; then echo gone; else echo missing; fi
"""


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


# -- how to restart, validate and health-check this server -----------------------------------


def _client_argv(transport: Transport, socket: str | None, sudo: bool) -> list[str] | None:
    """The client logging in as root over the socket, if that works on the target."""
    if not socket:
        return None
    found = transport.run(
        ["sh", "-c", "command -v mariadb || command -v mysql"], sudo=sudo
    ).out.split()
    if not found:
        return None
    argv = [found[0], "--no-defaults", f"--socket={socket}", "--user=root"]
    if transport.run([*argv, "-N", "-B", "-e", "SELECT 1"], sudo=sudo, timeout=20).ok:
        return argv
    return None


def _log_source(transport: Transport, server: ServerFacts) -> dict[str, Any] | None:
    log = server.error_log
    if log.destination == "file" and log.path:
        return {"kind": "file", "path": log.path}
    if log.destination == "syslog":
        for path in (log.path or "/var/log/syslog", "/var/log/messages"):
            if transport.run(["test", "-f", path]).ok:
                name = server.instance.binary.rsplit("/", 1)[-1]
                return {"kind": "syslog", "path": path, "match": [name, "mysqld"]}
    if log.destination == "journal" and server.instance.service:
        return {"kind": "journal", "unit": server.instance.service}
    return None


def _markers(instance: ServerInstance) -> list[str]:
    """Arguments that tell this instance's server process from any other on the host."""
    keep = ("--defaults-file=", "--pid-file=", "--socket=", "--datadir=")
    return [a for a in instance.argv if a.startswith(keep)]


def server_how(
    transport: Transport,
    server: ServerFacts,
    *,
    restart_argv: Sequence[str] | None = None,
    health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
    watch_seconds: float = DEFAULT_WATCH_SECONDS,
) -> dict[str, Any]:
    """How the job restarts this server and judges its health (stored in the snapshot)."""
    instance = server.instance
    sudo = _sudo(transport)
    if instance.container is not None:
        return _container_how(
            transport,
            server,
            restart_argv=restart_argv,
            health_timeout=health_timeout,
            watch_seconds=watch_seconds,
        )
    variables = {v.name: v.value for v in server.variables}
    restart = list(restart_argv) if restart_argv else instance.restart_argv()
    service = getattr(server, "service", None)
    unit = instance.service if instance.started_by == "systemd" else None
    if service is not None and (service.timeout_start_s or service.timeout_stop_s):
        # Our wait must outlast the unit's own stop + start timeouts (crash recovery).
        unit_wait = (service.timeout_start_s or 90.0) + (service.timeout_stop_s or 90.0)
        health_timeout = max(health_timeout, unit_wait + 30.0)
    return {
        "unit": unit,
        "memory_max_bytes": service.memory_max_bytes if service is not None else None,
        "restart": restart,
        "socket": instance.socket or variables.get("socket"),
        "pid_file": variables.get("pid_file"),
        "markers": _markers(instance),
        "binary": instance.binary,
        "client": _client_argv(transport, instance.socket or variables.get("socket"), sudo),
        "log": _log_source(transport, server),
        "health_timeout": health_timeout,
        "watch_seconds": watch_seconds,
    }


def _container_how(
    transport: Transport,
    server: ServerFacts,
    *,
    restart_argv: Sequence[str] | None,
    health_timeout: float,
    watch_seconds: float,
) -> dict[str, Any]:
    """How the job restarts a server in a container: through its engine, judged from outside.

    The job runs on the host: it finds the server among the host's processes by the
    container's id in their cgroup, logs in with the image's client through exec, and reads
    the server's lines from the engine's log. The container's socket and pid file are
    inside it, so neither is used.
    """
    from app.access.database import container_client

    container = server.instance.container
    assert container is not None
    sudo = _sudo(transport)
    client: list[str] | None = None
    try:
        name = container_client(transport, server.instance, sudo=sudo)
        argv = [container.engine, "exec", container.name, name, "--user=root"]
        if transport.run([*argv, "-N", "-B", "-e", "SELECT 1"], sudo=sudo, timeout=30).ok:
            client = argv
    except InnoTuneError:
        client = None
    return {
        "unit": None,
        # The engine's limit: the kernel kills the server there first (checked by validate).
        "memory_max_bytes": container.memory_limit_bytes,
        "restart": list(restart_argv) if restart_argv else container.restart_argv,
        "socket": None,
        "pid_file": None,
        "markers": [],
        "cgroup_id": container.id,
        "binary": server.instance.binary,
        "client": client,
        "log": {"kind": "container", "engine": container.engine, "name": container.name},
        "health_timeout": health_timeout,
        "watch_seconds": watch_seconds,
    }


def _version_tuple(version: str) -> tuple[int, ...]:
    head = version.split("-", 1)[0]
    return tuple(int(p) for p in head.split(".") if p.isdigit())


def validation_command(server: ServerFacts, job_id: str) -> dict[str, Any]:
    """The server binary's own check of the new files, run as the service user.

    ``--validate-config`` on MySQL 8.0.16+; elsewhere ``--verbose --help`` with the
    instance's own option-file switches and arguments (it exits non-zero on an unknown
    variable); the ``--log-bin-index`` trick keeps it from touching a binary log index.
    """
    from app.optionfiles import parse_argv
    from app.optionfiles.serverview import defaults_switches

    instance = server.instance
    cmdline = parse_argv(instance.argv or (instance.binary,))
    base = [instance.binary, *defaults_switches(cmdline), *cmdline.checking_args()]
    container = instance.container
    if container is not None:
        # Inside the container, as the server's own uid: it reads the mounted directory.
        uid = [] if container.server_uid is None else ["--user", str(container.server_uid)]
        base = [container.engine, "exec", *uid, container.name, *base]
    if server.flavour in ("mysql", "percona") and _version_tuple(server.version) >= (8, 0, 16):
        argv = [*base, "--validate-config"]
    else:
        argv = [*base, "--verbose", "--help", f"--log-bin-index=/tmp/innotune-{job_id}.index"]
    return {"argv": argv, "user": None if container else instance.user or None}


# -- the bundle ----------------------------------------------------------------------------


def expected_values(actions: Sequence[Action], plan_changes: Sequence[Any] = ()) -> dict[str, str]:
    """Server variables that must be in force afterwards.

    The dynamic ones, plus the plan's option-file changes the actions cover.
    """
    covered = {cid for a in actions for cid in a.change_ids}
    expected = {
        c.key: c.proposed
        for c in plan_changes
        if c.id in covered and c.target in ("option_file", "dynamic")
    }
    for action in actions:
        for value in action.values:
            if value.kind == "dynamic":
                expected[value.key] = value.new
    return expected


def build_bundle(
    job_id: str,
    snapshot: snap.Snapshot,
    actions: Sequence[Action],
    *,
    validate: dict[str, Any] | None,
    expected: dict[str, str],
    confirm_within: float | None = None,
    watchdog_grace: float = DEFAULT_WATCHDOG_GRACE,
    restart_anyway: bool = False,
) -> Bundle:
    """What the job on the target does, built from the same Actions the preview showed.

    With ``restart_anyway`` the job restarts the server even when no change needs it.
    Whenever it restarts, the dynamic variables that the option files also carry
    (``persisted_keys``) are not set live first: the restart applies them, once.
    """
    import base64

    saved = {f.path: f for f in snapshot.files}
    files = [
        FileItem(
            path=write.path,
            before_sha256=saved[write.path].sha256,
            content_b64=base64.b64encode(write.after).decode("ascii"),
            mode=write.mode,
            owner=write.owner,
            purpose=write.purpose,
        )
        for action in actions
        for write in action.files
    ]
    # Every value typed, as the Actions hold it: the job sets the dynamic ones with SET
    # GLOBAL (spelled on the target) and writes the sysfs and sysctl ones itself (in /sys
    # and /proc/sys, as the preview says); the commands (udevadm ...) run after them.
    values = [
        ValueItem(kind=v.kind, key=v.key, value=v.new, path=v.path, device=v.device)
        for a in actions
        for v in a.values
        if v.kind in ("dynamic", "sysfs", "sysctl")
    ]
    commands = [CommandItem(list(c.argv), c.why) for a in actions for c in a.commands]
    pool = expected.get("innodb_buffer_pool_size")
    has_option_files = any(f.purpose == "option_file" for f in files)
    needed = any(a.restart_needed for a in actions)
    persisted = restart_carried(actions)
    return Bundle(
        id=job_id,
        mode="apply",
        snapshot_id=snapshot.id,
        snapshot_dir=snap.target_dir(snapshot.id),
        files=files,
        values=values,
        persisted=[PersistItem(p.key, p.value, p.how) for a in actions for p in a.persisted],
        commands=commands,
        validate=formats.Validate(**validate) if validate and has_option_files else None,
        buffer_pool_bytes=int(pool) if pool and pool.isdigit() else None,
        restart_needed=needed or restart_anyway,
        restart_requested=restart_anyway and not needed,
        persisted_keys=persisted,
        expected=dict(expected),
        confirm_within=confirm_within,
        watchdog_grace=watchdog_grace,
    )


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
    journal, _, rest = result.stdout.partition(b"\0")
    state_text, _, alive = rest.partition(b"\0")
    steps, used = _parse_steps(journal)
    return steps, offset + used, JobState.from_json(state_text), alive.decode().strip()


def _status_from(
    job_id: str, steps: list[JobStep], state: JobState | None, alive: str
) -> JobStatus:
    if state is None:  # not written yet (or gone)
        state = JobState("missing" if alive == "missing" else "starting")
    name = state.state
    if name in ("running", "awaiting-confirm") and alive == "rescue":
        name = "recovering"  # the job died; its watchdog is restoring the snapshot
    elif name in ("running", "awaiting-confirm") and alive != "alive":
        name = "interrupted"  # the job and its watchdog died (host reboot, kill)
    return JobStatus(
        job_id=job_id,
        state=name,
        steps=steps,
        errors=list(state.errors),
        warnings=list(state.warnings),
        log_lines=list(state.log_lines),
        snapshot_id=state.snapshot,
        mode=state.mode,
        alive=alive == "alive",
        restarted=state.restarted,
        downtime_seconds=state.downtime_seconds,
        confirm_deadline=state.confirm_deadline,
        cancelled=state.cancelled,
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
            new, offset, state, alive = _poll(transport, job_id, offset, poll_timeout)
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
    steps, _, state, alive = _poll(transport, job_id, 0)
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


# -- the two entry points ------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A job ready to launch: its snapshot (stored on both sides) and bundle (uploaded)."""

    job_id: str
    snapshot: snap.Snapshot
    bundle: Bundle
    local_manifest: Path | None


def _instance_doc(instance: ServerInstance) -> dict[str, Any]:
    return {
        "label": instance.label,
        "pid": instance.pid,
        "binary": instance.binary,
        "started_by": instance.started_by,
        "service": instance.service,
        "socket": instance.socket,
        "port": instance.port,
    }


def instance_record(transport: Transport, server: ServerFacts) -> dict[str, Any]:
    """What a snapshot records of its instance: identity (datadir + option file) and where."""
    from app.jobs import history

    datadir = next((v.value for v in server.variables if v.name == "datadir"), None)
    return _instance_doc(server.instance) | history.identity(
        transport, server.instance, str(datadir) if datadir else None
    )


def _prune_local(transport: Transport, local_dir: Path | None, keep: int | None) -> None:
    """This computer's copies under the same retention as the target's (never fatal)."""
    from app.jobs import history

    if local_dir is None:
        return
    try:
        records = history.list_records(transport)
        history.prune_locally(local_dir, records, keep or history.keep_default())
    except (InnoTuneError, OSError, ValueError):
        pass


def prepare(
    transport: Transport,
    actions: Sequence[Action],
    server: ServerFacts,
    *,
    target_label: str,
    local_dir: Path | None,
    plan_json: str | None = None,
    expected: dict[str, str] | None = None,
    restart_argv: Sequence[str] | None = None,
    confirm_within: float | None = None,
    health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
    watch_seconds: float = DEFAULT_WATCH_SECONDS,
    watchdog_grace: float = DEFAULT_WATCHDOG_GRACE,
    restart_anyway: bool = False,
    cancel: threading.Event | None = None,
    keep: int | None = None,
) -> Prepared:
    """Snapshot (local + target), then upload the job; nothing on the host is changed yet.

    ``restart_anyway`` restarts after the changes even when none needs it (proving the
    server starts with the new option files); a rollback of the snapshot restarts too.
    A ``cancel`` set before the launch removes what was stored and raises
    :class:`ApplyCancelled`.

    Raises:
        ApplyError: a file is no longer what the plan saw, nothing to do, no known way to
            restart when one is needed or asked for, or the snapshot or the job could not
            be stored.
        ApplyCancelled: ``cancel`` was set; nothing on the host was changed.
    """
    actions = [a for a in actions if not a.empty]
    if not actions:
        raise ApplyError("Nothing to apply: every change is already in place or unsupported.")
    sudo = _sudo(transport)
    how = server_how(
        transport,
        server,
        restart_argv=restart_argv,
        health_timeout=health_timeout,
        watch_seconds=watch_seconds,
    )
    needs_restart = any(a.restart_needed for a in actions)
    # A later rollback restarts only when the apply restarted (dynamic-only: no restart);
    # after an asked-for restart it restarts too, proving the restored files start.
    how["restart_needed"] = needs_restart or restart_anyway
    if how["restart_needed"] and not how["restart"]:
        why = "These changes need a restart" if needs_restart else "A restart was asked for"
        raise ApplyError(
            f"{why} and InnoTune does not know how to restart {server.instance.label}.",
            "Give the command with --restart-command (the restart command field).",
        )
    snapshot = snap.take(
        transport,
        actions,
        target=target_label,
        instance=instance_record(transport, server),
        how=how,
        plan_json=plan_json,
        sudo=sudo,
    )
    saved = {f.path: f for f in snapshot.files}
    changed = [w.path for a in actions for w in a.files if saved[w.path].sha256 != w.sha256_before]
    if changed:
        raise ApplyError(
            f"Changed since the plan was made: {', '.join(changed)}. Nothing was written.",
            "Someone else edited the file; preview again to see the new diff.",
        )
    if cancel is not None and cancel.is_set():
        raise ApplyCancelled("Cancelled before anything was stored or changed on the host.")
    local_manifest = snap.store_locally(snapshot, local_dir) if local_dir is not None else None
    snap.store_on_target(transport, snapshot, sudo=sudo)
    want = expected_values(actions) | dict(expected or {})
    bundle = build_bundle(
        snapshot.id,
        snapshot,
        actions,
        validate=validation_command(server, snapshot.id),
        expected=want,
        confirm_within=confirm_within,
        watchdog_grace=watchdog_grace,
        restart_anyway=restart_anyway,
    )
    from app.jobs import history

    bundle.instance = snapshot.instance.get("key")
    bundle.keep = keep or history.keep_default()
    _upload(transport, snapshot.id, bundle)
    if cancel is not None and cancel.is_set():
        discard(transport, snapshot.id, local_dir)
        raise ApplyCancelled(
            "Cancelled before the job started: nothing on the host was changed.",
            "The snapshot taken for it was removed again.",
        )
    return Prepared(snapshot.id, snapshot, bundle, local_manifest)


def discard(transport: Transport, job_id: str, local_dir: Path | None) -> None:
    """Remove a job that was never launched, and its snapshot (both copies).

    Only for a job that never ran: its snapshot records nothing that was changed.
    """
    directory = job_dir(job_id)
    transport.run(
        [
            "sh",
            "-c",
            'test -e "$1/pid" || rm -rf -- "$1" "$2"',
            "sh",
            directory,
            snap.target_dir(job_id),
        ],
        sudo=_sudo(transport),
    )
    if local_dir is not None:
        import shutil

        shutil.rmtree(Path(local_dir) / job_id, ignore_errors=True)


def apply(
    transport: Transport,
    actions: Sequence[Action],
    server: ServerFacts,
    *,
    target_label: str,
    local_dir: Path | None,
    on_step: OnStep | None = None,
    cancel: threading.Event | None = None,
    **options: Any,
) -> JobStatus:
    """Snapshot, upload, launch and follow; the job's status at its end.

    With ``confirm_within`` it returns at the confirmation wait (``awaiting-confirm``).
    With ``cancel`` set while it runs, the outcome is the rolled-back state with
    ``cancelled`` true (see the module's notes).

    Raises:
        ApplyError: nothing was changed (see :func:`prepare`).
        ApplyCancelled: cancelled before the launch; nothing on the host was changed.
        JobInterrupted: the connection dropped after the launch; use :func:`status`.
    """
    prepared = prepare(
        transport,
        actions,
        server,
        target_label=target_label,
        local_dir=local_dir,
        cancel=cancel,
        **options,
    )
    launch(transport, prepared.job_id)
    done = follow(transport, prepared.job_id, on_step, cancel=cancel)
    if cancel is not None and cancel.is_set() and done.state == "awaiting-confirm":
        # The cancel came as the job began to wait (after follow's last look at it): ask
        # now, and follow the rollback it does at once, showing only the steps not shown.
        shown = max((step.seq for step in done.steps), default=0)

        def unseen(step: JobStep) -> None:
            if on_step is not None and step.seq > shown:
                on_step(step)

        request_cancel(transport, prepared.job_id)
        done = follow(transport, prepared.job_id, unseen, stop_at_confirm=False)
    if cancel is not None and cancel.is_set() and done.state == "applied":
        # The job finished before it read the request: undo it as asked.
        back = rollback(transport, prepared.job_id, local_dir=local_dir, on_step=on_step)
        back.cancelled = True
        back.errors.insert(0, "cancelled by the user after the job had finished; rolled back")
        return back
    if done.final:
        _prune_local(transport, local_dir, prepared.bundle.keep)
    return done


def rollback(
    transport: Transport,
    snapshot_id: str,
    *,
    local_dir: Path | None = None,
    on_step: OnStep | None = None,
    restart_argv: Sequence[str] | None = None,
    undo: Sequence[str] | None = None,
    keep: int | None = None,
) -> JobStatus:
    """Restore a snapshot with the job in restore mode (files, values, restart if needed).

    The target's copy is verified first; when it is gone but this computer holds a
    complete (unredacted) copy, that copy is put back on the target first.

    The job also restores, newest first, the newer snapshots of the same instance still
    in force (they become superseded). ``undo`` is that list as the preview showed it
    (:func:`app.jobs.history.choose_rollback`): when the job finds another, it
    refuses and restores nothing.

    Raises:
        SnapshotError: no usable copy: nothing is restored.
    """
    sudo = _sudo(transport)
    try:
        snapshot = snap.load_from_target(transport, snapshot_id, sudo=sudo)
    except snap.SnapshotError as missing:
        if local_dir is None:
            raise
        try:
            local = snap.load_locally(local_dir, snapshot_id)
        except snap.SnapshotError:
            raise missing from None
        if any(f.redacted for f in local.files):
            raise snap.SnapshotError(
                f"{missing.problem} This computer's copy holds a secret-bearing file only "
                "redacted, so it cannot stand in.",
                "Nothing was restored. Restore that file by hand.",
            ) from None
        snap.store_on_target(transport, local, sudo=sudo)
        snapshot = local
    job_id = f"{snap.new_id()}-restore"
    bundle = Bundle(
        id=job_id,
        mode="restore",
        snapshot_id=snapshot.id,
        snapshot_dir=snap.target_dir(snapshot.id),
        how={"restart": list(restart_argv)} if restart_argv else {},
        instance=snapshot.instance.get("key"),
        keep=keep or _keep_default(),
        undo=list(undo) if undo is not None else None,
    )
    _upload(transport, job_id, bundle)
    launch(transport, job_id)
    done = follow(transport, job_id, on_step)
    if done.final:
        _prune_local(transport, local_dir, keep)
    return done


def _keep_default() -> int:
    from app.jobs import history

    return history.keep_default()


def restart_argv_from(text: str | None) -> list[str] | None:
    """``--restart-command`` as an argv (split like a shell would, never run by one)."""
    return shlex.split(text) if text else None
