"""Fixtures for the container tests: a private dockerd and podman; the machine left as found.

dockerd runs with --iptables=false --bridge=none and everything under the run's directory
(tests/containers/engines.py); before and after, the iptables FORWARD policy, the network
links (no docker0) and the mounts under the run's directory are compared. Import them into a
conftest (``from tests.containers.fixtures import docker, podman``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.containers.engines import Docker, Podman, engine_available
from tests.hosts.util import need, need_root

SUITE_LINK_PREFIX = "itv"


def machine_state() -> dict[str, str]:
    """What a docker daemon left to itself changes on this machine."""
    forward = subprocess.run(
        ["iptables", "-S", "FORWARD"], capture_output=True, text=True, check=False
    ).stdout.splitlines()
    links = subprocess.run(
        ["ip", "-o", "link", "show"], capture_output=True, text=True, check=False
    ).stdout
    names = (line.split(":")[1].strip().split("@")[0] for line in links.splitlines())
    # The suite's other sessions add and remove their own veth pairs meanwhile
    # (tests/integration/test_apply_faults.py names them itv…): not the daemon's doing.
    ours = sorted(n for n in names if not n.startswith(SUITE_LINK_PREFIX))
    return {"FORWARD policy": forward[0] if forward else "", "links": " ".join(ours)}


def _mounts_under(path: Path) -> list[str]:
    with open("/proc/self/mounts") as fh:
        return [ln.split()[1] for ln in fh if ln.split()[1].startswith(str(path) + "/")]


def _run(engine: Any, workdir: Path, name: str) -> Iterator[Any]:
    """Start the engine, hand it to the tests, stop it: the machine's network as it was."""
    before = machine_state()
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()
    after = machine_state()
    assert after == before, f"{name} changed this machine's network: {before} -> {after}"
    assert _mounts_under(workdir) == [], f"{name} left mounts"


@pytest.fixture(scope="session")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Docker]:
    """This run's own dockerd (no iptables rules, no bridge)."""
    need_root()
    missing = engine_available("docker")
    need(missing is None, f"docker.io: {missing}")
    workdir = tmp_path_factory.mktemp("docker")
    engine = Docker(workdir)
    yield from _run(engine, workdir, "dockerd")


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    """Podman with its store and state under this run's directory."""
    need_root()
    missing = engine_available("podman")
    need(missing is None, f"podman: {missing}")
    workdir = tmp_path_factory.mktemp("podman")
    engine = Podman(workdir)
    yield from _run(engine, workdir, "podman")
    left = [str(p) for p in engine.absent if p.exists()]
    assert left == [], f"podman left {', '.join(left)}"
