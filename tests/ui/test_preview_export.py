"""The Preview page's Export… button: Ansible folder and shell script, written by a worker."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from app.domain.hostfacts import HostFacts
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from app.ui.pages.preview import PreviewPage
from app.ui.state import WizardState

FACTS = Path(__file__).parents[1] / "fixtures/hosts/practice-mariadb-10.11/facts.json"


def test_export_menu_writes_a_playbook_folder_and_a_script(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = HostFacts.from_json(FACTS.read_text())
    positions = dataclasses.replace(default_positions(facts), crash_loss="os", memory_share=20)
    plan = make_plan(facts, positions, default_catalogue())
    page = PreviewPage(WizardState(facts=facts, plan=plan))
    qtbot.addWidget(page)
    menu = page.export_button.menu()
    assert menu is not None
    actions = {a.text(): a for a in menu.actions() if a.isVisible()}
    # Not a server in a container: no durable way for one is offered.
    assert set(actions) == {"Ansible playbook (folder)…", "Shell script (file)…"}

    folder = tmp_path / "playbook"
    folder.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    actions["Ansible playbook (folder)…"].trigger()
    assert page.export_task is not None
    with qtbot.waitSignal(page.export_task.ended, timeout=30_000):
        pass
    assert (folder / "site.yml").is_file()
    assert (folder / "roles/innotune/templates/pool.j2").is_file()
    assert "Wrote an Ansible playbook" in page.status.text()

    script = tmp_path / "plan.sh"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(script), ""))
    actions["Shell script (file)…"].trigger()
    with qtbot.waitSignal(page.export_task.ended, timeout=30_000):
        pass
    assert f"Wrote {script}" in page.status.text()
    assert os.stat(script).st_mode & 0o777 == 0o700
    subprocess.run(["sh", "-n", str(script)], check=True)
