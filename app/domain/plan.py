"""A tuning plan: the slider positions, the changes they produce and the knobs left alone.

Plain values (stdlib only) that round-trip through JSON with :func:`app.domain.facts.to_json`,
so ``innotune plan --out PLAN.json`` can be loaded by preview, apply and export later. The
planner (``app.planner``) builds these; nothing here decides anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.facts import from_json, to_json

FORMAT = "innotune-plan/1"

#: The values ``SliderPositions.crash_loss`` may take. The sliders themselves (positions,
#: words, CLI options) are declared in resources/sliders.toml, whose loader checks that
#: every position declared is one these dataclasses accept.
CRASH_LOSS = ("none", "os", "any")

#: Where a change goes. ``dynamic`` server variables apply live (SET GLOBAL) and are also
#: written to the option file; ``option_file`` ones need a restart; ``advice`` is never
#: applied, only shown with its ``advice_lines``; ``option_remove`` deletes an option-file
#: line (``path``) that sets what the server removed or ignores.
TARGETS = ("option_file", "dynamic", "sysfs", "sysctl", "advice", "option_remove")


@dataclass(frozen=True)
class SliderPositions:
    """Where each of the six sliders stands (what each position means: resources/sliders.toml).

    Attributes:
        crash_loss: what a crash may cost: ``none``, ``os`` or ``any``.
        memory_share: the buffer pool as a percentage of RAM (1-90); the planner never
            goes beyond what fits beside the OS, the other processes and the connections.
            At the server's current share (rounded, see ``default_positions``) the pool
            stays as it is unless it does not fit.
        redo_minutes: how many minutes of the measured redo writes the redo log holds (the
            redo slider's presets, or any number); None keeps the current size.
        doublewrite: torn-page protection on (True) or off (False; only honoured where the
            storage cannot tear pages).
        fit_disks: accept the changes that fit the server to its disks (slider 5a).
        fit_os: accept the changes that fit the OS (swappiness, dirty ratios).
        myisam: size key_buffer_size to the MyISAM indexes found (only where MyISAM holds data).
        binlog: keep the binary log as it is (True), or turn it off (False; never where
            replicas or a reader use it, and InnoTune never turns it on).
        rejected: ids of single changes the person turned down (``Change.id``), e.g.
            ``innodb_io_capacity`` or ``queue/scheduler@sda``.
    """

    crash_loss: str = "none"
    memory_share: int = 50
    redo_minutes: int | None = None
    doublewrite: bool = True
    fit_disks: bool = True
    fit_os: bool = True
    myisam: bool = False
    binlog: bool = True
    rejected: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.crash_loss not in CRASH_LOSS:
            raise ValueError(f"crash_loss must be one of {', '.join(CRASH_LOSS)}")
        if not 1 <= self.memory_share <= 90:
            raise ValueError("memory_share must be a percentage between 1 and 90")
        if self.redo_minutes is not None and not 1 <= self.redo_minutes <= 1440:
            raise ValueError("redo_minutes must be between 1 and 1440 (a day of writes)")


@dataclass(frozen=True)
class Change:
    """One setting the plan changes, or (target ``advice``) a line it asks a person to add.

    Values are strings in canonical form: sizes and numbers as plain integers (bytes for
    sizes), booleans as ON/OFF, enums as the server or kernel spells them.
    """

    id: str  # unique in the plan: the key, or key@device for per-device settings
    slider: str
    target: str  # one of TARGETS
    key: str  # variable, sysctl or sysfs attribute name (queue/scheduler), or advice knob
    current: str | None
    proposed: str
    reason: str  # the fact that led to it, e.g. "sda is rotational, so …"
    risk: str  # one sentence: what can go wrong
    live: bool  # takes effect without restarting the server
    restart_needed: bool
    link: str
    confidence: str  # checked, documented or unverified (catalogue confidence)
    device: str | None = None
    path: str | None = None  # sysfs / procfs file, or the file the advice is about
    persist: str | None = None  # how an OS change survives a reboot
    advice_lines: tuple[str, ...] = ()
    # False: set live only, because nothing on this host would keep it across a reboot (a
    # queue setting where no udev runs); no persistence file is written for it.
    kept: bool = True


@dataclass(frozen=True)
class LeftAlone:
    """A knob the plan does not change, and why."""

    knob: str
    slider: str
    why: str
    device: str | None = None


@dataclass(frozen=True)
class FactsSummary:
    """Which facts the plan came from: enough to tell a stale plan from a current one."""

    target: str
    collected_at: str
    flavour: str | None
    version: str | None
    datadir: str | None
    checksum: str  # sha256 of the facts' JSON (HostFacts.to_json())


@dataclass(frozen=True)
class FileChecksum:
    """A file the plan will change and its content hash when planned (filled by the describers)."""

    path: str
    sha256: str | None  # None: the file does not exist yet


@dataclass(frozen=True)
class PoolRule:
    """The buffer-pool rule as data, so every host of a fleet sizes its own pool.

    An export (Ansible, shell script) computes, on each host from that host's RAM ``ram``::

        reserve = min(max(ram // reserve_divisor, reserve_min), reserve_max)
        fits    = max(0, int((ram - reserve - fixed_bytes) / overhead))
        target  = min(ram * share_percent // 100, fits)
        unit    = the last ``units`` entry whose threshold <= target (1 MiB if unit > target)
        pool    = max(minimum, max(unit, target // unit * unit))   # nothing if fits < minimum

    which is what :func:`app.planner.rules.memory.memory` does for the planned host.

    Attributes:
        key: the variable (innodb_buffer_pool_size).
        share_percent: the memory slider's position.
        reserve_divisor: the OS keeps RAM // this (10: 10%)...
        reserve_min: ...at least this many bytes...
        reserve_max: ...and at most this many.
        fixed_bytes: other processes + every connection's buffers + the server's other
            memory, as measured on the planned host (the same my.cnf gives the same
            buffers elsewhere; other processes may differ: an export lets it be overridden).
        overhead: InnoDB's bookkeeping beside the pool (1.05).
        units: (threshold bytes, rounding unit) pairs, ascending: the server rounds the pool
            to the unit of the largest threshold not above the target.
        minimum: the server's minimum pool size.
    """

    key: str
    share_percent: int
    reserve_divisor: int
    reserve_min: int
    reserve_max: int
    fixed_bytes: int
    overhead: float
    units: tuple[tuple[int, int], ...]
    minimum: int


@dataclass(frozen=True)
class Plan:
    """Facts + slider positions → changes, the knobs left alone and the warnings."""

    facts: FactsSummary
    positions: SliderPositions
    sentences: tuple[tuple[str, str], ...]  # (slider, one-sentence risk of its position)
    changes: tuple[Change, ...]
    left_alone: tuple[LeftAlone, ...]
    warnings: tuple[str, ...]
    restart_needed: bool
    file_checksums: tuple[FileChecksum, ...] = ()
    format: str = FORMAT
    #: Rules an export recomputes per host (today the buffer pool's); empty in older plans.
    pool_rules: tuple[PoolRule, ...] = ()

    def change(self, change_id: str) -> Change | None:
        """The change with that id, if the plan has one."""
        return next((c for c in self.changes if c.id == change_id), None)

    def by_slider(self, slider: str) -> tuple[Change, ...]:
        """The changes one slider produced."""
        return tuple(c for c in self.changes if c.slider == slider)

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` gives back an equal value."""
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Read a plan saved by :meth:`to_json`.

        Raises:
            ValueError: not a plan file, or a malformed one.
        """
        plan = from_json(cls, text)
        if plan.format != FORMAT:
            raise ValueError(f"not an InnoTune plan file (format {plan.format!r})")
        return plan
