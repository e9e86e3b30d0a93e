"""Server identity, parsed once: flavour and version as a value object.

The inspector, the catalogue and the planner all ask "which server is this?";
they share :class:`ServerVersion` so the answer is the same everywhere (the
pattern of mycli's ``ServerInfo.from_version_string``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from app.domain.errors import InnoTuneError


class Flavour(StrEnum):
    """The server product line."""

    MYSQL = "mysql"
    MARIADB = "mariadb"
    PERCONA = "percona"

    @property
    def family(self) -> Flavour:
        """The line whose variables this product has: Percona Server tracks MySQL."""
        return Flavour.MYSQL if self is Flavour.PERCONA else self


class VersionError(InnoTuneError):
    """A version string that names no server version."""


# The first dotted number is the version, except in the "5.5.5-" prefix that MariaDB 10+
# servers put in front of the real version in the protocol handshake (for old clients).
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?")
_RPL_PREFIX = re.compile(r"^\s*5\.5\.5-(?=\d+\.\d+)")


@dataclass(frozen=True, order=True)
class ServerVersion:
    """A server's flavour and numeric version; orders by (major, minor, patch).

    Ordering compares numbers only; compare flavours yourself (or use :meth:`at_least`).
    """

    major: int
    minor: int
    patch: int
    flavour: Flavour = field(compare=False)
    raw: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str, comment: str = "") -> ServerVersion:
        """Parse what VERSION(), the handshake or ``mysqld --version`` prints.

        Args:
            text: e.g. ``10.11.19-MariaDB-0+deb12u1``, ``5.5.5-10.6.16-MariaDB-log``,
                ``9.7.4-2`` (Debian's MySQL), ``8.0.36-28`` (Percona),
                ``mysqld  Ver 8.4.0 for Linux on x86_64 (MySQL Community Server - GPL)``.
            comment: ``@@version_comment`` when known; it names Percona Server.

        Raises:
            VersionError: no version number in ``text``.
        """
        body = _RPL_PREFIX.sub("", text)
        match = _NUMBER.search(body)
        if match is None:
            raise VersionError(
                f"{text!r} does not contain a server version such as 10.11.6 or 8.0.36.",
                "Pass the output of SELECT VERSION() or `mysqld --version`.",
            )
        major, minor = int(match.group(1)), int(match.group(2))
        patch = int(match.group(3) or 0)
        lowered = f"{text} {comment}".lower()
        if "mariadb" in lowered:
            flavour = Flavour.MARIADB
        elif "percona" in lowered:
            # Only Percona's own words say Percona: a number after a dash is no sign of it,
            # as Debian's packages put their revision there too ("9.7.4-2", Percona "8.4.3-3").
            flavour = Flavour.PERCONA
        else:
            flavour = Flavour.MYSQL
        return cls(major, minor, patch, flavour, text.strip())

    @classmethod
    def of(cls, flavour: str | Flavour, version: str) -> ServerVersion:
        """Build from a flavour and a plain ``X.Y[.Z]`` string, e.g. ``of("mysql", "8.0.30")``."""
        match = _NUMBER.fullmatch(version.strip())
        if match is None:
            raise VersionError(f"{version!r} is not a version number like 8.0.30.")
        try:
            flav = Flavour(flavour)
        except ValueError:
            raise VersionError(
                f"{flavour!r} is not a server flavour.", "Use mysql, mariadb or percona."
            ) from None
        return cls(int(match.group(1)), int(match.group(2)), int(match.group(3) or 0), flav)

    @property
    def number(self) -> tuple[int, int, int]:
        """``(major, minor, patch)``."""
        return (self.major, self.minor, self.patch)

    @property
    def series(self) -> tuple[int, int]:
        """``(major, minor)``, e.g. ``(10, 11)``."""
        return (self.major, self.minor)

    @property
    def family(self) -> Flavour:
        """MySQL for MySQL and Percona Server, MariaDB for MariaDB."""
        return self.flavour.family

    def at_least(self, flavour: str | Flavour, version: str) -> bool:
        """True when this is the same family and at least ``version`` (``"8.0.30"``)."""
        other = ServerVersion.of(flavour, version)
        return self.family is other.family and self.number >= other.number

    def __str__(self) -> str:
        return f"{self.flavour.value} {self.major}.{self.minor}.{self.patch}"
