"""The recommendation in a few lines: what InnoTune would change and why, the risk, the restart.

What the wizard's Recommendation page shows right after Inspect, before any slider: one line
per change (what, from → to, the reason in words), what it risks ("nothing" while durability
is kept, otherwise the loss, in the plan's own words), and whether the server restarts, with
the estimated downtime (:func:`app.describe.preview.estimate_downtime`). Pure: facts and a
plan in, sentences out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.describe.preview import estimate_downtime
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, Plan
from app.domain.words import count
from app.flows.planning import catalogue, change_values
from app.knobs import UnknownKnob


def _away_from_durable(plan: Plan) -> list[str]:
    """The sliders whose positions cost committed data in a crash.

    Torn-page protection and the binary log count only where the plan turns them off.
    """
    changed = {c.slider for c in plan.changes}
    away = [] if plan.positions.crash_loss == "none" else ["crash_loss"]
    return away + [s for s in ("doublewrite", "binlog") if s in changed]


@dataclass(frozen=True)
class ChangeLine:
    """One change as the page lists it: what, from → to, why."""

    what: str
    before: str
    after: str
    why: str

    def text(self) -> str:
        """E.g. "The buffer pool: 128 MiB → 1 GiB, because …"."""
        return f"{self.what}: {self.before} → {self.after}, because {self.why}"


@dataclass(frozen=True)
class Recommendation:
    """What the Recommendation page says."""

    headline: str
    changes: tuple[ChangeLine, ...]
    risk: str
    restart: str
    advice: str  # the lines to add by hand, counted ("" when none)

    @property
    def empty(self) -> bool:
        """True when there is nothing to apply."""
        return not self.changes


def plan_key(plan: Plan | None) -> tuple[tuple[str, str, str], ...]:
    """What a consent is given to: each change's id, target and new value.

    Two plans with the same key change the same things to the same values (the Preview adds
    file checksums to the plan; that does not change what is consented to).
    """
    if plan is None:
        return ()
    return tuple((c.id, c.target, c.proposed) for c in plan.changes if c.target != "advice")


def _first_clause(text: str) -> str:
    """The reason's first sentence, lower-cased to follow "because", brackets left out."""
    first = re.split(r"(?<=[.;])\s", text.strip(), maxsplit=1)[0].rstrip(".;:")
    first = re.sub(r"\s*\([^()]*\)", "", first)
    first = first.split(" (", 1)[0]  # a bracket the sentence's end left open
    word = first.split(" ", 1)[0]
    if word[1:] == word[1:].lower():  # not a name such as InnoDB or MyISAM
        first = first[:1].lower() + first[1:]
    return first


def _why(change: Change, plan: Plan) -> str:
    if change.slider == "memory":
        return (
            f"more of the data and indexes stay in memory: {plan.positions.memory_share}% of "
            "the RAM, with room kept for the system, the other programs and every connection"
        )
    if change.key in ("innodb_redo_log_capacity", "innodb_log_file_size"):
        why = "a larger redo log lets the server write its changed pages out more smoothly"
        if "No redo write rate was measured" in change.reason:
            why += " (sized for an assumed 1 GiB of writes an hour: no write rate was measured)"
        return why
    return _first_clause(change.reason)


def _what(change: Change) -> str:
    try:
        title = catalogue().knob(change.key).title
    except UnknownKnob:  # named by its key
        title = change.key
    where = f" on {change.device}" if change.device else ""
    return f"{title}{where} ({change.key})"


_UNITS = {"kib": " KiB", "percent": "%", "seconds": " s", "microseconds": " µs"}


def _unit(value: str, key: str) -> str:
    """A number with its unit (8192 KiB, 10%); sizes come spelled already (128 MiB)."""
    try:
        unit = _UNITS.get(catalogue().knob(key).unit, "")
    except UnknownKnob:
        unit = ""
    return f"{value}{unit}" if unit and value.isdigit() else value


def _risk(plan: Plan) -> str:
    sentences = dict(plan.sentences)
    losses = [sentences.get(s, "") for s in _away_from_durable(plan)]
    losses = [loss for loss in losses if loss]
    if not losses:
        return (
            "Nothing: durability is kept, so a crash loses no committed transaction, as now. "
            "A snapshot is taken first, so every change can be undone."
        )
    said = " ".join(loss.rstrip(".") + "." for loss in losses)
    return "In a crash, " + said[:1].lower() + said[1:]


def _restart(facts: HostFacts, plan: Plan, changes: list[Change]) -> str:
    if not changes:
        return "Nothing to apply, so the server keeps running."
    needs = [c for c in changes if c.restart_needed]
    if not needs:
        return "No restart: every change applies while the server runs."
    downtime = estimate_downtime(facts, plan)
    return (
        f"The server restarts for {count(len(needs), 'change')}. Estimated downtime "
        f"{downtime.text()}; an estimate, not a measurement."
    )


def recommend(facts: HostFacts, plan: Plan, name: str) -> Recommendation:
    """The recommendation for ``plan`` on the server called ``name`` (e.g. "the practice server").

    Sizes are spelled as people read them (128 MiB, 17.4 GiB), never as bytes.
    """
    applied = [c for c in plan.changes if c.target != "advice"]
    knobs = catalogue()
    lines = []
    for change in applied:
        before, after = (_unit(v, change.key) for v in change_values(change, knobs))
        if change.target == "option_remove":
            before, after = f"set in {change.path}", "the line removed"
        lines.append(ChangeLine(_what(change), before, after, _why(change, plan)))
    flavour = {"mysql": "MySQL", "mariadb": "MariaDB"}.get(plan.facts.flavour or "", "")
    server = f"{flavour} {(plan.facts.version or '').split('-', 1)[0]}".strip()
    if applied:
        headline = f"For {name} ({server}) InnoTune recommends {count(len(applied), 'change')}:"
    else:
        headline = (
            f"For {name} ({server}) InnoTune recommends no change: the settings it knows "
            "already suit this server as it was inspected."
        )
    advice = [c for c in plan.changes if c.target == "advice"]
    advice_text = (
        f"{count(len(advice), 'suggestion')} to make by hand (never applied) "
        "{verb} on the Trade-offs page.".replace("{verb}", "is" if len(advice) == 1 else "are")
        if advice
        else ""
    )
    return Recommendation(
        headline,
        tuple(lines),
        _risk(plan),
        _restart(facts, plan, applied),
        advice_text,
    )


def server_name(facts: HostFacts | None, kind: str | None, label: str | None) -> str:
    """How the page names the server: the practice server, a container by its name, a host.

    ``kind`` and ``label`` are the connection's (practice, local or ssh, and its label).
    """
    server = facts.server if facts is not None else None
    container = server.instance.container if server is not None else None
    if container is not None:
        return f"the container {container.name}"
    if kind == "practice":
        return "the practice server"
    if kind == "local":
        return "the server on this computer"
    return label or (facts.target if facts is not None else "this server")
