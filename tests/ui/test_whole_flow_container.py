"""The whole wizard on a server in a Docker container: choose it, tune, restart, roll back.

Two containers run (and whatever else runs here), so the Connect page offers a chooser:
the container is picked there by its label (engine, name, image, compose service). The
change goes into the host directory mounted on the container's /etc/mysql/conf.d, the
restart is `docker restart`, and the rollback from the snapshot list puts the directory
back byte for byte.
With INNOTUNE_SCREENSHOTS=DIR the Connect page with the chooser open is saved there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QSlider
from pytestqt.qtbot import QtBot

from app.ui.pages.apply import ApplyPage
from app.ui.pages.connect import ConnectPage
from app.ui.pages.inspect import InspectPage
from app.ui.pages.preview import PreviewPage
from app.ui.pages.recommend import RecommendPage
from app.ui.pages.tradeoffs import TradeoffsPage
from tests.containers.engines import IMAGES, Docker
from tests.containers.fixtures import docker  # noqa: F401 - the fixture
from tests.containers.lifecycle import listing
from tests.hosts.util import short_watch
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    WATCH,
    _remove_new_jobs_and_snapshots,
)
from tests.ui.wizards import open_wizard


def _job_done(qtbot: QtBot, page: ApplyPage) -> None:
    qtbot.waitUntil(lambda: page.task is not None and not page.task.is_running(), timeout=240_000)
    qtbot.waitUntil(page.list_button.isEnabled)


def _checked(qtbot: QtBot, page: ConnectPage) -> None:
    qtbot.waitUntil(
        lambda: (
            page.task is not None and not page.task.is_running() and page.view.check.isEnabled()
        ),
        timeout=120_000,
    )


def test_whole_flow_on_a_container(
    qtbot: QtBot,
    tmp_path: Path,
    docker: Docker,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = IMAGES["trixie"]
    docker.load(spec)
    for key, value in docker.environ().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    short_watch(monkeypatch, WATCH)
    name = f"innotune-ui-{os.getpid()}"
    conf_dir = tmp_path / "conf"
    labels = {"com.docker.compose.project": "shop", "com.docker.compose.service": "db"}
    docker.run_server(name, spec, data_dir=tmp_path / "data", conf_dir=conf_dir, labels=labels)
    # A second one, so that the page offers its chooser whatever else runs here.
    docker.run_server(f"{name}-other", spec, data_dir=tmp_path / "data-other")
    try:
        before = listing(conf_dir)

        def trx() -> str:
            return docker.sql(name, spec, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")

        wizard, connect = open_wizard(qtbot, tmp_path)
        connect.view.local.setChecked(True)
        qtbot.mouseClick(connect.view.check, Qt.MouseButton.LeftButton)
        _checked(qtbot, connect)
        chooser = connect.view.chooser
        assert chooser.isVisible(), connect.view.message.text()
        labels_shown = [chooser.itemText(i) for i in range(chooser.count())]
        index = next(i for i, t in enumerate(labels_shown) if f"docker container {name}" in t)
        assert "compose shop/db" in labels_shown[index]
        chooser.setCurrentIndex(index)
        shots = os.environ.get("INNOTUNE_SCREENSHOTS")
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            wizard.grab().save(str(Path(shots) / "connect-choose-container.png"))
        chooser.activated.emit(index)
        _checked(qtbot, connect)
        assert connect.isComplete(), connect.view.message.text()
        assert connect.view.instance.text() == name

        inspect = wizard.pages["Inspect"]
        assert isinstance(inspect, InspectPage)
        inspect.sample.setValue(1)
        wizard.next()
        qtbot.waitUntil(lambda: wizard.state.facts is not None, timeout=120_000)
        facts = wizard.state.facts
        assert facts is not None and facts.server is not None
        assert facts.server.instance.container is not None

        wizard.next()
        rec = wizard.currentPage()
        assert isinstance(rec, RecommendPage)
        assert f"For the container {name}" in rec.text.text(), rec.text.text()
        qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=60_000)
        if shots:
            wizard.grab().save(str(Path(shots) / "recommendation-container.png"))
        wizard.next()
        tradeoffs = wizard.currentPage()
        assert isinstance(tradeoffs, TradeoffsPage)
        for shared in ("fit_os", "fit_disks"):  # this machine's kernel and disks
            box = tradeoffs.sections[shared].control
            assert isinstance(box, QCheckBox)
            box.setChecked(False)
        crash = tradeoffs.sections["crash_loss"].control
        assert isinstance(crash, QSlider)
        crash.setValue(1)

        wizard.next()
        preview = wizard.currentPage()
        assert isinstance(preview, PreviewPage)
        qtbot.waitUntil(lambda: wizard.state.preview is not None, timeout=120_000)
        diff = preview.diffs.toPlainText()
        assert f"{conf_dir}/99-innotune.cnf" in diff, diff
        # Export offers the container's durable way; it writes the drop-in with this host's
        # values and the compose override, and says what to run.
        assert preview.container_action.isVisible()
        preview.export_to("container", tmp_path / "durable")
        qtbot.waitUntil(lambda: "Wrote " in preview.status.text(), timeout=60_000)
        said = preview.status.text()
        assert "compose override for the service db" in said and "-p shop" in said, said
        assert "INNOTUNE" not in (tmp_path / "durable" / "99-innotune.cnf").read_text()
        assert "--" not in said.split("run:", 1)[0], "no command-line flags before the commands"

        wizard.next()
        apply = wizard.currentPage()
        assert isinstance(apply, ApplyPage)
        apply.restart_box.setChecked(True)
        apply.measure_box.setChecked(False)  # measuring is the whole flow's test (test_whole_flow)
        assert f"docker restart {name}" in apply.restart_note.text()
        apply.consent.setChecked(True)
        apply.apply_button.click()
        _job_done(qtbot, apply)
        assert apply.status is not None and apply.status.state == "applied", (
            apply.state_label.text()
        )
        assert f"docker restart {name}" in apply.journal.toPlainText()
        assert trx() == "2" and listing(conf_dir) != before

        apply.list_button.click()
        _job_done(qtbot, apply)
        ids = [apply.snapshots.item(i).data(256) for i in range(apply.snapshots.count())]
        apply.snapshots.setCurrentRow(ids.index(apply.status.snapshot_id))
        qtbot.waitUntil(apply.restore_button.isEnabled)
        apply.ask_restore = lambda choice, _id="": True  # type: ignore[method-assign]
        apply.restore_button.click()
        _job_done(qtbot, apply)
        assert apply.status.state == "rolled-back", apply.state_label.text()
        assert trx() == "1" and listing(conf_dir) == before
        wizard.done(0)
    finally:
        docker.cli("rm", "-f", name, f"{name}-other", check=False)
