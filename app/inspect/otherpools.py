"""The buffer pools of the other database servers on the host, read without logging in.

The memory budget counts every other mysqld/mariadbd at what it may take
(:func:`app.planner.budget.other_servers`). Its pool is set on its command line (seen in
/proc) or in its option files. For those, the server's own binary says what its files give:
``BINARY [--defaults-file=F] [--defaults-extra-file=E] [--defaults-group-suffix=S]
--print-defaults``, with the switches its process was started with, so it reads the same
files and groups as that server. A server in a container is asked inside it, through its
engine's exec. Only the pool's and max_connections' arguments come back: the rest of the
files (passwords among them) never leave the host.

A binary that is not root's, or that others may write, is not run (inspection runs it as
root). What could not be read is said so; the budget then counts that server's resident
memory.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from app.domain.instance import ServerInstance
from app.optionfiles.effective import parse_argv
from app.optionfiles.serverview import defaults_switches
from app.remote.container import ContainerTransport
from app.remote.transport import CommandResult, Pending, Transport, submit

# $1 = the server's binary, then its option-file switches. Prints the pool's arguments as the
# files give them, in order (the last wins), then @@read; exits non-zero when not run.
POOL_SCRIPT = r"""
bin=$1
shift
if [ ! -x "$bin" ]; then
    echo "innotune: $bin cannot be run here" >&2
    exit 4
fi
owner=$(stat -L -c %u -- "$bin" 2>/dev/null)
mode=$(stat -L -c %a -- "$bin" 2>/dev/null)
case "$owner:$mode" in
0:*[2367]?|0:*[2367]|0:) echo "innotune: $bin may be written by others: not run" >&2; exit 4 ;;
0:*) ;;
*) echo "innotune: $bin is not root's: not run" >&2; exit 4 ;;
esac
out=$("$bin" "$@" --print-defaults) || exit 3
pool='^--(loose[-_])?innodb[-_]buffer[-_]pool[-_]size='
conns='^--(loose[-_])?max[-_]connections='
printf '%s\n' "$out" | tr ' ' '\n' | grep -i -E -e "$pool" -e "$conns" || true
echo "@@read"
"""

_POOL = re.compile(r"^--(?:loose[-_])?innodb[-_]buffer[-_]pool[-_]size=(\S*)$", re.IGNORECASE)
_CONNECTIONS = re.compile(r"^--(?:loose[-_])?max[-_]connections=(\S*)$", re.IGNORECASE)


def pool_argv(instance: ServerInstance) -> list[str] | None:
    """The command that prints what ``instance``'s option files set its pool to.

    None when its files need no reading (``--no-defaults``) or its binary is not known.
    """
    cmdline = parse_argv(instance.argv or (instance.binary,))
    if cmdline.no_defaults or not instance.binary.startswith("/"):
        return None
    if instance.defaults_file and not cmdline.defaults_file:
        cmdline = dataclasses.replace(cmdline, defaults_file=instance.defaults_file)
    return ["sh", "-c", POOL_SCRIPT, "sh", instance.binary, *defaults_switches(cmdline)]


def parse_pool(out: str) -> tuple[bool, str | None]:
    """(read, the pool the files set, the last one winning) from :data:`POOL_SCRIPT`'s output."""
    pool = None
    read = False
    for line in out.splitlines():
        line = line.strip()
        if line == "@@read":
            read = True
        elif m := _POOL.match(line):
            pool = m[1] or None
    return read, pool


def parse_connections(out: str) -> str | None:
    """The max_connections the files set (the last one winning), from the same output."""
    found = None
    for line in out.splitlines():
        if m := _CONNECTIONS.match(line.strip()):
            found = m[1] or None
    return found


def start_reading(
    transport: Transport, instances: Sequence[ServerInstance], chosen: ServerInstance, sudo: bool
) -> list[tuple[ServerInstance, Pending | None]]:
    """Start reading the pools of every instance but ``chosen`` (none for a lone server)."""
    started: list[tuple[ServerInstance, Pending | None]] = []
    for inst in instances:
        argv = pool_argv(inst)
        if inst.pid == chosen.pid:
            started.append((inst, None))
        elif argv is None:
            # --no-defaults: no file sets its pool (nothing to read); else nothing to run.
            files_read = bool(inst.argv) and parse_argv(inst.argv).no_defaults
            started.append((dataclasses.replace(inst, files_read=files_read), None))
        else:
            where: Transport = transport
            if inst.container is not None:
                where = ContainerTransport(transport, inst.container, sudo=sudo)
            started.append((inst, submit(where, argv, sudo=sudo, timeout=20)))
    return started


def finish_reading(started: list[tuple[ServerInstance, Pending | None]]) -> list[ServerInstance]:
    """The instances with the pools their option files set, where they were read."""
    done: list[ServerInstance] = []
    for inst, pending in started:
        if pending is None:
            done.append(inst)
            continue
        try:
            result: CommandResult = pending.result()
        except Exception as exc:  # noqa: BLE001 - a fact not read, not a failed inspection
            done.append(_unread(inst, str(exc)))
            continue
        read, pool = parse_pool(result.out) if result.ok else (False, None)
        if read:
            conns = parse_connections(result.out)
            done.append(
                dataclasses.replace(inst, files_pool=pool, files_read=True, files_connections=conns)
            )
        else:
            why = (result.err.strip().splitlines() or [f"exit status {result.exit_status}"])[-1]
            done.append(_unread(inst, why))
    return done


def _unread(inst: ServerInstance, why: str) -> ServerInstance:
    note = f"its option files were not read for its buffer pool: {why}"
    return dataclasses.replace(inst, notes=(*inst.notes, note))
