"""The loaded catalogue and the questions the planner asks it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from app.domain.server import Flavour, ServerVersion
from app.knobs.loader import DEFAULT_DIR, check_references, load_file
from app.knobs.model import (
    LINES,
    CatalogueError,
    Knob,
    LineFacts,
    UnknownKnob,
    UnsupportedVersion,
    Value,
    VersionFacts,
    line_key,
)


def _server_version(flavour: str | Flavour, version: str | ServerVersion) -> ServerVersion:
    if isinstance(version, ServerVersion):
        if version.family is not Flavour(flavour).family:
            raise UnsupportedVersion(f"{version} is not a {Flavour(flavour).value} server.")
        return version
    return ServerVersion.of(flavour, version)


@dataclass(frozen=True)
class Catalogue:
    """All knobs, validated; answers per-version questions."""

    knobs: tuple[Knob, ...]
    source: str

    def names(self) -> tuple[str, ...]:
        """Every knob name, in catalogue order."""
        return tuple(k.name for k in self.knobs)

    def knob(self, name: str) -> Knob:
        """The knob called ``name``.

        Raises:
            UnknownKnob: the catalogue has no such knob.
        """
        for knob in self.knobs:
            if knob.name == name:
                return knob
        raise UnknownKnob(
            f"The knob catalogue has no {name!r}.", f"Known knobs are listed in {self.source}."
        )

    def by_slider(self, slider: str) -> tuple[Knob, ...]:
        """The knobs a slider drives (``none``: the ones the planner only reports)."""
        return tuple(k for k in self.knobs if k.slider == slider)

    def line_for(self, flavour: str | Flavour, version: str | ServerVersion) -> tuple[str, bool]:
        """The covered line whose facts apply, and whether the version is in that line.

        Versions between lines (MariaDB 10.9) or newer than all (MySQL 9.x, MariaDB 12)
        use the nearest older line, marked inexact (unverified).

        Raises:
            UnsupportedVersion: older than every covered line (MySQL 5.6, MariaDB 10.4).
        """
        sv = _server_version(flavour, version)
        lines = LINES[sv.family]
        if sv.series < lines[0]:
            oldest = ", ".join(f"{a}.{b}" for a, b in lines)
            raise UnsupportedVersion(
                f"{sv} is older than the versions InnoTune knows ({sv.family.value} {oldest}).",
                "Upgrade the server to a supported release first.",
            )
        older = [s for s in lines if s <= sv.series]
        series = older[-1]
        return line_key(sv.family, series), series == sv.series

    def exists(self, name: str, flavour: str | Flavour, version: str | ServerVersion) -> bool:
        """Whether that server version knows the variable (False for OS knobs)."""
        return self.facts_for(name, flavour, version) is not None

    def is_dynamic(
        self, name: str, flavour: str | Flavour, version: str | ServerVersion
    ) -> bool | None:
        """True if SET GLOBAL works there, False if a restart is needed, None if absent."""
        facts = self.facts_for(name, flavour, version)
        return None if facts is None else facts.dynamic

    def facts_for(
        self, name: str, flavour: str | Flavour, version: str | ServerVersion
    ) -> VersionFacts | None:
        """The variable's facts for that exact version, or None where it does not exist.

        Raises:
            UnknownKnob: no such knob.
            UnsupportedVersion: the version is older than every covered line.
        """
        knob = self.knob(name)
        sv = _server_version(flavour, version)
        key, exact = self.line_for(sv.family, sv)
        if not knob.is_server_variable:
            return None
        life = knob.lifecycle_for(sv.family)
        if not life.exists_at(sv.number):
            return None
        base = knob.line(key) or self._nearest_line(knob, sv)
        if base is None:  # pragma: no cover - the loader guarantees a line where it exists
            raise CatalogueError(f"Knob {name!r} exists in {sv} but no line states its facts.")
        return _resolve(knob, base, sv, exact and base.line == key)

    @staticmethod
    def _nearest_line(knob: Knob, sv: ServerVersion) -> LineFacts | None:
        """For versions whose own line lacks facts: the closest line that has them."""
        keyed = [(s, knob.line(line_key(sv.family, s))) for s in LINES[sv.family]]
        stated = [(s, f) for s, f in keyed if f is not None]
        older = [f for s, f in stated if s <= sv.series]
        newer = [f for s, f in stated if s > sv.series]
        if older:
            return older[-1]
        return newer[0] if newer else None


def _resolve(knob: Knob, base: LineFacts, sv: ServerVersion, exact: bool) -> VersionFacts:
    default: Value = base.default
    dynamic, low, high, allowed = base.dynamic, base.min, base.max, base.allowed
    ignored, deprecated = base.ignored, base.deprecated
    notes = [base.note] if base.note else []
    for change in base.changes:
        if change.since > sv.number:
            continue
        default = change.default if change.default is not None else default
        dynamic = change.dynamic if change.dynamic is not None else dynamic
        low = change.min if change.min is not None else low
        high = change.max if change.max is not None else high
        allowed = change.allowed if change.allowed is not None else allowed
        ignored = change.ignored if change.ignored is not None else ignored
        deprecated = change.deprecated if change.deprecated is not None else deprecated
        notes.append(change.note)
    life = knob.lifecycle_for(sv.family)
    if life.deprecated is not None and sv.number >= life.deprecated:
        deprecated = True
        notes.append(
            f"Deprecated since {'.'.join(map(str, life.deprecated))}."
            + (f" {life.note}" if life.note else "")
        )
    if not exact:
        notes.append(
            f"{sv} is not one of the checked releases; these are the facts of {base.line}."
        )
    return VersionFacts(
        name=knob.name,
        version=sv,
        line=base.line,
        exact_line=exact,
        confidence=base.confidence,
        default=default,
        dynamic=dynamic,
        link=base.link,
        default_rule=base.default_rule,
        help_default=base.help_default,
        min=low,
        max=high,
        allowed=allowed,
        block=base.block,
        ignored=ignored,
        deprecated=deprecated,
        notes=tuple(notes),
        restart_values=base.restart_values,
    )


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    """Load and validate the catalogue: a directory of ``*.toml`` files, or one file.

    Args:
        path: defaults to ``resources/knobs`` of this checkout.

    Raises:
        CatalogueError: anything malformed, naming the file and the knob.
    """
    source = Path(path) if path is not None else DEFAULT_DIR
    if source.is_dir():
        files = sorted(source.glob("*.toml"))
        if not files:
            raise CatalogueError(f"No *.toml catalogue files in {source}.")
    elif source.is_file():
        files = [source]
    else:
        raise CatalogueError(f"The knob catalogue {source} does not exist.")
    knobs = tuple(knob for file in files for knob in load_file(file))
    check_references(knobs, source)
    return Catalogue(knobs=knobs, source=str(source))


@functools.cache
def default_catalogue() -> Catalogue:
    """The shipped catalogue, loaded once per process."""
    return load_catalogue()
