"""Dynamic server variables: the ``SET GLOBAL`` the job runs on the target.

The value is also written to the option-file drop-in by :mod:`app.appliers.optionfile`
(which takes ``dynamic`` changes too), so it survives the next restart.
"""

from __future__ import annotations

import re

from app.appliers.actions import Action, ApplyError, Host, ValueChange
from app.domain.plan import Change
from app.targetjob.values import sql_literal

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_WORD = re.compile(r"^[A-Za-z0-9_.,/+-]*$")


def statement_text(change: Change) -> str:
    """The statement exactly as the job sends it to the server."""
    if not _NAME.match(change.key):
        raise ApplyError(f"Not a server variable name: {change.key!r}.")
    if not _WORD.match(change.proposed):
        raise ApplyError(f"{change.key}: InnoTune does not send the value {change.proposed!r}.")
    return f"SET GLOBAL {change.key} = {sql_literal(change.proposed)}"


def _current(host: Host, change: Change) -> str | None:
    if host.session is None:
        return change.current
    rows = host.session.query(f"SELECT @@GLOBAL.{change.key}")
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def describe(change: Change, host: Host) -> Action:
    """The ``SET GLOBAL`` of one dynamic variable (current → new) the job runs."""
    if change.target != "dynamic":
        raise ApplyError(f"{change.id} is not a dynamic variable change.")
    text = statement_text(change)
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
        statements=(text,),
        values=(value,),
    )
