"""Kernel settings: set live (the job writes ``/proc/sys``), kept in ``/etc/sysctl.d/``.

InnoTune's file is ``/etc/sysctl.d/99-innotune.conf`` unless a later name is needed.

Both ``systemd-sysctl`` and ``sysctl --system`` read the sysctl.d directories ordered by
file *name* across directories (an ``/etc`` file hides a same-named one in ``/usr/lib``),
and procps reads ``/etc/sysctl.conf`` after them all. InnoTune's file gets a name that
sorts after every file setting the same keys; a file that still wins (``/etc/sysctl.conf``,
or a tuned profile that re-applies its own values) is reported with its fix.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from app.describe.actions import (
    Action,
    ApplyError,
    FileWrite,
    Host,
    ValueChange,
    late_name,
    read_file_or_none,
)
from app.domain.plan import Change
from app.targetjob.values import sysctl_path

DIRS = (
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
)
SYSCTL_CONF = "/etc/sysctl.conf"
STEM = "innotune"
_KEY = re.compile(r"^[a-z0-9_]+([./][a-z0-9_-]+)+$")
_VALUE = re.compile(r"^[0-9A-Za-z_. -]+$")
HEADER = (
    b"# Written by InnoTune: kernel settings for the database server.\n"
    b"# Read at boot by systemd-sysctl (or sysctl --system); edit with care.\n"
)

_LIST = r"""
for d in "$@"; do
    for f in "$d"/*.conf; do
        [ -f "$f" ] || continue
        printf '%s\000' "$f"; cat -- "$f"; printf '\000'
    done
done
f=/etc/sysctl.conf
if [ -f "$f" ]; then printf '%s\000' "$f"; cat -- "$f"; printf '\000'; fi
if [ -f /etc/tuned/active_profile ]; then
    printf '%s\000' /etc/tuned/active_profile; cat /etc/tuned/active_profile; printf '\000'
fi
"""


def _norm(key: str) -> str:
    return key.strip().lstrip("-").replace("/", ".")


def parse_conf(data: bytes) -> dict[str, tuple[str, int]]:
    """``key → (value, line)`` of a sysctl.conf-style file (the last line for a key wins)."""
    out: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[_norm(key)] = (value.strip(), number)
    return out


def _scan(host: Host) -> tuple[dict[str, bytes], str | None]:
    """Every sysctl file in the boot-time order's directories, and the tuned profile."""
    assert host.transport is not None
    result = host.transport.run(["sh", "-c", _LIST, "sh", *DIRS], sudo=host.sudo)
    parts = result.stdout.split(b"\0")
    files: dict[str, bytes] = {}
    tuned = None
    for i in range(0, len(parts) - 1, 2):
        path = parts[i].decode("utf-8", "surrogateescape")
        if path == "/etc/tuned/active_profile":
            tuned = parts[i + 1].decode("utf-8", "replace").strip() or None
        else:
            files[path] = parts[i + 1]
    return files, tuned


def boot_order(files: dict[str, bytes]) -> list[str]:
    """The files in the order they are applied: by name across directories, then sysctl.conf."""
    by_name: dict[str, str] = {}
    for directory in DIRS:
        for path in files:
            if posixpath.dirname(path) == directory:
                by_name.setdefault(posixpath.basename(path), path)
    order = [by_name[name] for name in sorted(by_name, key=str.encode)]
    if SYSCTL_CONF in files:
        order.append(SYSCTL_CONF)
    return order


def render_conf(before: bytes | None, values: dict[str, str]) -> bytes:
    """InnoTune's file: earlier lines kept, our keys' lines replaced or added."""
    lines = (before or HEADER).decode("utf-8", "surrogateescape").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    done = set()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or "=" not in stripped:
            continue
        key = _norm(stripped.partition("=")[0])
        if key in values:
            lines[i] = f"{key} = {values[key]}\n"
            done.add(key)
    for key, value in values.items():
        if key not in done:
            lines.append(f"{key} = {value}\n")
    return "".join(lines).encode("utf-8", "surrogateescape")


def _check(change: Change) -> None:
    if change.target != "sysctl" or not _KEY.match(change.key):
        raise ApplyError(f"{change.id} is not a kernel setting InnoTune writes.")
    if not _VALUE.match(change.proposed):
        raise ApplyError(f"{change.key}: InnoTune does not write the value {change.proposed!r}.")


def describe(changes: Sequence[Change], host: Host) -> list[Action]:
    """The sysctl changes the job sets live and keeps in InnoTune's sysctl.d file (one Action).

    Raises:
        ApplyError: a bad key or value.
    """
    changes = [c for c in changes if c.target == "sysctl"]
    for change in changes:
        _check(change)
    if not changes:
        return []
    return [_describe(changes, host)]


def _describe(changes: Sequence[Change], host: Host) -> Action:
    ids = tuple(c.id for c in changes)
    values = {_norm(c.key): c.proposed for c in changes}
    caps = host.facts.os.machine.capabilities
    if caps.kernel_settings is False:
        # Inspection saw /proc/sys read-only: nothing is set, and no file keeps it.
        seen = caps.kernel_settings_seen or "root may not write it"
        return Action(
            "sysctl",
            ids,
            "kernel settings: not supported on this host",
            unsupported=tuple(
                f"{sysctl_path(key)} is read-only ({seen}): not supported on this host."
                for key in values
            ),
        )
    if not host.live:
        path = f"/etc/sysctl.d/99-{STEM}.conf"
        shown = tuple(
            ValueChange("sysctl", c.key, c.current, c.proposed, True, path, path=c.path)
            for c in changes
        )
        write = FileWrite(
            path,
            None,
            render_conf(None, values),
            "0644",
            "",
            "sysctl",
            note="shown as a new file: without a live host the current one could not be read",
            read=False,
        )
        return Action(
            "sysctl",
            ids,
            f"set live and kept in {path} (from facts)",
            files=(write,),
            values=shown,
            warnings=(
                "Without a live host, other sysctl files that may override these values "
                "could not be checked.",
            ),
        )
    files, tuned = _scan(host)
    order = boot_order(files)
    parsed = {path: parse_conf(files[path]) for path in order}
    ours = sorted(
        posixpath.basename(p)
        for p in files
        if posixpath.dirname(p) == "/etc/sysctl.d" and STEM in posixpath.basename(p)
    )
    setting_same = sorted(
        {
            posixpath.basename(p)
            for p in order
            if p != SYSCTL_CONF and STEM not in p and set(parsed[p]) & set(values)
        },
        key=str.encode,
    )
    fits = [n for n in ours if all(n.encode() > o.encode() for o in setting_same)]
    name = fits[-1] if fits else late_name(STEM, ".conf", setting_same)
    path = f"/etc/sysctl.d/{name}"
    before = read_file_or_none(host, path)
    after = render_conf(before, values)
    warnings = []
    for key, value in values.items():
        later = [
            p
            for p in order
            if key in parsed[p]
            and p != path
            and (p == SYSCTL_CONF or posixpath.basename(p).encode() > name.encode())
        ]
        for other in later:
            other_value, line = parsed[other][key]
            if other_value != value:
                warnings.append(
                    f"{key}: {other}:{line} sets {other_value} and is read after {path}, so it "
                    f"wins at boot. Remove that line (or set it to {value} there)."
                )
    if tuned:
        warnings.append(
            f"tuned is active (profile {tuned}); it may set its own values for "
            f"{', '.join(values)} when it starts. Check the profile's [sysctl] section."
        )
    rows = []
    assert host.transport is not None
    for change in changes:
        key = _norm(change.key)
        now = host.transport.run(["sysctl", "-n", key])
        current = now.out.strip() if now.ok else change.current
        rows.append(ValueChange("sysctl", key, current, values[key], True, path, path=change.path))
    write = FileWrite(path, before, after, "0644", "root:root", "sysctl")
    return Action(
        "sysctl",
        ids,
        f"set {' '.join(f'{k}={v}' for k, v in values.items())} live; keep them in {path}",
        files=(write,) if after != before else (),
        values=tuple(rows),
        warnings=tuple(warnings),
    )
