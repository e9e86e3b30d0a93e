"""The knob catalogue as frozen dataclasses (what resources/knobs/*.toml declare).

Vocabulary (kinds, types, units, sliders, rule inputs, server lines) lives here so
the loader, the planner and the documentation name the same things.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from app.domain.errors import InnoTuneError
from app.domain.server import Flavour, ServerVersion
from app.knobs.sliders import slider_keys

Value = bool | int | float | str

KINDS = ("server_variable", "sysfs", "sysctl", "mount", "advice")
TYPES = ("bool", "int", "float", "enum", "size")
UNITS = (
    "none",
    "bytes",
    "kib",
    "pages",
    "iops",
    "seconds",
    "microseconds",
    "percent",
    "threads",
    "count",
)
#: The sliders a knob may belong to (resources/sliders.toml), and "none".
SLIDERS = (*slider_keys(), "none")
CONFIDENCE = ("checked", "documented", "unverified")

#: The facts a planner rule may read to decide a knob's value (``inputs`` of a knob).
INPUTS = frozenset(
    {
        "host.ram_bytes",
        "host.cpu_count",
        "host.swap_bytes",
        "host.other_rss_bytes",
        "host.kernel_release",
        "server.version",
        "server.log_bin",
        "server.max_connections",
        "server.per_connection_buffer_bytes",
        "server.innodb_data_bytes",
        "server.myisam_index_bytes",
        "server.redo_write_rate",
        "server.flush_method",
        "disk.kind",
        "disk.rotational",
        "disk.sync_write_iops",
        "disk.write_cache",
        "disk.fua",
        "disk.atomic_writes",
        "disk.physical_block_size",
        "disk.hw_queue_depth",
        "disk.scheduler_available",
        "fs.type",
        "fs.mount_options",
        "fs.ext4_data_mode",
        "fs.free_bytes",
    }
)

#: The server lines the catalogue states facts for, oldest first within a family.
LINES: dict[Flavour, tuple[tuple[int, int], ...]] = {
    Flavour.MYSQL: ((5, 7), (8, 0), (8, 4), (9, 7)),
    Flavour.MARIADB: ((10, 5), (10, 6), (10, 11), (11, 4), (11, 8)),
}


def line_key(family: Flavour, series: tuple[int, int]) -> str:
    """``mysql-8.0``, ``mariadb-10.11``: how a line is named in the TOML files."""
    return f"{family.value}-{series[0]}.{series[1]}"


ALL_LINES = tuple(line_key(fam, series) for fam, lines in LINES.items() for series in lines)


class CatalogueError(InnoTuneError):
    """The catalogue files are malformed (names the file and the knob)."""


class UnknownKnob(InnoTuneError):
    """A knob name the catalogue does not have."""


class UnsupportedVersion(InnoTuneError):
    """A server older than every line the catalogue covers."""


@dataclass(frozen=True)
class Change:
    """Facts that change from a patch release on, within one line (e.g. 10.11.12)."""

    since: tuple[int, int, int]
    note: str
    default: Value | None = None
    dynamic: bool | None = None
    min: int | float | None = None
    max: int | float | None = None
    allowed: tuple[Value, ...] | None = None
    ignored: bool | None = None
    deprecated: bool | None = None


@dataclass(frozen=True)
class LineFacts:
    """What one server line (say ``mariadb-10.11``) knows about a variable, at its first release."""

    line: str
    default: Value
    dynamic: bool
    link: str
    confidence: str
    default_rule: str | None = None
    help_default: Value | None = None
    min: int | float | None = None
    max: int | float | None = None
    allowed: tuple[Value, ...] | None = None
    # Values SET GLOBAL cannot switch to or from (MySQL's innodb_doublewrite OFF): a change
    # that involves one needs a restart although the variable is dynamic.
    restart_values: tuple[Value, ...] = ()
    block: int | None = None
    ignored: bool = False
    deprecated: bool = False
    note: str | None = None
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class Lifecycle:
    """When a variable appeared, was deprecated or removed in one product family."""

    absent: bool = False
    added: tuple[int, int, int] | None = None
    deprecated: tuple[int, int, int] | None = None
    removed: tuple[int, int, int] | None = None
    note: str | None = None

    def exists_at(self, number: tuple[int, int, int]) -> bool:
        """Whether a server of that version knows the variable."""
        if self.absent:
            return False
        if self.added is not None and number < self.added:
            return False
        return self.removed is None or number < self.removed


@dataclass(frozen=True)
class KernelChange:
    """Facts of an OS knob that differ on a range of kernel versions."""

    note: str
    since: tuple[int, int] | None = None
    until: tuple[int, int] | None = None
    default: Value | None = None
    default_rule: str | None = None
    allowed: tuple[Value, ...] | None = None
    min: int | float | None = None
    max: int | float | None = None


@dataclass(frozen=True)
class LinuxFacts:
    """Where an OS knob lives and what the kernel allows."""

    path: str
    persist: str
    link: str
    confidence: str
    default: Value | None = None
    default_rule: str | None = None
    allowed: tuple[Value, ...] | None = None
    min: int | float | None = None
    max: int | float | None = None
    note: str | None = None
    kernels: tuple[KernelChange, ...] = ()

    def on_kernel(self, kernel: tuple[int, int]) -> LinuxFacts:
        """These facts as they hold on one kernel series, e.g. ``(4, 19)`` or ``(6, 1)``."""
        facts = replace(self, kernels=())
        for change in self.kernels:
            if change.since is not None and kernel < change.since:
                continue
            if change.until is not None and kernel > change.until:
                continue
            facts = replace(
                facts,
                default=change.default if change.default is not None else facts.default,
                default_rule=change.default_rule or facts.default_rule,
                allowed=change.allowed if change.allowed is not None else facts.allowed,
                min=change.min if change.min is not None else facts.min,
                max=change.max if change.max is not None else facts.max,
                note=" ".join(n for n in (facts.note, change.note) if n),
            )
        return facts


def kernel_series(release: str) -> tuple[int, int]:
    """``(6, 1)`` from a kernel release such as ``6.1.0-18-amd64`` (``uname -r``).

    Raises:
        ValueError: the text does not start with a kernel version.
    """
    match = re.match(r"^\s*(\d+)\.(\d+)", release)
    if match is None:
        raise ValueError(f"{release!r} is not a kernel release like 6.1.0-18-amd64")
    return (int(match.group(1)), int(match.group(2)))


@dataclass(frozen=True)
class Knob:
    """One tunable: where it lives, its type, its texts, its slider and its facts."""

    name: str
    area: str  # the file it came from: durability, memory, redo, flushing, io, os, myisam
    kind: str
    type: str
    unit: str
    slider: str
    inputs: tuple[str, ...]
    related: tuple[str, ...]
    title: str
    what: str
    why_writes: str
    risks: str
    verify: str
    advice: str
    advice_mysql: str = ""  # what InnoTune does on MySQL, when it differs from ``advice``
    advice_mariadb: str = ""  # ... and on MariaDB
    field_reports: tuple[str, ...] = ()
    advice_only: bool = False
    advice_lines: tuple[str, ...] = ()
    lifecycle: tuple[tuple[Flavour, Lifecycle], ...] = ()
    server: tuple[LineFacts, ...] = ()
    linux: LinuxFacts | None = None

    @property
    def is_server_variable(self) -> bool:
        """True for variables of the database server (option file, maybe SET GLOBAL)."""
        return self.kind == "server_variable"

    def advice_for(self, family: Flavour) -> str:
        """What InnoTune does with it on this product line: no remark about the other line."""
        own = {Flavour.MYSQL: self.advice_mysql, Flavour.MARIADB: self.advice_mariadb}.get(family)
        return own or self.advice

    def lifecycle_for(self, family: Flavour) -> Lifecycle:
        """The variable's history in MySQL or MariaDB."""
        for fam, life in self.lifecycle:
            if fam is family:
                return life
        return Lifecycle(absent=True)

    def line(self, key: str) -> LineFacts | None:
        """The facts stated for a line such as ``mysql-8.0``, or None."""
        for facts in self.server:
            if facts.line == key:
                return facts
        return None


@dataclass(frozen=True)
class VersionFacts:
    """A variable's facts resolved for one exact server version.

    ``exact_line`` is False when the version lies between or after the lines the
    catalogue covers (e.g. MariaDB 10.9, 12.0, MySQL 9.1): the facts are those of the
    nearest covered line and must be treated as unverified.
    """

    name: str
    version: ServerVersion
    line: str
    exact_line: bool
    confidence: str
    default: Value
    dynamic: bool
    link: str
    default_rule: str | None
    help_default: Value | None
    min: int | float | None
    max: int | float | None
    allowed: tuple[Value, ...] | None
    block: int | None
    ignored: bool
    deprecated: bool
    notes: tuple[str, ...]
    restart_values: tuple[Value, ...] = ()

    def live_between(self, current: str | None, proposed: str) -> bool:
        """True when SET GLOBAL can move the variable from ``current`` to ``proposed``."""
        stuck = {str(v).upper() for v in self.restart_values}
        return self.dynamic and not ({str(current).upper(), proposed.upper()} & stuck)

    @property
    def verified(self) -> bool:
        """False for versions outside the covered lines and for unverified facts."""
        return self.exact_line and self.confidence != "unverified"

    @property
    def restart_needed(self) -> bool:
        """A change takes effect only after a restart."""
        return not self.dynamic

    @property
    def places(self) -> tuple[str, ...]:
        """Where a change goes: always the option file; also SET GLOBAL where dynamic."""
        return ("option_file", "dynamic_variable") if self.dynamic else ("option_file",)
