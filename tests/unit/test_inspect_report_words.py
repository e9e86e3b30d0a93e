"""The Inspect page's server and disk lines say what is true, in window words (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.hostfacts import HostFacts
from app.inspect.report import device_text, server_lines

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"
LINES = ["sid-mysql-9.7", "trixie-mariadb-11.8", "bullseye-mariadb-10.5"]


def _facts(name: str) -> HostFacts:
    return HostFacts.from_json((HOSTS / name / "facts.json").read_text())


@pytest.mark.parametrize("name", LINES)
def test_the_server_lines_name_the_files_that_set_options_and_the_redo_size(name: str) -> None:
    facts = _facts(name)
    assert facts.server is not None
    text = "\n".join(server_lines(facts.server, window=True))
    files = {line.file for line in facts.server.option_lines}
    assert files, "the recorded facts have option lines"
    for f in files:
        assert f in text
    # /etc/my.cnf sets nothing on these hosts (it does not exist there): never "read".
    assert "/etc/my.cnf" not in text
    assert "option files read" not in text
    assert "redo log 100.0 MiB" in text or "redo log 96.0 MiB" in text, text


@pytest.mark.parametrize("name", LINES)
def test_the_window_names_where_the_error_log_is_without_a_command(name: str) -> None:
    facts = _facts(name)
    assert facts.server is not None
    window = next(t for t in server_lines(facts.server, window=True) if "error log" in t)
    cli = next(t for t in server_lines(facts.server) if "error log" in t)
    assert " -n " not in window and "--" not in window and "sudo" not in window, window
    assert "read it with" in cli  # the command line keeps the command


def test_a_virtual_disk_is_never_called_spinning() -> None:
    from app.domain.facts import BlockDevice

    vda = BlockDevice(name="vda", kind="disk", transport="virtio", rotational=True)
    text = device_text(vda)
    assert "whether it spins is not known" in text
    assert "it reports spinning" in text
    sda = BlockDevice(name="sda", kind="disk", transport="sata", rotational=True)
    assert "spinning" in device_text(sda) and "not known" not in device_text(sda)
