"""The bundle: what the job on the target does, built from the Actions the preview showed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.describe.actions import Action, restart_carried
from app.jobs import snapshot as snap
from app.jobs.control import DEFAULT_WATCHDOG_GRACE
from app.targetjob import formats
from app.targetjob.formats import (
    Bundle,
    CommandItem,
    FileItem,
    PersistItem,
    ValueItem,
)

# -- the bundle ----------------------------------------------------------------------------


def expected_values(actions: Sequence[Action], plan_changes: Sequence[Any] = ()) -> dict[str, str]:
    """Server variables that must be in force afterwards.

    The dynamic ones, plus the plan's option-file changes the actions cover.
    """
    covered = {cid for a in actions for cid in a.change_ids}
    expected = {
        c.key: c.proposed
        for c in plan_changes
        if c.id in covered and c.target in ("option_file", "dynamic")
    }
    for action in actions:
        for value in action.values:
            if value.kind == "dynamic":
                expected[value.key] = value.new
    return expected


def build_bundle(
    job_id: str,
    snapshot: snap.Snapshot,
    actions: Sequence[Action],
    *,
    validate: dict[str, Any] | None,
    expected: dict[str, str],
    confirm_within: float | None = None,
    watchdog_grace: float = DEFAULT_WATCHDOG_GRACE,
    restart_anyway: bool = False,
    skipped: Sequence[Action] = (),
) -> Bundle:
    """What the job on the target does, built from the same Actions the preview showed.

    With ``restart_anyway`` the job restarts the server even when no change needs it.
    ``skipped`` are the Actions with nothing to do: those the host cannot take are named in
    the bundle, so the job reports them not applied.
    Whenever it restarts, the dynamic variables that the option files also carry
    (``persisted_keys``) are not set live first: the restart applies them, once.
    """
    import base64

    saved = {f.path: f for f in snapshot.files}
    files = [
        FileItem(
            path=write.path,
            before_sha256=saved[write.path].sha256,
            content_b64=base64.b64encode(write.after).decode("ascii"),
            mode=write.mode,
            owner=write.owner,
            purpose=write.purpose,
            covers=_covers(action),
        )
        for action in actions
        for write in action.files
    ]
    # Every value typed, as the Actions hold it: the job sets the dynamic ones with SET
    # GLOBAL (spelled on the target) and writes the sysfs and sysctl ones itself (in /sys
    # and /proc/sys, as the preview says); the commands (udevadm ...) run after them.
    values = [
        ValueItem(
            kind=v.kind,
            key=v.key,
            value=v.new,
            path=v.path,
            device=v.device,
            change=change_of(a, v.key, v.device),
        )
        for a in actions
        for v in a.values
        if v.kind in ("dynamic", "sysfs", "sysctl")
    ]
    commands = [
        CommandItem(list(c.argv), c.why, covers=_covers(a)) for a in actions for c in a.commands
    ]
    # The plan's changes the job carries, those the describers found the host cannot take
    # among them: the job counts what it applied out of these.
    every = [*actions, *skipped]
    refused: dict[str, str] = {}
    for a in every:
        if a.applier != "udev" and a.unsupported and not (a.files or a.values or a.commands):
            # One reason per change where the describer gave one each (sysctl's keys).
            whys = a.unsupported if len(a.unsupported) == len(a.change_ids) else None
            for n, i in enumerate(a.change_ids):
                refused.setdefault(i, whys[n] if whys else a.unsupported[0])
    carried = list(dict.fromkeys(i for a in every for i in a.change_ids))
    pool = expected.get("innodb_buffer_pool_size")
    has_option_files = any(f.purpose == "option_file" for f in files)
    needed = any(a.restart_needed for a in actions)
    persisted = restart_carried(actions)
    return Bundle(
        id=job_id,
        mode="apply",
        snapshot_id=snapshot.id,
        snapshot_dir=snap.target_dir(snapshot.id),
        files=files,
        values=values,
        persisted=[PersistItem(p.key, p.value, p.how) for a in actions for p in a.persisted],
        commands=commands,
        validate=formats.Validate(**validate) if validate and has_option_files else None,
        buffer_pool_bytes=int(pool) if pool and pool.isdigit() else None,
        restart_needed=needed or restart_anyway,
        restart_requested=restart_anyway and not needed,
        persisted_keys=persisted,
        expected=dict(expected),
        confirm_within=confirm_within,
        watchdog_grace=watchdog_grace,
        changes=carried,
        refused=refused,
    )


def change_of(action: Action, key: str, device: str | None) -> str:
    """The plan's change id a value of ``action`` is for (``key`` or ``key@device``)."""
    wanted = f"{key}@{device}" if device else key
    return next((i for i in action.change_ids if i == wanted), wanted)


def _covers(action: Action) -> list[str]:
    """What a persistence file or follow-up command keeps: the action's live OS changes."""
    if action.applier not in ("sysctl", "udev"):
        return []
    return list(action.change_ids)
