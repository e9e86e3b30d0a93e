"""The durable way for a server in a container with no mounted configuration directory.

A file written inside a container is lost when the container is recreated (``docker compose
up --force-recreate``, a new image, ``docker rm``). What lasts is in the container's
definition: a compose override that mounts InnoTune's drop-in from the host into the
directory the server reads (/etc/mysql/conf.d in the official images and in Debian's
layout), or the same settings as options of the server's command. InnoTune writes these
files for the person to apply; it does not change the compose project itself.
"""

from __future__ import annotations

import json

from app.domain.container import Container
from app.domain.plan import Plan
from app.export.model import DROPIN_NAME, PLACEHOLDER, comment, digest, dropin_text

CONF_DIR = "/etc/mysql/conf.d"
OVERRIDE_NAME = "compose.override.yml"


def command_options(plan: Plan) -> list[str]:
    """The plan's server settings as command-line options (``--name=value``)."""
    export = digest(plan)
    return [
        f"--{s.key.replace('_', '-')}={PLACEHOLDER if s.per_host else s.change.proposed}"
        for s in export.settings
    ]


def compose_files(plan: Plan, container: Container) -> dict[str, str]:
    """The drop-in and a compose override mounting it (file name → text).

    Raises:
        ExportError: a name or value InnoTune does not export (see :func:`digest`).
    """
    export = digest(plan)
    service = container.compose_service or container.name
    options = command_options(plan)
    args = list(container.command[1:]) if len(container.command) > 1 else []
    lines = [
        "# Written by InnoTune for the "
        f"{container.engine} container {container.name} ({container.image}).",
        *comment(
            "A file written inside a container is lost when the container is recreated; this "
            "override mounts InnoTune's drop-in from the host, so it lasts. Put both files "
            "beside the project's compose file, then run: docker compose up -d (the server "
            f"restarts with {DROPIN_NAME} read from {CONF_DIR})."
        ),
        *comment(
            "The other durable way is the server's command: replace the volumes entry below by "
            "command: " + json.dumps([*args, *options])
        ),
    ]
    if export.pool_rule is not None:
        lines += comment(
            f"{PLACEHOLDER} stands for the buffer pool this host's RAM allows; put the value "
            "from innotune preview in its place."
        )
    lines += [
        "services:",
        f"  {service}:",
        "    volumes:",
        f"      - ./{DROPIN_NAME}:{CONF_DIR}/{DROPIN_NAME}:ro",
        "",
    ]
    return {DROPIN_NAME: dropin_text(export), OVERRIDE_NAME: "\n".join(lines)}
