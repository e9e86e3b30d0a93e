"""The plan exported for other tools: an Ansible playbook or one POSIX sh script.

Both are rendered from the plan's Actions, described by the same describers as Preview and
the job (:func:`app.export.model.digest`); ``facts`` (when the plan came from them) tell
which kind of disk each queue setting was planned for.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export import playbook_files, shell_script
from app.export.compose import Durable, durable_way


def export_playbook(plan: Plan, directory: Path, facts: HostFacts | None = None) -> list[Path]:
    """The plan as a playbook with one role under ``directory``; the paths written."""
    written = []
    for name, text in sorted(playbook_files(plan, facts).items()):
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def export_durable(
    plan: Plan, container: Container, directory: Path, facts: HostFacts | None = None
) -> tuple[Durable, list[Path]]:
    """The durable way for a server in a container (compose override or docker run line)."""
    durable = durable_way(plan, container, directory, facts)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sorted(durable.files.items()):
        path = directory / name
        path.write_text(text)
        written.append(path)
    return durable, written


def export_script(plan: Plan, path: Path, facts: HostFacts | None = None) -> None:
    """The plan as one sh script (``sh FILE check|apply|rollback``), run by its owner only."""
    path.write_text(shell_script(plan, facts))
    os.chmod(path, 0o700)  # it runs as root
