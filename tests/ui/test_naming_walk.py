"""Pages name the container tuned, and its host, never "local" or "this computer" alone.

Facts recorded on the sid host, as a server in a Docker container on this computer shows them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.domain.target import parse_target
from app.ui.pages.done import DonePage
from app.ui.pages.tradeoffs import TradeoffsPage
from app.ui.state import WizardState

FACTS = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7/facts.json"
PLACE = "the docker container shop-db on this computer"


def _container_state() -> WizardState:
    facts = HostFacts.from_json(FACTS.read_text())
    assert facts.server is not None
    box = Container("docker", "c0ffee", "shop-db", "mysql:9.7")
    instance = dataclasses.replace(facts.server.instance, container=box, started_by="container")
    facts = dataclasses.replace(
        facts,
        target="this computer",
        server=dataclasses.replace(facts.server, instance=instance),
    )
    return WizardState(target=parse_target("local"), facts=facts)


def test_trade_offs_and_done_name_the_container_and_its_host(qtbot: QtBot) -> None:
    state = _container_state()
    tradeoffs = TradeoffsPage(state)
    qtbot.addWidget(tradeoffs)
    tradeoffs.initializePage()
    summary = tradeoffs.summary.text()
    assert f" for {PLACE} (" in summary, summary
    assert state.plan is not None and state.plan.changes
    state.snapshot_id = "20261129-080000-abcd"
    done = DonePage(state)
    qtbot.addWidget(done)
    done.initializePage()
    text = done.text.text()
    assert f"applied to {PLACE}</h3>" in text, text
    assert "applied to local" not in text and "applied to this computer<" not in text
    assert "innotune rollback local 20261129-080000-abcd" in text  # the command's own target
