"""What the rules read (the facts, digested once) and what they write (a plan under way)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.domain.errors import InnoTuneError
from app.domain.facts import VIRTUAL_TRANSPORTS, BlockDevice, MachineFacts, WritePath
from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, LeftAlone, PoolRule, SliderPositions
from app.domain.server import Flavour, ServerVersion
from app.domain.serverfacts import ServerFacts
from app.knobs import Catalogue, Knob, VersionFacts, kernel_series
from app.planner.values import normalise, parse_int, same

#: Transports whose "rotational" flag tells nothing about the storage behind them.

#: Filesystems where InnoDB's O_DIRECT is known to work (ext4 unless data=journal).
DIRECT_IO_FS = ("ext4", "ext3", "xfs")


class PlanError(InnoTuneError):
    """The facts cannot be planned for (no server in them)."""


# The last server's variables by name. The rules ask for dozens of a server's ~650
# variables, and a scan per question was a third of a plan's time (the Trade-offs page
# plans on every slider move). Facts are frozen, so the same object has the same variables.
_last_variables: tuple[ServerFacts, dict[str, str | None]] | None = None


def server_variable(server: ServerFacts, name: str) -> str | None:
    """``server.variable(name)``, through an index built once per facts object."""
    global _last_variables
    if _last_variables is None or _last_variables[0] is not server:
        index: dict[str, str | None] = {}
        for var in server.variables:
            index.setdefault(var.name, var.value)  # the first one wins, as in variable()
        _last_variables = (server, index)
    return _last_variables[1].get(name)


# The catalogue's answers for the last server version: the same on every plan for it.
_last_facts: tuple[Catalogue, ServerVersion, dict[str, VersionFacts | None]] | None = None


def datadir_path(facts: HostFacts) -> WritePath | None:
    """The datadir's write path (the first one gathered when the datadir is unknown)."""
    paths = facts.os.write_paths
    server = facts.server
    if server is not None and server.datadir:
        found = facts.os.path(server.datadir.rstrip("/") or "/")
        if found is not None:
            return found
    return paths[0] if paths else None


def reports_rotational(facts: HostFacts) -> bool:
    """True when a leaf disk under the datadir reports rotational (virtual ones included).

    Used for rough time estimates, where assuming the slower disk is the careful side.
    """
    path = datadir_path(facts)
    return bool(path and any(d.rotational for d in path.physical))


def first_sentence(text: str) -> str:
    """The first sentence of a catalogue text (the one-line risk)."""
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


@dataclass(frozen=True)
class Disk:
    """A leaf device of the datadir's write path, classified for the rules."""

    device: BlockDevice
    kind: str  # nvme, ssd, hdd, hwraid, virtual, unknown

    @property
    def name(self) -> str:
        """The kernel name, e.g. sda."""
        return self.device.name

    @property
    def spinning(self) -> bool:
        """True for disks (and RAID volumes) that report rotational."""
        return self.kind in ("hdd", "hwraid")

    @property
    def words(self) -> str:
        """How a reason names it: "sda (rotational SATA disk)"."""
        d = self.device
        what = {
            "nvme": "an NVMe SSD",
            "ssd": "non-rotational (SSD)",
            "hdd": "rotational",
            "hwraid": f"a hardware RAID volume ({d.hw_raid_hint or d.model or 'controller'})",
            "virtual": f"a virtual {d.transport} disk",
            "unknown": "of unknown type",
        }[self.kind]
        return f"{d.name} is {what}"


def classify(device: BlockDevice) -> Disk:
    """NVMe / SSD / spinning / hardware RAID / virtual, from the device's facts."""
    if device.transport == "nvme":
        kind = "nvme"
    elif device.hw_raid_hint:
        kind = "hwraid"
    elif device.transport in VIRTUAL_TRANSPORTS:
        kind = "virtual"
    elif device.rotational is True:
        kind = "hdd"
    elif device.rotational is False:
        kind = "ssd"
    else:
        kind = "unknown"
    return Disk(device, kind)


@dataclass
class Ctx:
    """The facts as the rules need them, and the plan being built."""

    facts: HostFacts
    server: ServerFacts
    version: ServerVersion
    catalogue: Catalogue
    positions: SliderPositions
    changes: list[Change] = field(default_factory=list)
    left_alone: list[LeftAlone] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pool_rules: list[PoolRule] = field(default_factory=list)  # rules an export recomputes
    # Sentences a rule words from its own figures (memory, redo): slider key -> sentence.
    sentences: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, facts: HostFacts, positions: SliderPositions, catalogue: Catalogue) -> Ctx:
        """Digest the facts.

        Raises:
            PlanError: the facts hold no server.
            UnsupportedVersion: the server is older than the catalogue covers.
        """
        server = facts.server
        if server is None:
            raise PlanError(
                "These facts hold no database server, so there is nothing to plan.",
                "Inspect a host where MySQL or MariaDB runs (innotune inspect TARGET).",
            )
        version = ServerVersion.parse(server.version, server.version_comment)
        line, exact = catalogue.line_for(version.family, version)  # refuses older versions
        ctx = cls(facts, server, version, catalogue, positions)
        if not exact:
            ctx.warn(
                f"{version} is not one of the release lines InnoTune checked; the plan uses the "
                f"facts of {line}, so treat every change as unverified and read it back after "
                "applying."
            )
        return ctx

    # -- facts ---------------------------------------------------------------------------

    @property
    def machine(self) -> MachineFacts:
        """The machine facts."""
        return self.facts.os.machine

    @property
    def mariadb(self) -> bool:
        """True for MariaDB."""
        return self.version.family is Flavour.MARIADB

    def at_least(self, version: str) -> bool:
        """This server's family and at least ``version``."""
        return self.version.at_least(self.version.family, version)

    def var(self, name: str) -> str | None:
        """A global variable's value as the server reported it."""
        return server_variable(self.server, name)

    def num(self, name: str) -> int | None:
        """A numeric global variable."""
        return parse_int(self.var(name))

    def facts_for(self, name: str) -> VersionFacts | None:
        """The catalogue's facts for this server version (None: the version lacks it)."""
        global _last_facts
        if (
            _last_facts is None
            or _last_facts[0] is not self.catalogue
            or _last_facts[1] != self.version
        ):
            _last_facts = (self.catalogue, self.version, {})
        known = _last_facts[2]
        if name not in known:
            known[name] = self.catalogue.facts_for(name, self.version.family, self.version)
        return known[name]

    def knob(self, name: str) -> Knob:
        """A catalogue knob."""
        return self.catalogue.knob(name)

    def advice(self, name: str) -> str:
        """The first sentence of what InnoTune does with ``name`` on this server's line."""
        return first_sentence(self.knob(name).advice_for(self.version.family))

    @property
    def path(self) -> WritePath | None:
        """The datadir's write path (the first one gathered when the datadir is unknown)."""
        return datadir_path(self.facts)

    @property
    def disks(self) -> tuple[Disk, ...]:
        """The leaf disks under the datadir."""
        path = self.path
        return tuple(classify(d) for d in path.physical) if path else ()

    @property
    def kernel(self) -> tuple[int, int] | None:
        """The kernel series, e.g. (6, 1)."""
        try:
            return kernel_series(self.machine.kernel) if self.machine.kernel else None
        except ValueError:
            return None

    @property
    def host(self) -> str:
        """The host's name for reasons."""
        return self.machine.hostname or self.facts.target

    @property
    def container_words(self) -> str:
        """``"the host is a container (lxc)"``, or "" when it is none or unknown."""
        kind = self.machine.container
        if not kind or kind == "none":
            return ""
        return f"the host is a container ({kind})"

    def kernel_refused(self) -> str | None:
        """Why the kernel settings cannot be changed from this host (None: they can or unknown)."""
        caps = self.machine.capabilities
        if caps.kernel_settings is not False:
            return None
        seen = "; ".join(x for x in (caps.kernel_settings_seen, self.container_words) if x)
        where = (
            "the machine that hosts it" if self.container_words else "a system that may change them"
        )
        return f"This host's kernel settings are read-only ({seen}): set them on {where}"

    def queue_refused(self, device: BlockDevice) -> str | None:
        """Why ``device``'s queue files cannot be changed from this host (None: they can)."""
        if device.queue_writable is not False:
            return None
        caps = self.machine.capabilities
        seen = "/sys is mounted read-only" if caps.sysfs_read_only else "root may not write them"
        seen = "; ".join(x for x in (seen, self.container_words) if x)
        owner = "the machine that hosts it" if self.container_words else "the system that owns it"
        return (
            f"{device.name}'s queue files are read-only here ({seen}): its queue belongs to {owner}"
        )

    # -- the plan under way -------------------------------------------------------------

    def leave(self, knob: str, slider: str, why: str, device: str | None = None) -> None:
        """Record a knob left alone."""
        self.left_alone.append(LeftAlone(knob, slider, why, device))

    def warn(self, text: str) -> None:
        """Record a warning (once)."""
        if text not in self.warnings:
            self.warnings.append(text)

    def accepted(self, change_id: str, slider: str) -> str | None:
        """None when the person accepts this change; otherwise why not."""
        # Said of the boxes, not of the person: InnoTune itself starts some unticked (the
        # practice server spares this computer's kernel and disk queues).
        if slider == "fit_disks" and not self.positions.fit_disks:
            return "slider 5a (fit the disks) is unticked"
        if slider == "fit_os" and not self.positions.fit_os:
            return "slider 5b (fit the OS) is unticked"
        if change_id in self.positions.rejected:
            return "this change is unticked (turned down)"
        return None

    def propose(self, change: Change) -> bool:
        """Add a change unless the person turned it (or its slider) down; True if added."""
        refused = self.accepted(change.id, change.slider)
        if refused is not None:
            self.leave(
                change.key,
                change.slider,
                f"{refused}; it would set {change.proposed} (now {change.current}): "
                f"{change.reason}",
                change.device,
            )
            return False
        self.changes.append(change)
        return True

    def withdraw(self, change_id: str, why: str) -> Change | None:
        """Take a proposed change back out (to keep the plan consistent)."""
        for change in self.changes:
            if change.id == change_id:
                self.changes.remove(change)
                self.leave(change.key, change.slider, why, change.device)
                return change
        return None

    def final(self, name: str) -> str | None:
        """The value a variable will have after the plan: proposed, else current."""
        for change in self.changes:
            if change.id == name:
                return change.proposed
        return self.var(name)

    def server_change(
        self,
        name: str,
        proposed: str,
        reason: str,
        slider: str,
        *,
        risk: str | None = None,
        restart: bool = False,
        already: str | None = None,
    ) -> bool:
        """Propose a server variable, checked against the catalogue for this version.

        Never proposes a variable the version does not know, one it ignores, a value
        outside its range or allowed values, or the value already in force.

        Args:
            name: the variable.
            proposed: its new value, in canonical form.
            reason: the fact that led to it.
            slider: the slider that drives it.
            risk: one sentence (default: the first of the catalogue's risks).
            restart: the change needs a restart even where the variable is dynamic.
            already: why it is left alone when the value is already in force.

        Returns:
            True when the change was added to the plan.
        """
        knob = self.knob(name)
        vf = self.facts_for(name)
        if vf is None:
            self.leave(name, slider, f"{self.version} does not have {name}.")
            return False
        if vf.ignored:
            self.leave(name, slider, f"{self.version} ignores {name}. " + " ".join(vf.notes))
            return False
        current = self.var(name)
        if same(current, proposed, knob.type):
            self.leave(name, slider, already or f"It is already {current}.")
            return False
        canon = normalise(proposed, knob.type)
        if knob.type in ("int", "size"):
            number = parse_int(proposed)
            if number is None or (vf.min is not None and number < vf.min):
                self.leave(name, slider, f"{proposed} is below the server's minimum {vf.min}.")
                return False
            if vf.max is not None and number > vf.max:
                self.leave(name, slider, f"{proposed} is above the server's maximum {vf.max}.")
                return False
        if vf.allowed is not None:
            allowed = {normalise(str(a), knob.type) for a in vf.allowed}
            if knob.type == "bool":
                allowed = {"ON", "OFF"}
            if canon not in allowed:
                self.leave(name, slider, f"{self.version} does not accept {proposed}.")
                return False
        live = vf.live_between(current, proposed) and not restart
        confidence = vf.confidence if vf.verified else "unverified"
        return self.propose(
            Change(
                id=name,
                slider=slider,
                target="dynamic" if live else "option_file",
                key=name,
                current=current,
                proposed=proposed,
                reason=reason,
                risk=risk or first_sentence(knob.risks),
                live=live,
                restart_needed=not live,
                link=vf.link,
                confidence=confidence,
            )
        )
