"""Gather the host's OS facts through a Transport in one command run.

One POSIX sh script reads /proc and /sys (every read guarded, so a missing file is
just absent from the output) and prints sections that start with a marker line; the
pure parsers in :mod:`app.inspect.host_parse` turn that text into facts. Nothing here
needs bash, GNU tools or root: it runs under dash and BusyBox ash, and falls back to
shell builtins when grep or awk are missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.facts import OsFacts
from app.inspect.host_parse import HostParseError, NotLinuxError, parse_host_output
from app.remote.transport import CommandResult, Transport

MARKER = "@@innotune"
__all__ = [
    "HOST_SCRIPT",
    "HostParseError",
    "NotLinuxError",
    "gather_host",
    "host_argv",
    "host_facts_from",
]

# $@ = the directories whose write paths we want (datadir, redo log, binlog, tmpdir).
# Reads go through `attrs`, which prints "path:line" for each line of each readable file
# (one grep for hundreds of files, so the cost does not grow with forks per device), and
# "!unreadable path" for files that exist but cannot be read.
HOST_SCRIPT = r"""
LC_ALL=C
export LC_ALL
M=@@innotune
sec() { printf '\n%s %s\n' "$M" "$*"; }
attrs() {
    for f in "$@"; do
        if [ -e "$f" ] && [ ! -r "$f" ]; then printf '!unreadable %s\n' "$f"; fi
    done
    if command -v grep >/dev/null 2>&1; then
        grep -H '' "$@" 2>/dev/null
    else
        # cat, not the shell's read: read takes a byte at a time, and /proc/sys files
        # answer a read at a non-zero offset with end-of-file.
        for f in "$@"; do
            [ -r "$f" ] && v=$(cat "$f" 2>/dev/null) && printf '%s:%s\n' "$f" "$v"
        done
    fi
    return 0
}
have() { command -v "$1" >/dev/null 2>&1; }

sec uname
printf 'sysname=%s\n' "$(uname -s 2>/dev/null)"
printf 'release=%s\n' "$(uname -r 2>/dev/null)"
printf 'machine=%s\n' "$(uname -m 2>/dev/null)"
printf 'nodename=%s\n' "$(uname -n 2>/dev/null)"
case "$(uname -s 2>/dev/null)" in Linux) ;; *) sec end; exit 0 ;; esac

sec os-release
cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release 2>/dev/null

sec cpuinfo
if have grep; then
    k='processor|model name|physical id|core id|Hardware|Processor|cpu model'
    grep -E "^($k)[[:space:]]*:" /proc/cpuinfo 2>/dev/null
    printf 'hypervisor-flag-lines: %s\n' \
        "$(grep -c -E '^flags.*[[:space:]]hypervisor([[:space:]]|$)' /proc/cpuinfo 2>/dev/null)"
else
    cat /proc/cpuinfo 2>/dev/null
fi

sec meminfo
cat /proc/meminfo 2>/dev/null

sec files
attrs /sys/devices/system/cpu/cpu[0-9]*/topology/core_id \
    /sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id \
    /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
    /proc/sys/vm/swappiness /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio \
    /proc/sys/vm/dirty_bytes /proc/sys/vm/dirty_background_bytes \
    /sys/hypervisor/type /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name \
    /sys/class/scsi_host/host*/proc_name

sec virt
if have systemd-detect-virt; then
    printf 'vm=%s\n' "$(systemd-detect-virt --vm 2>/dev/null)"
    printf 'container=%s\n' "$(systemd-detect-virt --container 2>/dev/null)"
fi
[ -e /.dockerenv ] && echo 'file=/.dockerenv'
[ -e /run/.containerenv ] && echo 'file=/run/.containerenv'
[ -e /proc/vz ] && [ ! -e /proc/bc ] && echo 'file=/proc/vz'
if [ -r /proc/1/environ ] && have tr; then
    { tr '\000' '\n' < /proc/1/environ | grep '^container=' | sed 's/^/env-/'; } 2>/dev/null
fi
if have grep; then
    grep -E 'docker|lxc|kubepods|libpod|containerd' /proc/1/cgroup 2>/dev/null | sed 's/^/cgroup=/'
fi

sec processes
if have awk; then
    cat /proc/[0-9]*/status 2>/dev/null | awk '
        /^Name:/ { sub(/^Name:[ \t]*/, ""); n = $0 }
        /^Pid:/ { p = $2 }
        /^VmRSS:/ { print p, $2, n }'
elif have ps; then
    ps -eo pid=,rss=,comm= 2>/dev/null
fi

sec mountinfo
cat /proc/self/mountinfo 2>/dev/null || { sec mounts; cat /proc/mounts 2>/dev/null; }

sec block-links
ls -l /sys/class/block/ 2>/dev/null

sec block-attrs
B=/sys/class/block
attrs $B/*/dev $B/*/size $B/*/partition $B/*/ro $B/*/removable \
    $B/*/queue/rotational $B/*/queue/scheduler $B/*/queue/nr_requests \
    $B/*/queue/read_ahead_kb $B/*/queue/write_cache \
    $B/*/device/model $B/*/device/vendor $B/*/device/serial $B/*/device/wwid \
    $B/*/device/transport $B/*/wwid $B/*/serial \
    $B/*/dm/name $B/*/dm/uuid $B/*/md/level $B/*/md/raid_disks $B/*/loop/backing_file \
    /sys/block/*/*/partition
for s in $B/*/slaves/*; do [ -e "$s" ] || [ -L "$s" ] && printf 'slave:%s\n' "$s"; done

# What root may change here: a write test is exact only as root (a read-only mount or a
# user namespace refuses even root), so the uid goes with it; test -w is a builtin.
sec capabilities
printf 'uid=%s\n' "$(id -u 2>/dev/null)"
for f in /proc/sys/vm/swappiness /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio \
    $B/*/queue/scheduler $B/*/queue/read_ahead_kb $B/*/queue/nr_requests; do
    [ -e "$f" ] || continue
    if [ -w "$f" ]; then printf 'w %s\n' "$f"; else printf 'ro %s\n' "$f"; fi
done
have stat && stat -c 'owner %u %n' /proc/sys/vm/dirty_ratio 2>/dev/null
if [ -e /run/udev/control ]; then echo 'udev-control=yes'; else echo 'udev-control=no'; fi
if [ -d /etc/udev/rules.d ]; then echo 'udev-rules-dir=yes'; else echo 'udev-rules-dir=no'; fi
if have udevadm; then echo 'udevadm=yes'; else echo 'udevadm=no'; fi

i=0
for d in "$@"; do
    sec "path $i"
    printf 'dir=%s\n' "$d"
    real=$(cd "$d" 2>/dev/null && pwd -P)
    printf 'real=%s\n' "$real"
    if [ -n "$real" ]; then
        df -P -k "$real" 2>/dev/null
        src=$(df -P -k "$real" 2>/dev/null | awk 'NR == 2 { print $1 }')
        case "$src" in
            /dev/*) printf 'srcdev=%s\n' "$(stat -L -c '%t:%T' "$src" 2>/dev/null)" ;;
        esac
    fi
    i=$((i + 1))
done
sec end
"""


def host_argv(directories: Sequence[str]) -> list[str]:
    """The argv that prints every OS section for ``directories`` (one command run)."""
    for d in directories:
        if not d.startswith("/"):
            raise ValueError(f"need an absolute directory, got {d!r}")
    return ["sh", "-c", HOST_SCRIPT, "innotune-inspect", *directories]


def gather_host(
    transport: Transport,
    directories: Sequence[str] = (),
    *,
    sudo: bool = False,
    timeout: float = 60.0,
) -> OsFacts:
    """Read the machine facts and the write path of each directory, in one command run.

    Args:
        transport: where to run.
        directories: absolute paths (datadir, log directories, tmpdir).
        sudo: run the script under sudo (only /proc/1/environ needs it; everything
            else is world-readable).
        timeout: seconds before the run is given up.

    Raises:
        NotLinuxError: the host is not Linux.
        CommandError: the shell itself could not be started.
    """
    result = transport.run(host_argv(directories), sudo=sudo, timeout=timeout)
    return host_facts_from(result, directories)


def host_facts_from(result: CommandResult, directories: Sequence[str]) -> OsFacts:
    """The OS facts in a run of :func:`host_argv` ``directories``.

    Raises:
        NotLinuxError: the host is not Linux.
        CommandError: the shell itself could not be started.
    """
    if not result.stdout.strip():
        result.check()
    return parse_host_output(result.out, directories, commands_run=1)
