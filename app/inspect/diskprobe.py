"""The opt-in disk probe: page writes per second, synced 4 KiB writes per second, MB/s.

It measures the filesystem of a directory (the datadir's). Three phases:

* **page writes per second** — what ``innodb_io_capacity`` means (the manual: "approximately
  the number of I/O operations that the system can perform per second"): 16 KiB writes
  (InnoDB's default page size) at random places of a 16 MiB region from several writers at
  once (a queue depth, as the page cleaners and I/O threads keep several writes in flight),
  with O_DIRECT so the page cache does not absorb them, and one fsync at the end. ``fio``
  does it where the host has it, else python3 threads; where the filesystem refuses
  O_DIRECT (tmpfs, some ZFS) the writes are O_DSYNC and that is said;
* **synced 4 KiB writes per second** — one writer, each write waiting for the disk
  (O_DSYNC): the latency of a commit's flush, which the group-commit note uses;
* **sequential MB/s** — for time estimates.

It is bounded (each phase about ``seconds``; at most 32 MiB of synced writes, 32 MiB of
page writes per writer, ``mib`` MiB sequential), writes only one hidden temporary file in that
directory, and always removes it (a shell trap covers errors and signals). It uses
python3 on the target when present (timed with a monotonic clock) and GNU dd
(``oflag=dsync`` / ``conv=fdatasync``) otherwise.
"""

from __future__ import annotations

from app.domain.errors import CommandError
from app.domain.facts import DiskProbe, Unknown
from app.remote.transport import Transport

# Runs on the target. $1 dir, $2 seconds per phase, $3 MiB for the sequential phase,
# $4 method ("auto", "python3" or "dd"), $5 page method ("auto", "fio", "python3", "none"),
# $6 queue depth (writers) of the page phase. Prints "key=value" lines.
PROBE_SCRIPT = r"""
set -u
LC_ALL=C
export LC_ALL
dir=$1 secs=$2 mib=$3 method=$4 pages=$5 depth=$6
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
if [ "$pages" = auto ]; then
    if command -v fio >/dev/null 2>&1; then pages=fio
    elif command -v python3 >/dev/null 2>&1; then pages=python3
    else pages=none; fi
fi
if [ "$pages" = fio ]; then
    # At most 32 MiB per writer over one 16 MiB region, at most $secs seconds, one fsync at
    # the end; terse v3 field 49 is the write IOPS.
    out=$(fio --name=innotune --filename="$tmp" --rw=randwrite --bs=16k --direct=1 \
        --ioengine=psync --thread --numjobs="$depth" --group_reporting --size=16m \
        --io_size=32m --runtime="$secs" --end_fsync=1 --output-format=terse \
        --terse-version=3 2>&1)
    iops=$(printf '%s\n' "$out" | awk -F';' 'NF > 100 && $49 > 0 { print $49; exit }')
    if [ -n "$iops" ]; then
        echo "page_method=fio"
        echo "page_depth=$depth"
        echo "page_writes_per_s=$iops"
    elif command -v python3 >/dev/null 2>&1; then
        pages=python3
    else
        echo "page_error=fio failed: $(printf '%s' "$out" | tail -n 1)"
    fi
    : > "$tmp"
fi
if [ "$pages" = python3 ]; then
    python3 -c '
import mmap, os, random, sys, threading, time
path, secs, depth = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
page, region = 16384, 16 * 1024 * 1024
fd = os.open(path, os.O_WRONLY)
os.write(fd, os.urandom(region))  # lay the region down: overwrite, not allocate
os.fsync(fd)
os.close(fd)
buf = mmap.mmap(-1, page)  # page-aligned, as O_DIRECT needs
buf.write(os.urandom(page))
mode = "O_DIRECT"
try:
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    os.pwrite(fd, buf, 0)
except OSError:
    mode = "O_DSYNC"  # the filesystem refuses direct I/O: every write waits instead
    fd = os.open(path, os.O_WRONLY | os.O_DSYNC)
counts = [0] * depth
stop = time.monotonic() + secs
def writer(i):
    rnd, n = random.Random(i), 0
    while n < 2048 and time.monotonic() < stop:  # 32 MiB per writer at most
        os.pwrite(fd, buf, rnd.randrange(region // page) * page)
        n += 1
    counts[i] = n
threads = [threading.Thread(target=writer, args=(i,)) for i in range(depth)]
start = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
os.fsync(fd)
elapsed = time.monotonic() - start
os.close(fd)
print(f"page_method=python3 {mode}")
print(f"page_depth={depth}")
print(f"page_writes_per_s={sum(counts) / elapsed:.1f}")
print(f"page_bytes={sum(counts) * page}")
print(f"page_seconds={elapsed:.6f}")
' "$tmp" "$secs" "$depth" || echo "page_error=python3 failed"
    : > "$tmp"
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


#: Writers kept busy at once in the page phase (InnoDB keeps several page writes in flight).
QUEUE_DEPTH = 8


def probe_argv(
    directory: str,
    seconds: float,
    mib: int,
    method: str,
    pages: str = "auto",
    depth: int = QUEUE_DEPTH,
) -> list[str]:
    """The argv that runs the probe in ``directory``."""
    if not directory.startswith("/"):
        raise ValueError(f"need an absolute directory, got {directory!r}")
    if method not in ("auto", "python3", "dd"):
        raise ValueError(f"unknown probe method {method!r}")
    if pages not in ("auto", "fio", "python3", "none"):
        raise ValueError(f"unknown page-write method {pages!r}")
    if not 1 <= depth <= 64:
        raise ValueError("depth must be in [1, 64]")
    return [
        "sh",
        "-c",
        PROBE_SCRIPT,
        "innotune-probe",
        directory,
        f"{seconds:g}",
        str(mib),
        method,
        pages,
        str(depth),
    ]


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
    pages = number("page_writes_per_s")
    if "page_error" in kv:
        unknown.append(Unknown("page writes per second", kv["page_error"]))
    elif not pages and kv.get("page_method"):
        unknown.append(Unknown("page writes per second", "the page phase gave no rate"))
    page_b, page_s = number("page_bytes"), number("page_seconds")
    written = int((sync_n or 0) * 4096 + (seq_b or 0) + (page_b or 0))
    return DiskProbe(
        directory=directory,
        method=kv.get("method", "unknown"),
        sync_writes_per_s=sync_rate,
        seq_write_mb_s=seq_rate,
        bytes_written=written,
        seconds=(sync_s or 0.0) + (seq_s or 0.0) + (page_s or 0.0),
        unknown=tuple(unknown),
        page_writes_per_s=pages or None,
        page_queue_depth=int(number("page_depth") or 0),
        page_method=kv.get("page_method", ""),
    )


def probe_disk(
    transport: Transport,
    directory: str,
    *,
    seconds: float = 2.0,
    mib: int = 32,
    method: str = "auto",
    pages: str = "auto",
    depth: int = QUEUE_DEPTH,
    sudo: bool = False,
) -> DiskProbe:
    """Measure page writes/s, synced 4 KiB writes/s and sequential MB/s in ``directory``.

    Bounded: each of the three phases stops after about ``seconds``; the page phase makes
    at most 2048 writes of 16 KiB per writer over one 16 MiB region, the sync phase at most
    8192 writes (32 MiB) over the same 4 MiB, the sequential phase writes at most ``mib``
    MiB. The file never holds more than max(16, ``mib``) MiB and is removed on every exit
    path.

    Raises:
        CommandError: the probe could not create its file or run at all.
    """
    if not 0 < seconds <= 10:
        raise ValueError("seconds must be in (0, 10]")
    if not 1 <= mib <= 256:
        raise ValueError("mib must be in [1, 256]")
    result = transport.run(
        probe_argv(directory, seconds, mib, method, pages, depth),
        sudo=sudo,
        timeout=seconds * 9 + 30,
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
