"""Dynamic server variables: ``SET GLOBAL`` through the database session.

The value is also written to the option-file drop-in by :mod:`app.appliers.optionfile`
(which takes ``dynamic`` changes too), so it survives the next restart.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from app.appliers.actions import Action, ApplyError, Host, ValueChange
from app.domain.plan import Change

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_NUMBER = re.compile(r"^[0-9]+$")
_WORD = re.compile(r"^[A-Za-z0-9_.,/+-]*$")


def statement(change: Change) -> tuple[str, list[Any]]:
    """The SQL and its parameters; the name is checked, the value is sent as a parameter."""
    if not _NAME.match(change.key):
        raise ApplyError(f"Not a server variable name: {change.key!r}.")
    value: Any = int(change.proposed) if _NUMBER.match(change.proposed) else change.proposed
    return f"SET GLOBAL {change.key} = %s", [value]


def statement_text(change: Change) -> str:
    """The statement exactly as the server receives it."""
    sql, args = statement(change)
    value = args[0]
    if isinstance(value, int):
        return sql % value
    if not _WORD.match(value):
        raise ApplyError(f"{change.key}: InnoTune does not send the value {value!r}.")
    return sql % f"'{value}'"


def _current(host: Host, change: Change) -> str | None:
    if host.session is None:
        return change.current
    rows = host.session.query(f"SELECT @@GLOBAL.{change.key}")
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def apply(change: Change, host: Host, *, dry_run: bool = False) -> Action:
    """``SET GLOBAL`` one dynamic variable (current → new), or describe it.

    Raises:
        ApplyError: not logged in for a real apply, or the server did not take the value.
    """
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
    action = Action(
        applier="dynamic",
        change_ids=(change.id,),
        summary=f"{text} (now {current})",
        statements=(text,),
        values=(value,),
        unsupported=()
        if host.session is not None or dry_run
        else ("not logged in to the server: SET GLOBAL cannot run",),
    )
    if dry_run:
        return action
    if host.session is None:
        raise ApplyError(
            f"Not logged in to the server; cannot run {text}.", "Connect to the server first."
        )
    sql, args = statement(change)
    host.session.query(sql, args)
    after = _current(host, change)
    from app.appliers.optionfile import same_value

    if not same_value(after, change.proposed):
        raise ApplyError(
            f"After {text} the server reports {change.key} = {after}, not {change.proposed}."
        )
    return dataclasses.replace(action, dry_run=False, outcome=(f"{change.key} is now {after}",))
