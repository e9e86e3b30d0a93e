"""What both exports need: the same Actions the preview shows and the job runs, digested.

:func:`digest` describes the plan with the describers of :mod:`app.describe.registry` (from
the facts, without a connection: an export is for other hosts) and sorts their Actions'
typed values by what an export does with them. The file contents reuse the describers'
renderers (:func:`app.optionfiles.set_option` / :func:`app.optionfiles.render` for the
drop-in, :func:`app.describe.sysctl.render_conf` for sysctl.d, :func:`app.describe.udev.
assignments` for udev), so an export writes what InnoTune's own apply would write.

Disk queue settings are not tied to the planned host's device names: each queue setting
carries the kind of disk it was planned for, and :mod:`app.export.disks` finds each host's
datadir disks when the export runs.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass
from fractions import Fraction

from app.describe.actions import Action, Host
from app.describe.registry import describe_all
from app.describe.udev import RULE_HEAD, assignments, find_device
from app.domain.errors import InnoTuneError
from app.domain.facts import Capabilities, MachineFacts, OsFacts
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, Plan, PoolRule
from app.export.disks import KIND_WORDS, disk_kind
from app.optionfiles import parse, render, set_server_option
from app.optionfiles.editing import SWITCHED_OFF_BY_SKIP

GROUP = "mysqld"
DROPIN_NAME = "99-innotune.cnf"
SYSCTL_FILE = "/etc/sysctl.d/99-innotune.conf"
UDEV_DIR = "/etc/udev/rules.d"
POOL_KEY = "innodb_buffer_pool_size"
#: Stands for a per-host value in the rendered drop-in until a template or script fills it.
PLACEHOLDER = "INNOTUNE_PER_HOST_VALUE"

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_SYSCTL_KEY = re.compile(r"^[a-z0-9_]+([./][a-z0-9_-]+)+$")
_ATTR = re.compile(r"^queue/[a-z0-9_]+$")
_VALUE = re.compile(r"^[A-Za-z0-9_.-]+$")


class ExportError(InnoTuneError):
    """The plan cannot be exported as asked."""


@dataclass(frozen=True)
class ServerSetting:
    """One option-file line; ``dynamic`` ones are also set live when no restart follows."""

    key: str
    value: str
    change: Change
    per_host: bool  # computed on each host from a rule (the buffer pool)
    statement: str | None  # the Actions' SET GLOBAL of it; None: it needs a restart

    @property
    def live(self) -> bool:
        """True when the Actions set it live (SET GLOBAL) too."""
        return self.statement is not None

    @property
    def restart(self) -> bool:
        """True when a new value takes effect only after a restart."""
        return not self.live


@dataclass(frozen=True)
class KernelSetting:
    """A sysctl value: set live, kept in sysctl.d."""

    key: str
    value: str
    change: Change


@dataclass(frozen=True)
class QueueSetting:
    """A disk queue value for every datadir disk of ``kind`` on a host."""

    attr: str
    value: str
    kind: str
    change: Change


@dataclass(frozen=True)
class Export:
    """The plan's Actions digested for the exporters."""

    plan: Plan
    actions: tuple[Action, ...]
    settings: tuple[ServerSetting, ...]
    sysctl: tuple[KernelSetting, ...]
    queue: tuple[QueueSetting, ...]
    advice: tuple[Change, ...]
    pool_rule: PoolRule | None
    notes: tuple[str, ...] = ()

    @property
    def mariadb(self) -> bool:
        """True for a MariaDB plan."""
        return (self.plan.facts.flavour or "").lower() == "mariadb"

    @property
    def version(self) -> str:
        """The planned server's version number, e.g. 10.11.6 (without the distribution suffix)."""
        return version_number(self.plan.facts.version or "")

    @property
    def series(self) -> str:
        """Major.minor, e.g. 10.11."""
        return ".".join(self.version.split(".")[:2])

    @property
    def restart_keys(self) -> tuple[str, ...]:
        """The variables whose change needs a restart."""
        return tuple(s.key for s in self.settings if s.restart)

    @property
    def dynamic_keys(self) -> tuple[str, ...]:
        """The variables that can be set live."""
        return tuple(s.key for s in self.settings if not s.restart)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The disk kinds the plan has queue settings for."""
        return tuple(dict.fromkeys(q.kind for q in self.queue))

    def queue_for(self, kind: str) -> dict[str, str]:
        """The queue settings a disk of ``kind`` gets: attribute → value."""
        return {q.attr: q.value for q in self.queue if q.kind == kind}

    def typed_values(self) -> list[tuple[str, str, str]]:
        """(kind, key, value) of every value exported, as the Actions hold them."""
        out = [("dynamic", s.key, s.value) for s in self.settings if s.live and not s.per_host]
        out += [("sysctl", k.key, k.value) for k in self.sysctl]
        out += [("sysfs", q.attr, q.value) for q in self.queue]
        return out


def version_number(text: str) -> str:
    """``10.11.6-MariaDB-0+deb12u1`` → ``10.11.6``."""
    match = re.match(r"\s*(\d+(?:\.\d+){0,2})", text)
    return match.group(1) if match else ""


def plan_only_facts(plan: Plan) -> HostFacts:
    """Facts that say only what the plan records: no devices, no server."""
    return HostFacts(
        target=plan.facts.target,
        collected_at=plan.facts.collected_at,
        os=OsFacts(MachineFacts()),
        instances=(),
        server=None,
    )


def for_any_host(facts: HostFacts) -> HostFacts:
    """``facts`` without what the planned host lets InnoTune change.

    An export runs on other hosts, each of which finds out for itself (a read-only /proc/sys
    or queue file, no udev) when the playbook or script runs; the planned host's limits do
    not hold there.
    """
    paths = tuple(
        dataclasses.replace(
            p, devices=tuple(dataclasses.replace(d, queue_writable=None) for d in p.devices)
        )
        for p in facts.os.write_paths
    )
    machine = dataclasses.replace(facts.os.machine, capabilities=Capabilities())
    return dataclasses.replace(
        facts, os=dataclasses.replace(facts.os, machine=machine, write_paths=paths)
    )


def digest(plan: Plan, facts: HostFacts | None = None) -> Export:
    """Describe the plan (the same describers as Preview and the job) and sort the Actions.

    Args:
        plan: the plan.
        facts: the facts it was made from, when there are any: they tell which kind of
            disk each queue setting was planned for. Without them (a saved plan alone) no
            queue setting is exported, and the export says why.

    Raises:
        ExportError: a describer refused a change, or a name or value an export will not
            write into a file or a shell line.
    """
    for change in plan.changes:
        if change.key in SWITCHED_OFF_BY_SKIP:
            raise ExportError(
                f"{change.id}: turning the binary log off is not exported yet (a playbook "
                "would need the replicas and readers of each host checked first).",
                f"Turn that change down (--reject {change.id}) and export again, or apply it "
                "on each host with innotune apply.",
            )
    if not plan.facts.version:
        raise ExportError(
            "The plan does not name the server version, so an export could not check it.",
            "Make the plan again from a current inspection (innotune plan TARGET --out FILE).",
        )
    errors: list[str] = []
    host = Host(for_any_host(facts or plan_only_facts(plan)))
    actions = tuple(describe_all(plan.changes, host, errors))
    if errors:
        raise ExportError(
            "InnoTune would not apply some changes, so it does not export them: "
            + "; ".join(errors),
            "Turn those changes down (--reject) and export again.",
        )
    by_id = {c.id: c for c in plan.changes}
    rules = {r.key: r for r in plan.pool_rules}
    live = {
        v.key: sql
        for a in actions
        for v, sql in zip([v for v in a.values if v.kind == "dynamic"], a.statements, strict=True)
    }
    settings: list[ServerSetting] = []
    for action in actions:
        if action.applier != "optionfile":
            continue
        changes = {by_id[i].key: by_id[i] for i in action.change_ids if i in by_id}
        for key, value in action.option_lines:
            change = changes[key]
            _check(_KEY.match(key) and _VALUE.match(value), change)
            settings.append(ServerSetting(key, value, change, key in rules, live.get(key)))
    sysctl: list[KernelSetting] = []
    queue: list[QueueSetting] = []
    notes: list[str] = []
    for action in actions:
        mine = [by_id[i] for i in action.change_ids if i in by_id]
        for v in action.values:
            found = next((c for c in mine if _same(c, v.key)), None)
            if found is None:
                continue
            change = found
            if v.kind == "sysctl":
                _check(_SYSCTL_KEY.match(v.key) and _VALUE.match(v.new), change)
                sysctl.append(KernelSetting(v.key, v.new, change))
            elif v.kind == "sysfs":
                _check(_ATTR.match(v.key) and _VALUE.match(v.new), change)
                if facts is None:
                    notes.append(
                        f"{v.key} = {v.new} for {v.device} is not exported: a saved plan alone "
                        "does not say what kind of disk it was planned for. Export from the "
                        "facts or the host to carry it."
                    )
                    continue
                kind = disk_kind(find_device(facts, v.device or ""))
                queue.append(QueueSetting(v.key, v.new, kind, change))
    clash = {
        (q.kind, q.attr)
        for q in queue
        for other in queue
        if (q.kind, q.attr) == (other.kind, other.attr) and q.value != other.value
    }
    if clash:
        raise ExportError(
            "The plan sets different queue values for disks of the same kind ("
            + ", ".join(f"{a} on {KIND_WORDS[k]}" for k, a in sorted(clash))
            + "), so an export could not tell them apart on another host.",
            "Export for one disk at a time, or apply with InnoTune itself.",
        )
    unique = list({(q.kind, q.attr): q for q in queue}.values())
    return Export(
        plan=plan,
        actions=actions,
        settings=tuple(settings),
        sysctl=tuple(sysctl),
        queue=tuple(unique),
        advice=tuple(c for c in plan.changes if c.target in ("advice", "option_remove")),
        pool_rule=rules.get(POOL_KEY),
        notes=tuple(notes),
    )


def _same(change: Change, key: str) -> bool:
    """The change a value is for (sysctl keys may be spelled with slashes)."""
    return key in (change.key, change.key.replace("/", "."))


def _check(ok: object, change: Change) -> None:
    if not ok:
        raise ExportError(
            f"{change.id}: {change.proposed!r} is not a name or value InnoTune exports.",
            "Turn that change down (--reject) and export again.",
        )


def udev_line(export: Export, kind: str) -> str:
    """The rule line for a disk of ``kind``, with ``MATCH`` standing for its match clause."""
    return f"{RULE_HEAD}MATCH, {assignments(export.queue_for(kind))}"


def dropin_text(export: Export, per_host: bool = True) -> str:
    """The drop-in as InnoTune's option-file renderer writes it.

    With ``per_host``, a value each host computes (the buffer pool) is :data:`PLACEHOLDER`
    (a template fills it in); without, the planned host's own value.
    """
    option_file = parse(b"", DROPIN_NAME)
    for setting in export.settings:
        value = PLACEHOLDER if per_host and setting.per_host else setting.value
        option_file = set_server_option(option_file, GROUP, setting.key, value)
    return render(option_file).decode()


def comment(text: str, width: int = 88, prefix: str = "# ") -> list[str]:
    """``text`` wrapped into comment lines (never a line break inside a comment's text)."""
    flat = " ".join(text.split())
    return [prefix + line for line in textwrap.wrap(flat, width - len(prefix))] or [prefix.rstrip()]


def explain(change: Change) -> list[str]:
    """A change's explanation as comment lines: what, why, what can go wrong."""
    where = f" on {change.device}" if change.device else ""
    now = f" (was {change.current} on the planned host)" if change.current is not None else ""
    lines = comment(f"{change.key}{where} = {change.proposed}{now}")
    lines += comment(f"Why: {change.reason}", prefix="#   ")
    lines += comment(f"Risk: {change.risk}", prefix="#   ")
    if change.link:
        lines.append(f"#   See: {change.link}")
    return lines


def plan_header(export: Export) -> list[str]:
    """The comment block every exported file opens with."""
    facts = export.plan.facts
    lines = [
        "# Generated by InnoTune from a tuning plan; do not edit by hand, export again.",
        f"# Planned on {facts.target} ({facts.flavour} {facts.version}), facts of "
        f"{facts.collected_at}.",
    ]
    for slider, sentence in export.plan.sentences:
        lines += comment(f"{slider}: {sentence}")
    for warning in export.plan.warnings:
        lines += comment(f"Warning: {warning}")
    for note in export.notes:
        lines += comment(f"Not exported: {note}")
    for change in export.advice:
        if change.target == "option_remove":
            where = change.id.split(" at ", 1)[-1]
            lines += comment(
                f"Not applied by this export, to do by hand: delete {change.current} at "
                f"{where}; the server no longer reads {change.key}."
            )
            continue
        lines += comment(f"Not applied, to do by hand: {change.key}: {change.reason}")
        lines += [f"#     {line}" for line in change.advice_lines]
    return lines


def pool_rule_words(rule: PoolRule) -> list[str]:
    """The per-host buffer-pool rule in comment lines."""
    units = ", ".join(f"{u} bytes from {t}" for t, u in rule.units)
    return comment(
        f"innodb_buffer_pool_size is computed on each host from its own RAM: "
        f"{rule.share_percent}% of RAM, but no more than fits beside the OS reserve "
        f"(RAM/{rule.reserve_divisor}, within {rule.reserve_min}-{rule.reserve_max} bytes), "
        f"{rule.fixed_bytes} bytes for connections, other buffers and other processes, and "
        f"InnoDB's overhead (x{rule.overhead}); rounded down to the server's unit ({units}); "
        f"at least {rule.minimum} bytes; left out where no pool fits."
    )


def overhead_ratio(rule: PoolRule) -> tuple[int, int]:
    """The overhead as an integer ratio (1.05 → 21, 20) for shell arithmetic."""
    ratio = Fraction(str(rule.overhead)).limit_denominator(1000)
    return ratio.numerator, ratio.denominator


def restart_service(export: Export) -> str:
    """The usual service name of the planned flavour (Debian and RHEL alike for MariaDB)."""
    return "mariadb" if export.mariadb else "mysql"


def client_program(export: Export) -> str:
    """The client program of the planned flavour."""
    return "mariadb" if export.mariadb else "mysql"
