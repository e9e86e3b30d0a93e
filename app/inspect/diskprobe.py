"""The opt-in disk probe: synced 4 KiB writes per second and sequential write MB/s.

It measures the filesystem of a directory (the datadir's, for sizing io_capacity). It is
bounded (a few seconds, a few tens of MiB), writes only one hidden temporary file in that
directory, and always removes it (a shell trap covers errors and signals). It uses
python3 on the target when present (O_DSYNC writes, timed with a monotonic clock) and
GNU dd (``oflag=dsync`` / ``conv=fdatasync``) otherwise.
"""

from __future__ import annotations

from app.domain.errors import CommandError
from app.domain.facts import DiskProbe, Unknown
from app.remote.transport import Transport

# Runs on the target. $1 dir, $2 seconds per phase, $3 MiB for the sequential phase,
# $4 method ("auto", "python3" or "dd"). Prints "key=value" lines.
PROBE_SCRIPT = r"""
set -u
LC_ALL=C
export LC_ALL
dir=$1 secs=$2 mib=$3 method=$4
# The name is known and the traps are set before the file exists, so a signal at any
# moment leaves nothing behind; noclobber makes the creation fail rather than reuse a file.
# PIPE too: when the connection is closed under the probe (a cancel), the next echo into the
# gone channel would otherwise kill the shell before its EXIT trap runs.
tmp="$dir/.innotune-probe-$$"
trap 'rm -f -- "$tmp"' EXIT
trap 'rm -f -- "$tmp"; exit 130' INT TERM HUP PIPE
if ! (set -C; : > "$tmp") 2>/dev/null; then
    tmp=""
    echo "error=cannot create a file in $dir"
    exit 3
fi
if [ "$method" = auto ]; then
    if command -v python3 >/dev/null 2>&1; then method=python3; else method=dd; fi
fi
echo "method=$method"
if [ "$method" = python3 ]; then
    python3 -c '
import os, sys, time
path, secs, mib = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
region = 4 * 1024 * 1024
block = os.urandom(4096)
fd = os.open(path, os.O_WRONLY)
try:
    # Lay the region down first so the timed writes overwrite allocated blocks, the way
    # InnoDB rewrites its redo log, instead of measuring block allocation.
    os.write(fd, os.urandom(region))
    os.fsync(fd)
    os.close(fd)
    fd = os.open(path, os.O_WRONLY | os.O_DSYNC)
    n = 0
    start = time.monotonic()
    deadline = start + secs
    while n < 8192:  # at most 32 MiB written, in the same 4 MiB
        os.pwrite(fd, block, (n * 4096) % region)
        n += 1
        if n % 8 == 0 and time.monotonic() >= deadline:
            break
    elapsed = time.monotonic() - start
    print(f"sync_writes={n}")
    print(f"sync_seconds={elapsed:.6f}")
    os.close(fd)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    chunk = os.urandom(1024 * 1024)
    written = 0
    start = time.monotonic()
    deadline = start + secs
    while written < mib * 1024 * 1024:
        os.write(fd, chunk)
        written += len(chunk)
        if time.monotonic() >= deadline:
            break
    os.fsync(fd)
    elapsed = time.monotonic() - start
    print(f"seq_bytes={written}")
    print(f"seq_seconds={elapsed:.6f}")
finally:
    os.close(fd)
' "$tmp" "$secs" "$mib" || echo "error=python3 failed"
else
    # Lay down a 4 MiB region, time a short burst of synced writes into it, then repeat
    # 1024-write passes over the same region for about $secs seconds (at most 8 passes,
    # 32 MiB), so the file never grows past 4 MiB however fast the disk is.
    secs_of() { printf '%s\n' "$1" | sed -n 's/.* copied, \([0-9.e+-]*\) s.*/\1/p'; }
    dd if=/dev/zero of="$tmp" bs=1048576 count=4 conv=fdatasync 2>/dev/null
    out=$(dd if=/dev/zero of="$tmp" bs=4096 count=64 oflag=dsync conv=notrunc 2>&1) || {
        echo "error=dd oflag=dsync failed: $out" | head -n 1
        exit 4
    }
    passes=$(awk -v s="$(secs_of "$out")" -v t="$secs" 'BEGIN { if (s <= 0) s = 0.001;
        k = int(64 * t / s / 1024 + 0.999); if (k < 1) k = 1; if (k > 8) k = 8; print k }')
    j=0 total=0
    while [ "$j" -lt "$passes" ]; do
        out=$(dd if=/dev/zero of="$tmp" bs=4096 count=1024 oflag=dsync conv=notrunc 2>&1)
        total=$(awk -v a="$total" -v b="$(secs_of "$out")" 'BEGIN { print a + b }')
        j=$((j + 1))
    done
    echo "sync_writes=$((passes * 1024))"
    echo "sync_seconds=$total"
    out=$(dd if=/dev/zero of="$tmp" bs=1048576 count="$mib" conv=fdatasync 2>&1)
    echo "seq_bytes=$((mib * 1048576))"
    echo "seq_seconds=$(secs_of "$out")"
fi
"""


def probe_argv(directory: str, seconds: float, mib: int, method: str) -> list[str]:
    """The argv that runs the probe in ``directory``."""
    if not directory.startswith("/"):
        raise ValueError(f"need an absolute directory, got {directory!r}")
    if method not in ("auto", "python3", "dd"):
        raise ValueError(f"unknown probe method {method!r}")
    return ["sh", "-c", PROBE_SCRIPT, "innotune-probe", directory, f"{seconds:g}", str(mib), method]


def parse_probe_output(directory: str, text: str) -> DiskProbe:
    """The probe's ``key=value`` lines → a DiskProbe (rates None when a phase failed)."""
    kv: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            kv.setdefault(key.strip(), value.strip())
    unknown: list[Unknown] = []
    if "error" in kv:
        unknown.append(Unknown("disk probe", kv["error"]))

    def number(key: str) -> float | None:
        try:
            return float(kv[key])
        except (KeyError, ValueError):
            return None

    sync_n, sync_s = number("sync_writes"), number("sync_seconds")
    seq_b, seq_s = number("seq_bytes"), number("seq_seconds")
    sync_rate = sync_n / sync_s if sync_n and sync_s else None
    seq_rate = seq_b / seq_s / 1e6 if seq_b and seq_s else None
    if sync_rate is None:
        unknown.append(Unknown("synced 4 KiB writes per second", "the sync phase gave no timing"))
    if seq_rate is None:
        unknown.append(Unknown("sequential write rate", "the sequential phase gave no timing"))
    written = int((sync_n or 0) * 4096 + (seq_b or 0))
    return DiskProbe(
        directory=directory,
        method=kv.get("method", "unknown"),
        sync_writes_per_s=sync_rate,
        seq_write_mb_s=seq_rate,
        bytes_written=written,
        seconds=(sync_s or 0.0) + (seq_s or 0.0),
        unknown=tuple(unknown),
    )


def probe_disk(
    transport: Transport,
    directory: str,
    *,
    seconds: float = 2.0,
    mib: int = 32,
    method: str = "auto",
    sudo: bool = False,
) -> DiskProbe:
    """Measure synced 4 KiB writes/s and sequential MB/s in ``directory``'s filesystem.

    Bounded: each of the two phases stops after about ``seconds``; the sync phase makes
    at most 8192 writes (32 MiB) over the same 4 MiB, the sequential phase writes at most
    ``mib`` MiB. The file never holds more than max(4, ``mib``) MiB and is removed on
    every exit path.

    Raises:
        CommandError: the probe could not create its file or run at all.
    """
    if not 0 < seconds <= 10:
        raise ValueError("seconds must be in (0, 10]")
    if not 1 <= mib <= 256:
        raise ValueError("mib must be in [1, 256]")
    result = transport.run(
        probe_argv(directory, seconds, mib, method),
        sudo=sudo,
        timeout=seconds * 6 + 30,
    )
    probe = parse_probe_output(directory, result.out)
    if not result.ok and probe.sync_writes_per_s is None and probe.seq_write_mb_s is None:
        reason = next((u.why for u in probe.unknown if u.what == "disk probe"), result.err.strip())
        raise CommandError(
            f"The disk probe in {directory} failed: {reason or 'no output'}",
            "Check that the directory exists and that the login (or sudo) may write there.",
            exit_status=result.exit_status,
            stderr=result.err,
        )
    return probe
