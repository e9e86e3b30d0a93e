"""``innotune --self-test`` from source: every check passes; a broken install is named."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

import app.resources
from app.cli import build_parser
from app.domain import threads
from app.ui.selftest import CHECKS, run_self_test


def test_self_test_passes_and_says_what_it_checked(qapp: QApplication) -> None:
    before = {id(w) for w in qapp.topLevelWidgets() if w.isVisible()}
    gui_thread = threads._gui_thread_id
    out = io.StringIO()
    assert run_self_test(out) == 0
    text = out.getvalue()
    assert "(from source," in text
    for name, _check in CHECKS:
        assert f"ok   {name}: " in text
    assert (
        "pages: Connect, Inspect, Recommendation, Trade-offs, Preview, Apply, Verify, Done" in text
    )
    assert "PySide6.QtCharts" in text and "paramiko " in text
    assert text.rstrip().endswith("self-test passed")
    after = {id(w) for w in qapp.topLevelWidgets() if w.isVisible()}
    assert after <= before  # the wizard it opened is gone again
    assert threads._gui_thread_id == gui_thread  # the running application's set-up is kept


def test_self_test_names_missing_data_files(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.resources, "_SOURCE_ROOT", tmp_path)  # an install without resources/
    out = io.StringIO()
    assert run_self_test(out) == 1
    text = out.getvalue()
    assert f"FAIL resources: SelfTestFailed: missing under {tmp_path / 'resources'}" in text
    assert "FAIL wizard: SelfTestFailed: the window icon did not load" in text
    assert text.rstrip().endswith("self-test FAILED (2 of 6 checks)")


def test_self_test_is_a_top_level_option() -> None:
    parser, _handlers = build_parser()
    assert parser.parse_args(["--self-test"]).self_test
    assert "--self-test" in parser.format_help()


def test_self_test_fails_when_the_keyring_libraries_are_missing(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build without the Secret Service's D-Bus library would leave the keyring box off
    forever with a puzzling reason: the self-test names it instead."""
    monkeypatch.setitem(sys.modules, "secretstorage", None)  # import raises ImportError
    out = io.StringIO()
    assert run_self_test(out) == 1
    assert "FAIL keyring: ModuleNotFoundError" in out.getvalue()
    assert "secretstorage" in out.getvalue()
