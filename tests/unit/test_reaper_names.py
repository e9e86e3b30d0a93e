"""The reaper tears down only what names a dead run's directories (tests/hosts/reaper.py)."""

from __future__ import annotations

import pytest

from tests.hosts.reaper import _names


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("/usr/sbin/mariadbd --datadir=/tmp/pytest-of-root/pytest-1/srv0/data", True),
        ("/tmp/pytest-of-root/pytest-1", True),
        ("sleep 60 /tmp/pytest-of-root/pytest-1 more", True),
        # Another run's directory whose name starts the same: not this run's.
        ("/usr/sbin/mariadbd --datadir=/tmp/pytest-of-root/pytest-12/srv0/data", False),
        ("/tmp/pytest-of-root/pytest-10", False),
    ],
)
def test_a_run_s_directory_is_named_only_as_a_whole_path(text: str, named: bool) -> None:
    assert _names("/tmp/pytest-of-root/pytest-1", text) is named
    assert _names("/tmp/pytest-of-root/pytest-1/", text) is named
