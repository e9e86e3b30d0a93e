"""What the wizard's pages share: the connected host's worker and what was learned through it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from app.access.doctor import DoctorResult, Secrets
from app.domain.bench import BenchReport
from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan, SliderPositions
from app.domain.target import Target
from app.domain.watch import Watch
from app.flows.freshness import ServerChange, is_old, of_target
from app.flows.preview import Preview
from app.flows.recommend import plan_key
from app.ui.hostworker import HostWorker

log = logging.getLogger(__name__)


@dataclass
class WizardState:
    """The state every page reads; the Connect page fills the connection part."""

    # "tune" (the whole flow), "restore" (straight to the snapshots) or "offline" (a saved
    # facts file, reviewed without a connection).
    mode: str = "tune"
    target: Target | None = None
    secrets: Secrets = field(default_factory=Secrets)
    # The connected host's worker: it owns the connection and runs the pages' tasks.
    host: HostWorker | None = None
    facts: HostFacts | None = None
    # A plan opened from a file for offline review: its positions are shown on Trade-offs.
    saved_plan: Plan | None = None
    positions: SliderPositions | None = None
    plan: Plan | None = None
    preview: Preview | None = None
    # The plan the person consented to apply (app.flows.recommend.plan_key): given on the
    # Recommendation page or the Apply page, it lapses as soon as the plan changes.
    consent: tuple[tuple[str, str, str], ...] | None = None
    bench_before: BenchReport | None = None  # kept with the snapshot, to compare after
    bench_after: BenchReport | None = None
    # Watches of the server's own workload (no load added): "before" the apply, "after" it.
    watch_before: Watch | None = None
    watch_after: Watch | None = None
    # "Benchmark time": each side's first rounds, in seconds, one setting for the Apply
    # page's measurement (which adds rounds up to ten times it) and the Verify page's runs.
    bench_seconds: float = 25.0
    # The snapshot of the last apply, and where its local copy lives: benchmark results
    # are kept beside it so a rollback can be measured against them later.
    snapshot_id: str | None = None
    # Changes of the last apply this host did not take (change id → why): Done says so.
    not_taken: dict[str, str] = field(default_factory=dict)
    snapshot_dir: Path | None = None
    # The snapshot whose changes are in force now (applied here and not rolled back): a
    # "before" benchmark would measure the changed server, so Verify refuses one.
    changes_in_force: str | None = None
    # MySQL: a value SET PERSIST keeps in mysqld-auto.cnf beats InnoTune's option file;
    # "reset" removes it there (RESET PERSIST), "persist" writes InnoTune's value there too.
    persisted: str = "reset"
    # The jobs that changed the server while this window ran (apply, rollback): facts read
    # before the last one are out of date, and the pages showing them say so.
    server_changes: list[ServerChange] = field(default_factory=list)
    # Workers of hosts given up (a new check, a cut-off inspection) still ending their
    # tasks: the window waits for them when it closes.
    retired: list[HostWorker] = field(default_factory=list)
    # Practice servers this window started (not running before): stopped when it closes.
    practice_bases: set[Path] = field(default_factory=set)
    # Work on this computer alone: a preview without a connection, an export.
    local: HostWorker = field(default_factory=lambda: HostWorker(name="local"))

    def consented(self) -> bool:
        """True when the person consented to applying the current plan (not an earlier one)."""
        return self.consent is not None and self.consent == plan_key(self.plan)

    def give_consent(self, given: bool) -> None:
        """Consent to applying the current plan (True), or take it back."""
        self.consent = plan_key(self.plan) if given else None

    @property
    def connection(self) -> DoctorResult | None:
        """The connected host's doctor result (its worker's; read it on the GUI thread)."""
        return self.host.connection if self.host is not None else None

    def worker(self) -> HostWorker:
        """The connected host's worker, else the one for work on this computer."""
        return self.host if self.host is not None else self.local

    def drop_host(self) -> None:
        """Give up the host: its connection closes in the background, its tasks end."""
        if self.host is not None:
            self.host.cancel_all()
            self.host.close_in_background()
            self.retired = [h for h in self.retired if not h.idle()]
            self.retired.append(self.host)
            self.host = None

    def stop_hosts(self, msecs: int = 15000) -> None:
        """Close every connection and wait for every worker's thread (the window closes)."""
        self.drop_host()
        for host in (*self.retired, self.local):
            host.stop(msecs)
        self.retired.clear()

    def note_practice(self, base: Path | None = None) -> None:
        """Remember the practice server at ``base`` (None: the default) if it is not running.

        Called before this window may start it: closing the window stops it again. A
        practice server started elsewhere (``innotune practice start``) is left running.
        """
        from app.places import default_practice_dir
        from app.practice.practice import PracticeServer

        base = base or default_practice_dir()
        if base in self.practice_bases:
            return
        if PracticeServer(base).server.running_pid() is None:
            self.practice_bases.add(base)

    def stop_practice(self) -> list[Path]:
        """Stop the practice servers this window started; the bases of those that ran."""
        from app.practice.practice import PracticeServer

        stopped = []
        for base in sorted(self.practice_bases):
            practice = PracticeServer(base)
            try:
                if practice.server.running_pid() is not None:
                    practice.stop(timeout=60)
                    stopped.append(base)
                    log.info("practice server at %s stopped: the window closed", base)
            except (InnoTuneError, OSError) as exc:
                log.warning("could not stop the practice server at %s: %s", base, exc)
        self.practice_bases.clear()
        return stopped

    @property
    def facts_old(self) -> bool:
        """True when a job changed the server after the facts shown were read."""
        facts = self.facts
        return facts is not None and is_old(facts.collected_at, self.changes_for(facts))

    def changes_for(self, facts: HostFacts) -> list[ServerChange]:
        """The jobs of this window that changed the host ``facts`` describe."""
        return of_target(self.server_changes, facts.target)

    @property
    def connected(self) -> bool:
        """True when the last check passed every step."""
        return self.connection is not None and self.connection.ok

    def place(self) -> str:
        """Where the server tuned runs, in words: "the docker container shop-db on db1".

        A container is named with its host, never as "this computer" or "local" alone.
        """
        facts = self.facts
        kind = self.target.kind if self.target is not None else None
        if kind == "local":
            host = "this computer"
        elif kind == "practice":
            host = "the practice server"
        elif self.target is not None:
            host = self.target.label
        else:
            host = facts.target if facts is not None else "the server"
        server = facts.server if facts is not None else None
        conn = self.connection
        instance = server.instance if server is not None else conn.instance if conn else None
        box = instance.container if instance is not None else None
        return f"the {box.engine} container {box.name} on {host}" if box is not None else host
