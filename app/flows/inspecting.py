"""Inspecting a host the doctor connected to: every fact the planner needs."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.access.doctor import DoctorResult
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.inspect.inspection import inspect

MAX_SAMPLE_SECONDS = 600


def check_sample(seconds: float) -> None:
    """Refuse a counter-sampling time out of range.

    Raises:
        InnoTuneError: ``seconds`` is negative or above ten minutes.
    """
    if not 0 <= seconds <= MAX_SAMPLE_SECONDS:
        raise InnoTuneError(f"--sample must be between 0 and {MAX_SAMPLE_SECONDS} seconds.")


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
