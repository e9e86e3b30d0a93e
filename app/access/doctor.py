"""`innotune doctor`: every step from the target to a database login, checked in order.

Each step yields a :class:`Step` as soon as it is known, so the CLI prints one line per
step and the Connect page shows them as they complete. The first failing step stops the
steps that depend on it; those are reported as skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from app.access.database import PROGRAMS_ARGV, Credentials, open_session, programs_in
from app.domain.errors import HostKeyUnknown, InnoTuneError, SudoError
from app.domain.instance import ServerInstance
from app.domain.target import Target
from app.domain.words import count
from app.inspect.containers import parse_stopped
from app.inspect.instances import FIND_ARGV, choose_instance, parse_instances, present_sockets
from app.mysql.session import Outcome, Session, query_many
from app.remote.connect import SUDO_PROBE, probe_sudo
from app.remote.transport import CommandResult, Transport, flush, submit

log = logging.getLogger(__name__)

STEP_NAMES = ("connect", "host", "sudo", "server", "instance", "socket", "login", "privileges")
#: Each step as a person reads it (the window's step list, a skipped step's reason).
STEP_TITLES = {
    "connect": "Connection",
    "host": "Linux host",
    "sudo": "Administrator rights (sudo)",
    "server": "Database server",
    "instance": "Which server",
    "socket": "Socket or port",
    "login": "Database login",
    "privileges": "Privileges",
}


@dataclass(frozen=True)
class Step:
    """One checked step: ok, warn (works, with a caveat), fail or skip."""

    name: str
    status: str
    detail: str
    fix: str = ""
    # The fix as the wizard words it (a box or a dialog instead of a flag); "" when the same.
    window_fix: str = ""

    @property
    def passed(self) -> bool:
        """True for ok and warn."""
        return self.status in ("ok", "warn")

    def line(self) -> str:
        """The step as one line of `innotune doctor` output."""
        text = f"{self.status.upper():5} {self.name:11} {self.detail}"
        return f"{text} — {self.fix}" if self.fix else text


@dataclass(frozen=True)
class Secrets:
    """Secrets for this connection, kept in memory only."""

    login_password: str | None = None
    key_passphrase: str | None = None
    sudo_password: str | None = None
    mysql_password: str | None = None

    def __post_init__(self) -> None:
        from app.domain.redact import register_secret

        for value in (
            self.login_password,
            self.key_passphrase,
            self.sudo_password,
            self.mysql_password,
        ):
            register_secret(value)


@dataclass
class DoctorResult:
    """What the doctor found; the open transport and session are reused by the next steps."""

    steps: list[Step] = field(default_factory=list)
    transport: Transport | None = None
    instances: list[ServerInstance] = field(default_factory=list)
    instance: ServerInstance | None = None
    session: Session | None = None
    sudo_mode: str = ""
    host_key_question: HostKeyUnknown | None = None

    @property
    def ok(self) -> bool:
        """True when every step passed."""
        return bool(self.steps) and all(s.passed for s in self.steps)

    @property
    def can_sudo(self) -> bool:
        """True when commands may run as root here: logged in as root, or sudo works."""
        return self.sudo_mode in ("root", "nopasswd", "password-ok")

    def close(self) -> None:
        """Close the session and the transport."""
        if self.session is not None:
            self.session.close()
        if self.transport is not None:
            self.transport.close()


Opener = Callable[..., Transport]


def _fail(name: str, exc: InnoTuneError) -> Step:
    return Step(
        name, "fail", exc.problem, exc.fix, "" if exc.window_fix == exc.fix else exc.window_fix
    )


def _skip_rest(result: DoctorResult, after: str) -> Iterator[Step]:
    for name in STEP_NAMES[STEP_NAMES.index(after) + 1 :]:
        step = Step(name, "skip", f"not checked: an earlier step failed ({STEP_TITLES[after]})")
        result.steps.append(step)
        yield step


def run_doctor(
    target: Target,
    secrets: Secrets,
    result: DoctorResult,
    *,
    opener: Opener,
    instance_spec: str | None = None,
    own_known_hosts: str | None = None,
) -> Iterator[Step]:
    """Check each step against ``target``, yielding steps as they complete.

    ``result`` collects the steps and keeps the open transport, instance and session.
    ``opener`` is :func:`app.remote.connect.open_transport` (passed in to keep this
    module free of the SSH library's details).
    """

    def emit(step: Step) -> Step:
        result.steps.append(step)
        log.info("doctor %s: %s", target.label, step.line())
        return step

    # 1. connect
    try:
        transport = opener(
            target,
            sudo_password=secrets.sudo_password,
            login_password=secrets.login_password,
            key_passphrase=secrets.key_passphrase,
            accept_fingerprint=target.options.accept_host_key,
            own_known_hosts=own_known_hosts,
        )
    except HostKeyUnknown as question:
        result.host_key_question = question
        yield emit(
            Step(
                "connect",
                "fail",
                f"unknown host key {question.key_type} {question.fingerprint}",
                f"if the server's administrator confirms it, run again with "
                f"--accept-host-key {question.fingerprint}",
                "if the server's administrator confirms the fingerprint, trust the key in the "
                "dialog that opens",
            )
        )
        yield from _skip_rest(result, "connect")
        return
    except InnoTuneError as exc:
        yield emit(_fail("connect", exc))
        yield from _skip_rest(result, "connect")
        return
    result.transport = transport
    yield emit(Step("connect", "ok", f"connected to {transport.label}"))

    # Everything the next steps ask the host goes out together: one round trip over SSH
    # (the connection's shell), the commands running while the answers are awaited.
    # The server list is asked for as root at once, unless that could cost a sudo
    # password attempt; sudo -n only ever asks sudo whether it needs none.
    # Without a sudo password, running it under `sudo -n` is also the sudo probe.
    uname_p = submit(transport, ["uname", "-sr"], timeout=20)
    hopeful = secrets.sudo_password is None
    find_p = submit(transport, list(FIND_ARGV), sudo=True, timeout=30) if hopeful else None
    sudo_p = None if hopeful else submit(transport, list(SUDO_PROBE), timeout=30)
    programs_p = submit(transport, list(PROGRAMS_ARGV), timeout=20)
    flush(transport)
    # Without a database password the login goes through a relay: its channel's login
    # shell can start now, while the host answers.
    prepare = getattr(transport, "prepare_stream", None)
    if secrets.mysql_password is None and callable(prepare):
        prepare()

    # 2. host
    uname = uname_p.result()
    system = uname.out.split()
    if not uname.ok or not system or system[0] != "Linux":
        yield emit(
            Step(
                "host",
                "fail",
                f"not a Linux host ({uname.out.strip() or uname.err.strip()})",
                "InnoTune tunes Linux hosts only",
            )
        )
        yield from _skip_rest(result, "host")
        return
    yield emit(Step("host", "ok", f"Linux {system[1] if len(system) > 1 else ''}".strip()))

    # 3. sudo
    use_sudo = True
    as_root: CommandResult | None = None  # the server list, asked for as root
    try:
        if find_p is not None and not transport.is_root:
            try:
                as_root = find_p.result()  # sudo's refusal raises what the probe would
            except SudoError:
                raise
            except InnoTuneError:
                as_root = None  # the list failed, not sudo: asked again below
            if as_root is not None and as_root.ok and "@@end" in as_root.out:
                result.sudo_mode = "nopasswd"
            else:
                as_root = None
                result.sudo_mode = probe_sudo(transport)
        else:
            probe = None if transport.is_root or sudo_p is None else sudo_p.result()
            result.sudo_mode = probe_sudo(transport, probe)
            if find_p is not None:
                try:
                    as_root = find_p.result()
                except InnoTuneError:
                    as_root = None  # asked again below, where its failure is reported
        detail = {
            "root": "logged in as root: no sudo needed",
            "nopasswd": "sudo works without a password",
            "password-ok": "sudo works with the password given",
        }.get(result.sudo_mode, result.sudo_mode)
        yield emit(Step("sudo", "ok", detail))
    except InnoTuneError as exc:
        use_sudo = False
        if target.kind == "practice":
            # The practice server is ours: its login is our own account, no sudo needed.
            yield emit(
                Step(
                    "sudo",
                    "warn",
                    f"{exc.problem} Not needed for the practice server's "
                    "settings; disk and kernel changes will be advice only.",
                )
            )
        else:
            yield emit(_fail("sudo", exc))

    # 4. server instances
    try:
        # The list asked for as root is used when root is what this connection gets
        # without a password; otherwise it is asked again, as this connection may.
        found = as_root if result.sudo_mode in AS_ROOT else None
        if found is None or not found.ok:
            found = transport.run(list(FIND_ARGV), sudo=use_sudo, timeout=30)
        instances = parse_instances(found.check().out)
        present = present_sockets(found.out)
        stopped = parse_stopped(found.out)
    except InnoTuneError as exc:
        yield emit(_fail("server", exc))
        yield from _skip_rest(result, "server")
        return
    spec = instance_spec or target.options.instance
    if spec and any(c.name == spec.strip() for c in stopped):
        try:  # a stopped container asked for by name: named as stopped, with how to start it
            choose_instance(instances, spec, stopped)
        except InnoTuneError as exc:
            yield emit(_fail("server", exc))
            yield from _skip_rest(result, "server")
            return
    if not instances:
        yield emit(
            Step(
                "server",
                "fail",
                "no MySQL or MariaDB server is running on this host",
                "start it (for example: sudo service mariadb start) and run again",
            )
        )
        yield from _skip_rest(result, "server")
        return
    result.instances = instances
    yield emit(Step("server", "ok", f"{count(len(instances), 'server instance')} running"))

    # 5. which instance
    try:
        instance = choose_instance(instances, spec, stopped)
    except InnoTuneError as exc:
        yield emit(_fail("instance", exc))
        yield from _skip_rest(result, "instance")
        return
    result.instance = instance
    yield emit(Step("instance", "ok", instance.label))

    # 6. socket or port
    if instance.container is not None:
        engine = instance.container.engine
        yield emit(Step("socket", "ok", f"inside the container, reached through {engine} exec"))
    elif instance.socket:
        # The server list said which sockets exist; only one it did not see is asked after.
        there = instance.socket in present or (
            transport.run(["test", "-S", instance.socket], sudo=use_sudo, timeout=20).ok
        )
        if there:
            yield emit(Step("socket", "ok", f"socket {instance.socket} exists"))
        else:
            yield emit(
                Step(
                    "socket",
                    "fail",
                    f"socket {instance.socket} is missing",
                    "check the server's socket option; is it still starting?",
                )
            )
            yield from _skip_rest(result, "socket")
            return
    elif instance.port:
        yield emit(Step("socket", "ok", f"TCP port {instance.port} (no socket found)"))
    else:
        yield emit(
            Step(
                "socket",
                "fail",
                "neither a socket nor a TCP port was found for the server",
                "run with sudo so InnoTune can read the server's open sockets",
            )
        )
        yield from _skip_rest(result, "socket")
        return

    # 7. login
    creds = Credentials(target.options.mysql_user, secrets.mysql_password)
    try:
        # The practice server's login is our own OS account, never root through a relay.
        db_sudo = use_sudo and target.kind != "practice"
        session = open_session(
            transport, instance, creds, use_sudo=db_sudo, have=programs_in(programs_p.result())
        )
    except InnoTuneError as exc:
        yield emit(_fail("login", exc))
        yield from _skip_rest(result, "login")
        return
    result.session = session
    # The login's own question and the privilege checks: one round trip.
    answers = query_many(session, ["SELECT CURRENT_USER(), VERSION()", *PRIVILEGE_QUERIES])
    if isinstance(answers[0], InnoTuneError):
        # A login that opens lazily (a client per query: a server in a container) is
        # refused here, at its first question: the same failed step as any other login.
        yield emit(_fail("login", answers[0]))
        yield from _skip_rest(result, "login")
        return
    who = answers[0][0]
    relay_note = " (full database access)" if "relay" in session.via else ""
    yield emit(Step("login", "ok", f"{who[0]} on {who[1]} via {session.via}{relay_note}"))

    # 8. privileges
    yield emit(check_privileges(session, answers[1:]))


#: What :func:`check_privileges` asks: variables, status, and the account's grants.
PRIVILEGE_QUERIES = (
    "SHOW GLOBAL VARIABLES LIKE 'version'",
    "SHOW GLOBAL STATUS LIKE 'Uptime'",
    "SHOW GRANTS",
)
# The sudo modes in which sudo -n (or being root) reaches root.
AS_ROOT = ("root", "nopasswd")


def check_privileges(session: Session, answers: Sequence[Outcome] | None = None) -> Step:
    """Whether the account can read what inspection needs and set variables live.

    ``answers``: the outcomes of :data:`PRIVILEGE_QUERIES`, when already asked.
    """
    if answers is None:
        answers = query_many(session, PRIVILEGE_QUERIES)
    try:
        for outcome in answers:
            if isinstance(outcome, InnoTuneError):
                raise outcome
        grants_rows = answers[2]
        assert not isinstance(grants_rows, InnoTuneError)
        grants = " ".join(r[0] or "" for r in grants_rows).upper()
    except InnoTuneError as exc:
        return Step(
            "privileges",
            "fail",
            f"cannot read variables or status: {exc.problem}",
            "grant this account PROCESS and SELECT, or log in with sudo as root",
        )
    everything = "ALL PRIVILEGES ON *.*" in grants
    can_set = everything or "SUPER" in grants or "SYSTEM_VARIABLES_ADMIN" in grants
    can_process = everything or "PROCESS" in grants
    if not can_process:
        return Step(
            "privileges",
            "fail",
            "the account lacks PROCESS (needed for InnoDB status)",
            "GRANT PROCESS ON *.* TO the account, or log in with sudo as root",
        )
    if not can_set:
        return Step(
            "privileges",
            "warn",
            "can inspect, but cannot SET GLOBAL: changes will wait for a restart",
            "grant SUPER (MariaDB) or SYSTEM_VARIABLES_ADMIN (MySQL) to set them live",
        )
    return Step("privileges", "ok", "can read everything and set variables live")
