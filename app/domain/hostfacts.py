"""Everything InnoTune learned about a host: one value that round-trips through JSON."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.facts import DiskProbe, OsFacts, Unknown, from_json, to_json
from app.domain.instance import ServerInstance
from app.domain.serverfacts import ServerFacts

FORMAT = "innotune-facts/1"


@dataclass(frozen=True)
class HostFacts:
    """The machine, the write paths, the server instances and the chosen server."""

    target: str
    collected_at: str  # ISO 8601, UTC
    os: OsFacts
    instances: tuple[ServerInstance, ...]
    server: ServerFacts | None
    disk_probe: DiskProbe | None = None
    format: str = FORMAT
    unknown: tuple[Unknown, ...] = ()

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` gives back an equal value."""
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> HostFacts:
        """Read facts saved by :meth:`to_json`."""
        facts = from_json(cls, text)
        if facts.format != FORMAT:
            raise ValueError(f"not an InnoTune facts file (format {facts.format!r})")
        return facts
