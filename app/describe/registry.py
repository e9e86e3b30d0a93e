"""The one table of describers: target kind → ``describe(changes, host) -> list[Action]``.

Every kind of change is described by one function of the same shape, found here by the kind
it describes. :func:`describe_all` runs them in the order the job runs their Actions; the
preview renders what it returns, the runner builds the job's bundle from it and the export
writes it for a fleet, so the three cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.describe import dynamic, optionfile, sysctl, sysfs, udev
from app.describe.actions import Action, ApplyError, Host
from app.domain.plan import Change

Describe = Callable[[Sequence[Change], Host], list[Action]]


@dataclass(frozen=True)
class Describer:
    """One kind of change and the function that describes it.

    Attributes:
        kind: the key of the table (a change's target, or ``udev`` for the persistence of
            the sysfs values).
        targets: the change targets it takes.
        describe: ``describe(changes, host) -> list[Action]``.
        what: how a refusal is labelled when the whole kind is described at once.
        each: describe one change at a time, so a refusal names that change and spares
            the others.
        after: only the changes the describer of this kind did not find unsupported
            (a udev rule only for a queue file this host has).
    """

    kind: str
    targets: tuple[str, ...]
    describe: Describe
    what: str
    each: bool = False
    after: str | None = None


#: In the order the job runs the Actions: option files, live values, persistence files.
DESCRIBERS: dict[str, Describer] = {
    d.kind: d
    for d in (
        Describer(
            "option_file",
            ("option_file", "dynamic", "option_remove"),
            optionfile.describe,
            "option files",
        ),
        Describer("dynamic", ("dynamic",), dynamic.describe, "dynamic", each=True),
        Describer("sysfs", ("sysfs",), sysfs.describe, "sysfs", each=True),
        Describer("udev", ("sysfs",), udev.describe, "udev rules", after="sysfs"),
        Describer("sysctl", ("sysctl",), sysctl.describe, "sysctl"),
    )
}


def describer(kind: str) -> Describer:
    """The describer of one kind of change.

    Raises:
        KeyError: no describer for that kind.
    """
    return DESCRIBERS[kind]


def describe_all(
    changes: Sequence[Change],
    host: Host,
    errors: list[str],
    window_errors: list[str] | None = None,
) -> list[Action]:
    """Every describer's Actions for ``changes`` (advice left out), in the job's order.

    A describer that refuses (:class:`ApplyError`) adds its reason to ``errors`` (and, worded
    for the window, to ``window_errors``) and nothing of what it refused is described.
    """
    changes = [c for c in changes if c.target != "advice"]
    by_kind: dict[str, list[Action]] = {}
    for entry in DESCRIBERS.values():
        mine = [c for c in changes if c.target in entry.targets]
        if entry.after is not None:
            supported = {
                i for a in by_kind.get(entry.after, []) if not a.unsupported for i in a.change_ids
            }
            mine = [c for c in mine if c.id in supported]
        groups = [[c] for c in mine] if entry.each else [mine]
        found: list[Action] = []
        for group in groups:
            if not group:
                continue
            try:
                found += entry.describe(group, host)
            except ApplyError as exc:
                label = group[0].id if entry.each else entry.what
                errors.append(f"{label}: {exc}")
                if window_errors is not None:
                    window_errors.append(f"{label}: {exc.problem} {exc.window_fix}".strip())
        by_kind[entry.kind] = found
    return [a for acts in by_kind.values() for a in acts if a.change_ids or a.unsupported]
