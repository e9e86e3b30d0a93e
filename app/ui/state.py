"""What the wizard's pages share: the connection and what was learned through it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.access.doctor import DoctorResult, Secrets
from app.appliers.preview import Preview
from app.domain.bench import BenchReport
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.target import Target


@dataclass
class WizardState:
    """The state every page reads; the Connect page fills the connection part."""

    # "tune" (the whole flow), "restore" (straight to the snapshots) or "offline" (a saved
    # facts file, reviewed without a connection).
    mode: str = "tune"
    target: Target | None = None
    secrets: Secrets = field(default_factory=Secrets)
    connection: DoctorResult | None = None
    facts: HostFacts | None = None
    # A plan opened from a file for offline review: its positions are shown on Trade-offs.
    saved_plan: Plan | None = None
    positions: SliderPositions | None = None
    plan: Plan | None = None
    preview: Preview | None = None
    bench_before: BenchReport | None = None  # kept with the snapshot, to compare after
    bench_after: BenchReport | None = None
    # The snapshot of the last apply, and where its local copy lives: benchmark results
    # are kept beside it so a rollback can be measured against them later.
    snapshot_id: str | None = None
    snapshot_dir: Path | None = None
    # MySQL: a value SET PERSIST keeps in mysqld-auto.cnf beats InnoTune's option file;
    # "reset" removes it there (RESET PERSIST), "persist" writes InnoTune's value there too.
    persisted: str = "reset"

    @property
    def connected(self) -> bool:
        """True when the last check passed every step."""
        return self.connection is not None and self.connection.ok
