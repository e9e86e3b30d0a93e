"""The container tests' engines: see tests/containers/fixtures.py."""

from tests.containers.fixtures import docker, podman

__all__ = ["docker", "podman"]
