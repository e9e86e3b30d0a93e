"""Commands inside a container, through its engine's exec on the host's transport.

What the server reads (its option files, its binary's list of them) is the container's, so
inspection reads it through here; the host's own facts (kernel, disks) come from the host's
transport. Settings are never written through here: a file written inside a container is
lost when the container is recreated; the applier writes on the host, into a bind-mounted
directory.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from app.domain.container import Container
from app.remote.transport import CommandResult, Transport


class ContainerTransport:
    """Runs commands in ``container`` (as its root) with ``host``'s exec, under sudo if needed."""

    def __init__(self, host: Transport, container: Container, *, sudo: bool = True) -> None:
        self.host = host
        self.container = container
        self._sudo = sudo and not host.is_root
        self.label = f"{container.engine} container {container.name} on {host.label}"

    @property
    def is_root(self) -> bool:
        """True: commands run as the container's root."""
        return True

    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> CommandResult:
        """Run ``argv`` inside the container (``sudo`` is the host's, for the engine's CLI)."""
        result = self.host.run(
            [*self.container.exec_argv, *argv], sudo=self._sudo, input=input, timeout=timeout
        )
        # The command as the person would read it: what ran inside, and where.
        return CommandResult(
            command=f"{shlex.join(argv)} (in {self.container.name})",
            exit_status=result.exit_status,
            stdout=result.stdout,
            stderr=result.stderr,
            truncated=result.truncated,
        )

    def read_file(self, path: str, *, sudo: bool = False) -> bytes:
        """The bytes of the container's ``path``."""
        return self.run(["cat", "--", path], timeout=60).check().stdout

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: str = "0644", owner: str = ""
    ) -> None:
        """Write a scratch file inside the container (the benchmark's statements).

        Never a setting: the container's own layer is lost when it is recreated, so the
        the job writes settings on the host, into a mounted directory.
        """
        script = 'umask 077; cat > "$1.innotune-tmp" && chmod "$2" "$1.innotune-tmp" && ' \
            'mv -f "$1.innotune-tmp" "$1"'  # fmt: skip
        self.run(["sh", "-c", script, "sh", path, mode], input=data, timeout=60).check()

    def open_stream(self, argv: Sequence[str], *, sudo: bool = False) -> Any:
        """A byte stream to ``argv`` run inside the container (the load generator's)."""
        opener = getattr(self.host, "open_stream")  # noqa: B009 - both transports have it
        return opener([*self.container.exec_argv, *argv], sudo=self._sudo)

    def close(self) -> None:
        """The host's transport stays open (it is the caller's)."""
