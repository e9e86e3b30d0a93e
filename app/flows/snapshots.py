"""The snapshots and jobs kept on a target, per server instance, and pruning them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.domain.errors import InnoTuneError
from app.inspect.instances import find_instances
from app.jobs import history, runner
from app.jobs import snapshot as snap
from app.places import local_snapshot_dir
from app.planner.report import value_words
from app.remote.transport import Transport

# What both faces show of the snapshots and choose among them with.
Record = history.Record
RollbackChoice = history.RollbackChoice
RollbackRefused = history.RollbackRefused
by_instance = history.by_instance
describe_instance = history.describe_instance
choose_rollback = history.choose_rollback
list_records = history.list_records
store_bench_locally = snap.store_bench_locally
store_watch_locally = snap.store_watch_locally


def rollback_text(choice: RollbackChoice) -> str:
    """What a rollback brings back, its values as people read them (sizes in MiB, GiB)."""
    return choice.text(value_words)


@dataclass
class Pruned:
    """What a prune removed: on the target (the job's answer) and on this computer."""

    keep: int
    on_target: dict[str, Any]
    local: list[str]


@dataclass
class SnapshotListing:
    """The target's snapshots and jobs, narrowed to one instance when ``key`` is set."""

    key: str | None
    records: list[history.Record]
    jobs: list[runner.JobStatus]
    local_ids: set[str]
    pruned: Pruned | None = None
    job_instance: dict[str, str] = field(default_factory=dict)

    def groups(self) -> list[tuple[dict[str, Any], list[history.Record]]]:
        """The snapshots per instance (its identity document, its records newest first)."""
        return [
            (doc, group)
            for doc, group in history.by_instance(self.records)
            if self.key is None or (group and group[0].instance_key == self.key)
        ]

    def jobs_by_instance(self) -> dict[str, list[runner.JobStatus]]:
        """The jobs per instance key ("" if unknown): as a job recorded, else its snapshot's."""
        of_snapshot = {r.id: r.instance_key for r in self.records}
        per: dict[str, list[runner.JobStatus]] = {}
        for job in self.jobs:
            owner = self.job_instance.get(job.job_id) or of_snapshot.get(str(job.snapshot_id))
            if self.key is None or owner == self.key:
                per.setdefault(owner or "", []).append(job)
        return per

    def instance_docs(self) -> dict[str, dict[str, Any]]:
        """Each instance key's identity document, as its snapshots recorded it."""
        return {r.instance_key: dict(r.snapshot.instance) for r in self.records if r.instance_key}


def running_identities(transport: Transport) -> list[tuple[Any, dict[str, Any]]]:
    """The server instances running on the target, each with its identity."""
    try:
        found = find_instances(transport, sudo=not transport.is_root)
    except InnoTuneError:
        return []
    return [(i, history.identity(transport, i)) for i in found if i.pid]


def instance_key(
    transport: Transport, records: list[history.Record], spec: str | None
) -> str | None:
    """The instance ``spec`` (socket, port or pid) names, or the only one running.

    Raises:
        RollbackRefused: no instance, or several, fit.
    """
    return history.instance_for(records, running_identities(transport), spec)


def _job_instance(transport: Transport, job_id: str) -> str | None:
    """The instance a job recorded in its bundle (jobs made before that: None)."""
    result = transport.run(
        ["cat", f"{runner.job_dir(job_id)}/bundle.json"], sudo=not transport.is_root
    )
    try:
        doc = json.loads(result.out) if result.ok else {}
    except ValueError:
        return None
    found = doc.get("instance") if isinstance(doc, dict) else None
    return str(found) if found else None


def list_snapshots(
    transport: Transport, spec: str | None, *, prune: bool = False, keep: int | None = None
) -> SnapshotListing:
    """The snapshots and jobs on the target (of the instance ``spec`` names, if given).

    With ``prune``, at most ``keep`` snapshots per instance stay, on the target and here.

    Raises:
        RollbackRefused: ``spec`` names no instance, or several.
    """
    local_dir = local_snapshot_dir(transport.label)
    key = None
    if spec is not None:
        key = instance_key(transport, history.list_records(transport), spec)
    pruned = None
    if prune:
        keep = keep or history.keep_default()
        on_target = history.prune_on_target(transport, keep, key)
        local = history.prune_locally(local_dir, history.list_records(transport), keep, key)
        pruned = Pruned(keep, on_target, local)
    jobs = [runner.status(transport, job) for job in runner.list_jobs(transport)]
    owners = {job.job_id: _job_instance(transport, job.job_id) for job in jobs}
    return SnapshotListing(
        key=key,
        records=history.list_records(transport),
        jobs=jobs,
        local_ids={s.id for s in snap.list_locally(local_dir)},
        pruned=pruned,
        job_instance={k: v for k, v in owners.items() if v},
    )


def local_copy(transport: Transport, snapshot_id: str) -> snap.Snapshot:
    """This computer's copy of a snapshot of the target.

    Raises:
        SnapshotError: there is none, or it is incomplete.
    """
    return snap.load_locally(local_snapshot_dir(transport.label), snapshot_id)


def current_instance(transport: Transport, instance: Any) -> Any:
    """The instance as it runs now (a restart gave it a new pid), else as it was found."""
    from app.inspect.instances import choose_instance

    if instance.container is None and not (instance.socket or instance.port):
        return instance
    try:
        return choose_instance(find_instances(transport, sudo=not transport.is_root), instance.spec)
    except InnoTuneError:
        return instance


def connected_key(transport: Transport, instance: Any) -> str:
    """The identity key of the connected instance, as its snapshots record it."""
    return str(history.identity(transport, current_instance(transport, instance))["key"])
