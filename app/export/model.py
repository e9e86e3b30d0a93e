"""What both exports need from a plan: the settings by kind, the per-host rule, the comments.

Pure: a :class:`~app.domain.plan.Plan` in, plain values out. The file contents reuse the
appliers' renderers (:func:`app.optionfiles.set_option` / :func:`app.optionfiles.render` for
the drop-in, :func:`app.appliers.sysctl.render_conf` for sysctl.d) so an export writes the
same files InnoTune's own apply would write on a host without earlier InnoTune files.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from fractions import Fraction

from app.domain.errors import InnoTuneError
from app.domain.plan import Change, Plan, PoolRule
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
_DEVICE = re.compile(r"^[A-Za-z0-9_.:!+-]+$")
_ATTR = re.compile(r"^queue/[a-z0-9_]+$")
_VALUE = re.compile(r"^[A-Za-z0-9_.-]+$")


class ExportError(InnoTuneError):
    """The plan cannot be exported as asked."""


@dataclass(frozen=True)
class ServerSetting:
    """One option-file line; ``dynamic`` ones are also set live when no restart follows."""

    change: Change
    per_host: bool  # computed on each host from a rule (the buffer pool)

    @property
    def key(self) -> str:
        """The variable."""
        return self.change.key

    @property
    def restart(self) -> bool:
        """True when a new value takes effect only after a restart."""
        return self.change.target == "option_file" or self.change.restart_needed


@dataclass(frozen=True)
class Export:
    """The plan digested for the exporters."""

    plan: Plan
    settings: tuple[ServerSetting, ...]
    sysctl: tuple[Change, ...]
    sysfs: tuple[Change, ...]
    advice: tuple[Change, ...]
    pool_rule: PoolRule | None

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
    def devices(self) -> tuple[str, ...]:
        """The block devices with queue settings, in plan order."""
        return tuple(dict.fromkeys(c.device or "" for c in self.sysfs))


def version_number(text: str) -> str:
    """``10.11.6-MariaDB-0+deb12u1`` → ``10.11.6``."""
    match = re.match(r"\s*(\d+(?:\.\d+){0,2})", text)
    return match.group(1) if match else ""


def digest(plan: Plan) -> Export:
    """Sort the plan's changes by what an export does with them.

    Raises:
        ExportError: a name or value an export will not write into a file or a shell line.
    """
    rules = {r.key: r for r in plan.pool_rules}
    settings: list[ServerSetting] = []
    sysctl: list[Change] = []
    sysfs: list[Change] = []
    advice: list[Change] = []
    for change in plan.changes:
        if change.key in SWITCHED_OFF_BY_SKIP:
            raise ExportError(
                f"{change.id}: turning the binary log off is not exported yet (a playbook "
                "would need the replicas and readers of each host checked first).",
                f"Turn that change down (--reject {change.id}) and export again, or apply it "
                "on each host with innotune apply.",
            )
        if change.target in ("option_file", "dynamic"):
            _check(_KEY.match(change.key), change)
            _check(_VALUE.match(change.proposed), change)
            settings.append(ServerSetting(change, per_host=change.key in rules))
        elif change.target == "sysctl":
            _check(_SYSCTL_KEY.match(change.key) and _VALUE.match(change.proposed), change)
            sysctl.append(change)
        elif change.target == "sysfs":
            ok = _DEVICE.match(change.device or "") and _ATTR.match(change.key)
            _check(ok and _VALUE.match(change.proposed), change)
            sysfs.append(change)
        else:
            advice.append(change)
    if not plan.facts.version:
        raise ExportError(
            "The plan does not name the server version, so an export could not check it.",
            "Make the plan again from a current inspection (innotune plan TARGET --out FILE).",
        )
    return Export(
        plan=plan,
        settings=tuple(settings),
        sysctl=tuple(sysctl),
        sysfs=tuple(sysfs),
        advice=tuple(advice),
        pool_rule=rules.get(POOL_KEY),
    )


def _check(ok: object, change: Change) -> None:
    if not ok:
        raise ExportError(
            f"{change.id}: {change.proposed!r} is not a name or value InnoTune exports.",
            "Turn that change down (--reject) and export again.",
        )


def dropin_text(export: Export) -> str:
    """The drop-in as InnoTune's option-file renderer writes it; per-host values as PLACEHOLDER."""
    option_file = parse(b"", DROPIN_NAME)
    for setting in export.settings:
        value = PLACEHOLDER if setting.per_host else setting.change.proposed
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
