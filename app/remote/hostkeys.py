"""Host-key checking: our own known_hosts parser, the trust decision, and InnoTune's key file.

paramiko's ``HostKeys.load`` raises on ``@cert-authority`` and ``@revoked`` lines and knows
neither wildcards nor negation, so a user's ordinary ``~/.ssh/known_hosts`` can crash it or
make a known host look unknown. This module reads the files itself, the way OpenSSH does:

- plain names, comma lists, ``[host]:port`` for ports other than 22;
- hashed names (``|1|salt|hash``, HMAC-SHA1 of the name);
- ``*`` and ``?`` wildcards, and ``!`` negation (a negated match rules the line out);
- ``@revoked`` keys are refused wherever they appear, ``@cert-authority`` lines are skipped
  (InnoTune does not verify host certificates) and noted;
- anything it cannot read is skipped and noted, never fatal.

Accepted keys go to InnoTune's own file only; the user's ``~/.ssh/known_hosts`` is never
written.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.domain.errors import HostKeyChanged, HostKeyRevoked, HostKeyUnknown

if TYPE_CHECKING:  # paramiko loads only with an SSH connection (app/remote/sshlib.py)
    import paramiko

# Key type names as ``ssh-keygen -lf`` prints them, in its closing parentheses.
_TYPE_NAMES = {
    "ssh-ed25519": "ED25519",
    "ssh-rsa": "RSA",
    "rsa-sha2-256": "RSA",
    "rsa-sha2-512": "RSA",
    "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA",
    "ecdsa-sha2-nistp521": "ECDSA",
    "ssh-dss": "DSA",
    "sk-ssh-ed25519@openssh.com": "ED25519-SK",
    "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
}

_MARKERS = ("@revoked", "@cert-authority")


def key_type_name(key_type: str) -> str:
    """The short type name ``ssh-keygen -lf`` shows, e.g. ``ssh-ed25519`` -> ``ED25519``."""
    if key_type in _TYPE_NAMES:
        return _TYPE_NAMES[key_type]
    if key_type.startswith("ecdsa-sha2-"):
        return "ECDSA"
    return key_type.upper()


def fingerprint_of_blob(blob: bytes) -> str:
    """``SHA256:<base64 without padding>`` of a public key blob, as OpenSSH prints it."""
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


_own_file: Path | None = None


def use_own_file(path: Path | None) -> None:
    """Where InnoTune's own known-hosts file lives from now on in this process.

    The program's entry point passes the file in the platform's data directory (Qt's
    QStandardPaths, which this layer may not import); ``None`` restores the XDG default.
    """
    global _own_file
    _own_file = path


def default_own_file() -> Path:
    """InnoTune's own known-hosts file: as set by ``use_own_file``, else the XDG place.

    The XDG place is ``$XDG_DATA_HOME/InnoTune/known_hosts``.
    """
    if _own_file is not None:
        return _own_file
    data_home = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value must be ignored.
    base = Path(data_home) if data_home.startswith("/") else Path.home() / ".local" / "share"
    return base / "InnoTune" / "known_hosts"


def host_names(host: str, port: int) -> list[str]:
    """The names a key for ``host:port`` is recorded under (``[host]:port`` off port 22)."""
    return [host if port == 22 else f"[{host}]:{port}"]


@dataclass(frozen=True)
class KnownHost:
    """One usable known_hosts line."""

    marker: str  # "", "@revoked" or "@cert-authority"
    patterns: tuple[str, ...]
    key_type: str
    blob: bytes
    source: str
    lineno: int

    @property
    def fingerprint(self) -> str:
        """The key's SHA256 fingerprint."""
        return fingerprint_of_blob(self.blob)

    @property
    def where(self) -> str:
        """``file:line`` of the entry."""
        return f"{self.source}:{self.lineno}"

    def matches(self, names: Iterable[str]) -> bool:
        """True when any of ``names`` matches this line's host field (negations win)."""
        return any(host_field_matches(self.patterns, name) for name in names)


@dataclass
class ParsedFile:
    """The entries of one known_hosts file and what was skipped, line by line."""

    entries: list[KnownHost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    # OpenSSH patterns know only * and ?; everything else (brackets included) is literal.
    parts = []
    for ch in pattern:
        if ch == "*":
            parts.append(".*")
        elif ch == "?":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def _hashed_matches(entry: str, name: str) -> bool:
    # |1|base64(salt)|base64(HMAC-SHA1(salt, name))
    parts = entry.split("|")
    if len(parts) != 4 or parts[1] != "1":
        return False
    try:
        salt = base64.b64decode(parts[2], validate=True)
        want = base64.b64decode(parts[3], validate=True)
    except (binascii.Error, ValueError):
        return False
    got = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return hmac.compare_digest(got, want)


def host_field_matches(patterns: Iterable[str], name: str) -> bool:
    """Match ``name`` against a known_hosts host field the way OpenSSH's match_hostname does.

    A negated pattern (``!pattern``) that matches rules the whole line out, whatever else
    matches; otherwise any positive match counts.
    """
    positive = False
    for raw in patterns:
        if not raw:
            continue
        if raw.startswith("|"):
            if _hashed_matches(raw, name):
                positive = True
            continue
        negated = raw.startswith("!")
        pattern = raw[1:] if negated else raw
        if _pattern_regex(pattern).fullmatch(name):
            if negated:
                return False
            positive = True
    return positive


def parse_known_hosts(text: str, source: str = "known_hosts") -> ParsedFile:
    """Parse known_hosts text; bad lines become notes, never exceptions."""
    parsed = ParsedFile()
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.strip().split()
        if not fields or fields[0].startswith("#"):
            continue
        marker = ""
        if fields[0].startswith("@"):
            marker = fields[0].lower()
            if marker not in _MARKERS:
                parsed.notes.append(f"{source}:{lineno}: unknown marker {fields[0]!r}, skipped")
                continue
            fields = fields[1:]
        if len(fields) < 3:
            parsed.notes.append(f"{source}:{lineno}: not a known_hosts line, skipped")
            continue
        hosts, key_type, key_b64 = fields[0], fields[1], fields[2]
        try:
            blob = base64.b64decode(key_b64, validate=True)
        except (binascii.Error, ValueError):
            parsed.notes.append(f"{source}:{lineno}: the key is not valid base64, skipped")
            continue
        if _blob_type(blob) != key_type:
            parsed.notes.append(f"{source}:{lineno}: key data does not match {key_type!r}, skipped")
            continue
        if marker == "@cert-authority":
            # We do not verify host certificates; a CA line neither trusts nor refuses a key.
            parsed.notes.append(
                f"{source}:{lineno}: @cert-authority line skipped (host certificates are "
                "not checked by InnoTune; accept the host's own key instead)"
            )
            continue
        entry = KnownHost(marker, tuple(hosts.split(",")), key_type, blob, source, lineno)
        parsed.entries.append(entry)
    return parsed


def _blob_type(blob: bytes) -> str | None:
    # A public key blob starts with its type as an SSH string: uint32 length, then the name.
    if len(blob) < 4:
        return None
    size = int.from_bytes(blob[:4], "big")
    if size > 64 or len(blob) < 4 + size:
        return None
    try:
        return blob[4 : 4 + size].decode("ascii")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True)
class OfferedKey:
    """The host key a server offered, reduced to what the decision needs."""

    key_type: str  # ssh wire name, e.g. ssh-ed25519
    blob: bytes

    @classmethod
    def from_pkey(cls, key: paramiko.PKey) -> OfferedKey:
        """Take type and blob from a paramiko key."""
        return cls(key.get_name(), key.asbytes())

    @property
    def fingerprint(self) -> str:
        """``SHA256:...`` exactly as ``ssh-keygen -lf`` prints it."""
        return fingerprint_of_blob(self.blob)

    @property
    def type_name(self) -> str:
        """``ED25519``, ``RSA``, ``ECDSA``..."""
        return key_type_name(self.key_type)

    def line_for(self, host: str, port: int) -> str:
        """The known_hosts line recording this key for ``host:port``."""
        b64 = base64.b64encode(self.blob).decode()
        return f"{host_names(host, port)[0]} {self.key_type} {b64}"


class HostKeyStore:
    """Every known-hosts source for one connection, and the trust decision.

    Sources, all read with our own parser: the system-wide ``/etc/ssh/ssh_known_hosts``,
    the user's ``~/.ssh/known_hosts``, an optional extra file (``--known-hosts``), and
    InnoTune's own file (the only one ever written).
    """

    def __init__(
        self,
        own_file: Path | None = None,
        extra_file: Path | None = None,
        user_file: Path | None = None,
        system_file: Path | None = Path("/etc/ssh/ssh_known_hosts"),
    ) -> None:
        self.own_file = own_file or default_own_file()
        self.extra_file = extra_file
        self.user_file = user_file or Path.home() / ".ssh" / "known_hosts"
        self.system_file = system_file
        self.notes: list[str] = []

    def sources(self) -> list[Path]:
        """The files consulted, in order."""
        files = [self.system_file] if self.system_file is not None else []
        files.append(self.user_file)
        if self.extra_file is not None:
            files.append(self.extra_file)
        files.append(self.own_file)
        return files

    def entries(self) -> list[KnownHost]:
        """All usable entries of all sources; a missing file is simply empty."""
        found: list[KnownHost] = []
        self.notes = []
        for path in self.sources():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                continue
            except OSError as exc:
                self.notes.append(f"{path}: cannot be read ({exc.strerror}), ignored")
                continue
            parsed = parse_known_hosts(text, str(path))
            found.extend(parsed.entries)
            self.notes.extend(parsed.notes)
        return found

    def known_types(self, host: str, port: int) -> list[str]:
        """Key types on record for ``host:port``, so the client can ask for one of them first."""
        names = host_names(host, port)
        types: list[str] = []
        for entry in self.entries():
            if not entry.marker and entry.matches(names) and entry.key_type not in types:
                types.append(entry.key_type)
        return types

    def check(
        self, host: str, port: int, key: OfferedKey, accept_fingerprint: str | None = None
    ) -> str:
        """Decide whether ``key`` may be trusted for ``host:port``.

        Returns:
            "known" when a source records exactly this key, "accepted" when it was unknown and
            matched ``accept_fingerprint`` (it is then stored in InnoTune's own file).

        Raises:
            HostKeyRevoked: the key is marked ``@revoked`` in any source, for any host.
            HostKeyChanged: a different key is on record for this host.
            HostKeyUnknown: nothing is on record and the caller did not accept this key.
        """
        names = host_names(host, port)
        label = names[0]
        entries = self.entries()
        for entry in entries:
            # OpenSSH: a revoked key "must not ever be accepted", so the host field is moot.
            if entry.marker == "@revoked" and entry.blob == key.blob:
                raise HostKeyRevoked(
                    f"The host key of {label} ({key.type_name} {key.fingerprint}) is marked "
                    f"@revoked in {entry.where}.",
                    "Do not connect. Ask the server's administrator for the new host key.",
                )
        on_record = [e for e in entries if not e.marker and e.matches(names)]
        if any(e.blob == key.blob for e in on_record):
            return "known"
        if on_record:
            old = next((e for e in on_record if e.key_type == key.key_type), on_record[0])
            raise HostKeyChanged(
                label,
                f"{key_type_name(old.key_type)} {old.fingerprint} ({old.where})",
                f"{key.type_name} {key.fingerprint}",
            )
        if accept_fingerprint is not None and accept_fingerprint.strip() == key.fingerprint:
            self.remember(key.line_for(host, port))
            return "accepted"
        raise HostKeyUnknown(label, key.type_name, key.fingerprint, key.line_for(host, port))

    def remember(self, line: str) -> None:
        """Append ``line`` to InnoTune's own file atomically (temp file, fsync, rename)."""
        path = self.own_file
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = path.with_name(f".{path.name}.lock")
        with open(lock_path, "a") as lock:
            # Two workers accepting keys at once must not lose each other's line.
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                old = path.read_bytes()
            except FileNotFoundError:
                old = b""
            if old and not old.endswith(b"\n"):
                old += b"\n"
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, old + line.strip().encode() + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def split_host_port(name: str) -> tuple[str, int]:
    """``[host]:port`` -> (host, port); a bare name -> (name, 22)."""
    m = re.fullmatch(r"\[(.+)\]:(\d+)", name)
    if m:
        return m.group(1), int(m.group(2))
    return name, 22
