"""The plan as an Ansible playbook or a shell script (pure: a plan in, file contents out)."""

from __future__ import annotations

from app.export.ansible import playbook_files
from app.export.model import ExportError
from app.export.script import shell_script

__all__ = ["ExportError", "playbook_files", "shell_script"]
