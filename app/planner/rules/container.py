"""A server in a container whose configuration is not kept on the host: said up front.

InnoTune writes option files only where they outlive the container (a mounted host
directory or volume); apply refuses the rest (app/describe/optiondestination.py). The plan
says so before anyone previews or applies, with the durable way to take instead.
"""

from __future__ import annotations

import posixpath

from app.planner.context import Ctx

#: The changes an option file carries.
SERVER_TARGETS = ("option_file", "dynamic", "option_remove")

#: Include directories the Debian and official images' servers read.
CONF_DIRS = ("/etc/mysql/conf.d", "/etc/mysql/mariadb.conf.d", "/etc/mysql/mysql.conf.d")


def not_in_place(ctx: Ctx) -> None:
    """Warn when no configuration directory the server reads is kept on the host."""
    server = ctx.facts.server
    container = server.instance.container if server is not None else None
    if server is None or container is None:
        return
    if not any(c.target in SERVER_TARGETS for c in ctx.changes):
        return
    read = {posixpath.dirname(line.file) for line in server.option_lines}
    candidates = sorted(read | set(CONF_DIRS) | {posixpath.dirname(f) for f in server.option_files})
    if any(container.bind_for(d) is not None for d in candidates if d.startswith("/")):
        return
    ctx.warn(
        f"The container {container.name} keeps no configuration directory on the host: a "
        "server setting written inside it would be lost when the container is recreated, so "
        "InnoTune cannot change it in place and Apply will refuse the server settings. Export "
        "the durable way instead (Export on the Preview page, or innotune export): "
        + (
            "a compose override that mounts InnoTune's file from the host."
            if container.compose_project
            else "a script that recreates the container with InnoTune's file mounted."
        )
    )
