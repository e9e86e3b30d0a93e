"""Dynamic server variables: the typed values the job sets with ``SET GLOBAL`` on the target.

The value travels typed (name, value, kind ``dynamic``); the job spells the statement with
:func:`app.targetjob.values.set_global`, as the preview does. It is also written to the
option-file drop-in by :mod:`app.describe.optionfile` (which takes ``dynamic`` changes
too), so it survives the next restart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.describe.actions import Action, ApplyError, Host, ValueChange
from app.domain.plan import Change
from app.targetjob.values import set_global

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_WORD = re.compile(r"^[A-Za-z0-9_.,/+-]*$")


def _check(change: Change) -> None:
    if not _NAME.match(change.key):
        raise ApplyError(f"Not a server variable name: {change.key!r}.")
    if not _WORD.match(change.proposed):
        raise ApplyError(f"{change.key}: InnoTune does not send the value {change.proposed!r}.")


def _current(host: Host, change: Change) -> str | None:
    if host.session is None:
        return change.current
    rows = host.session.query(f"SELECT @@GLOBAL.{change.key}")
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def describe(changes: Sequence[Change], host: Host) -> list[Action]:
    """One Action per dynamic variable: its typed value (current → new), set live.

    Raises:
        ApplyError: a name or value InnoTune does not send.
    """
    return [_one(change, host) for change in changes if change.target == "dynamic"]


def _one(change: Change, host: Host) -> Action:
    _check(change)
    text = set_global(change.key, change.proposed)
    current = _current(host, change)
    value = ValueChange(
        kind="dynamic",
        key=change.key,
        current=current,
        new=change.proposed,
        live=True,
        persistent="also written to the option-file drop-in (see its diff)",
    )
    return Action(
        applier="dynamic",
        change_ids=(change.id,),
        summary=f"{text} (now {current})",
        values=(value,),
    )
