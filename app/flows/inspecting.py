"""Inspecting a host the doctor connected to: every fact the planner needs."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from app.access.database import Credentials, open_session
from app.access.doctor import DoctorResult
from app.domain.errors import DatabaseError, InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.words import sentence
from app.inspect.inspection import inspect

MAX_SAMPLE_SECONDS = 600


def check_sample(seconds: float) -> None:
    """Refuse a counter-sampling time out of range.

    Raises:
        InnoTuneError: ``seconds`` is negative or above ten minutes.
    """
    if not 0 <= seconds <= MAX_SAMPLE_SECONDS:
        raise InnoTuneError(f"--sample must be between 0 and {MAX_SAMPLE_SECONDS} seconds.")


def follow_instance(conn: DoctorResult) -> bool:
    """Look the connected server up again; True when it is another process than before.

    The instance the check found names a process: its pid and how it started. A server
    restarted since (by an apply, a rollback, an exercise, a person) is a new process, and
    facts built on the old instance would show the old pid. It is found again by what
    stays (its container, socket, port or service); when nothing matches it is kept as it
    was, and reading the server through the session tells whether it still runs.
    """
    assert conn.transport and conn.instance
    from app.inspect.instances import find_again, find_instances

    found = find_instances(conn.transport, sudo=conn.can_sudo)
    again = find_again(found, conn.instance)
    if again is None:
        return False
    moved = again.pid != conn.instance.pid
    conn.instance, conn.instances = again, found
    return moved


def renew_lost_session(
    conn: DoctorResult,
    credentials: Credentials,
    *,
    use_sudo: bool,
    say: Callable[[str], None] = lambda _text: None,
) -> bool:
    """Log in to the database again when the session the check opened is gone.

    A server restarted since the check (an exercise, an apply, a service restart) has closed
    the session: a query on it fails with error 2006 (a broken pipe). Returns True when it
    logged in again. Call :func:`follow_instance` first: the restarted server has a new pid.

    Raises:
        DatabaseError: the session was lost and logging in again failed.
    """
    assert conn.transport and conn.instance and conn.session
    try:
        conn.session.query("SELECT 1")
        return False
    except InnoTuneError:
        pass
    say("The database session was lost (the server restarted); logging in again")
    old, conn.session = conn.session, None
    with contextlib.suppress(Exception):  # its server process is gone; closing may fail
        old.close()
    try:
        conn.session = open_session(conn.transport, conn.instance, credentials, use_sudo=use_sudo)
    except InnoTuneError as exc:
        raise DatabaseError(
            sentence(
                "The database session was lost (the server restarted) and logging in again "
                f"failed: {exc.problem}"
            ),
            "Check that the server runs, then go Back to Connect and press Check connection.",
        ) from None
    return True


def inspect_connected(
    conn: DoctorResult,
    *,
    sample_seconds: float,
    say: Callable[[str], None],
    disk_probe: bool = False,
    wait: Callable[[float], None] = time.sleep,
) -> HostFacts:
    """Inspect the host and server ``conn`` reaches, as root where sudo allows.

    ``wait`` spends what is left of the sampling window (the wizard's returns at a cancel).
    """
    assert conn.transport and conn.instance and conn.session
    return inspect(
        conn.transport,
        conn.instances,
        conn.instance,
        conn.session,
        sample_seconds=sample_seconds,
        disk_probe=disk_probe,
        use_sudo=conn.can_sudo,
        say=say,
        wait=wait,
    )
