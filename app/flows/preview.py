"""The preview: every applier's description of a plan, over the connection when there is one."""

from __future__ import annotations

from app.access.doctor import DoctorResult
from app.describe.actions import Host
from app.describe.preview import Preview, build_preview, with_checksums, with_requested_restart
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.remote.container import ContainerTransport

__all__ = [
    "Preview",
    "preview_plan",
    "target_host",
    "with_checksums",
    "with_requested_restart",
]


def target_host(facts: HostFacts, conn: DoctorResult | None, persisted: str = "reset") -> Host:
    """What the describers work on: live through ``conn``, else from the saved facts alone.

    ``persisted`` is what to do with a value MySQL's SET PERSIST keeps ("reset" or "persist").
    """
    if conn is None or conn.transport is None:
        return Host(facts)
    container = facts.server.instance.container if facts.server is not None else None
    inside = None
    if container is not None:
        inside = ContainerTransport(conn.transport, container, sudo=conn.can_sudo)
    return Host(
        facts,
        conn.transport,
        conn.session,
        sudo=conn.can_sudo,
        persisted=persisted,
        server_transport=inside,
    )


def preview_plan(
    plan: Plan, facts: HostFacts, conn: DoctorResult | None, persisted: str = "reset"
) -> Preview:
    """Exactly what applying ``plan`` would do; nothing is written."""
    return build_preview(plan, target_host(facts, conn, persisted))
