"""The Inspect page's picture agrees with its text, and a container's write path is not blank.

Facts recorded on the practice server (a virtio disk that reports itself rotational) and
on the sid host, the latter as a server in a container shows them: no write path followed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import QGroupBox
from pytestqt.qtbot import QtBot

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.inspect.report import path_lines
from app.ui.pages.inspect import InspectPage
from app.ui.state import WizardState
from app.ui.widgets.wraplabel import WrapLabel

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"


def _facts(host: str) -> HostFacts:
    return HostFacts.from_json((HOSTS / host / "facts.json").read_text())


def _page(qtbot: QtBot, facts: HostFacts) -> InspectPage:
    page = InspectPage(WizardState())
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    page.show_facts(facts)
    return page


def test_the_picture_says_spinning_only_where_the_text_does(qtbot: QtBot) -> None:
    facts = _facts("practice-debian12")  # vda: virtio, reports rotational
    page = _page(qtbot, facts)
    text = "\n".join(path_lines(facts.os.write_paths[0]))
    assert "whether it spins is not known" in text
    drawn = " ".join(detail for column in page.picture.columns for _title, detail in column)
    assert "virtio" in drawn and "spins: not known" in drawn, drawn
    assert "spinning" not in drawn, drawn


def test_a_container_without_a_write_path_is_said_and_leaves_no_blank_band(
    qtbot: QtBot,
) -> None:
    facts = _facts("sid-mysql-9.7")
    assert facts.server is not None
    box = Container("docker", "c0ffee", "shop-db", "mysql:9.7")
    instance = dataclasses.replace(facts.server.instance, container=box, started_by="container")
    server = dataclasses.replace(facts.server, instance=instance)
    facts = dataclasses.replace(
        facts, server=server, os=dataclasses.replace(facts.os, write_paths=())
    )
    page = _page(qtbot, facts)
    assert page.picture.isHidden()  # no empty picture: no blank band above the facts
    group = page.findChild(QGroupBox, "facts_write_path")
    assert group is not None
    label = group.findChild(WrapLabel)
    assert label is not None
    said = label.text()
    assert "inside the container shop-db (docker)" in said and "/var/lib/mysql" in said, said
