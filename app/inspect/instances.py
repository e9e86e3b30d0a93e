"""Finding the database server instances running on a host, from /proc.

One script lists every mysqld/mariadbd process with its arguments, parent,
cgroup and socket inodes, plus the kernel's tables of listening sockets; the
parser joins them. Run under sudo the socket inodes are visible; without it the
command-line arguments are the fallback.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.domain.container import Container, StoppedContainer
from app.domain.errors import InnoTuneError
from app.domain.instance import ServerInstance
from app.inspect.containers import CONTAINERS_SCRIPT, owner, parse_containers
from app.remote.transport import Transport

SERVER_NAMES = ("mysqld", "mariadbd")

FIND_SCRIPT = (
    r"""
self=$(readlink /proc/$$/ns/pid 2>/dev/null)
echo "@@self $self"
nl='
'
socks=
inner=
inner_podman=
for p in /proc/[0-9]*; do
    { read -r name < "$p/comm"; } 2>/dev/null || continue
    case "$name" in mysqld|mariadbd) ;; *) continue ;; esac
    pid=${p#/proc/}
    echo "@@pid $pid"
    echo "@@exe $(readlink "$p/exe" 2>/dev/null)"
    args=$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null)
    [ -n "$args" ] && printf '%s\n' "$args" | sed 's/^/@@arg /'
    socks="$socks$nl$args"
    st= pp=
    while read -r key value rest; do
        case "$key" in
            PPid:) st="$st$key $value "; pp=$value ;;
            Uid:) st="$st$key $value " ;;
        esac
    done < "$p/status" 2>/dev/null
    echo "@@status $st"
    parent=
    [ -n "$pp" ] && { read -r parent < "/proc/$pp/comm"; } 2>/dev/null
    echo "@@parent $parent"
    ns=$(readlink "$p/ns/pid" 2>/dev/null)
    echo "@@pidns $ns"
    if [ -n "$ns" ] && [ "$ns" != "$self" ]; then
        inner=1
        grep -q libpod "$p/cgroup" 2>/dev/null && inner_podman=1
    fi
    sed 's/^/@@cgroup /' "$p/cgroup" 2>/dev/null
    ls -l "$p/fd/" 2>/dev/null | sed -n 's/.* -> socket:\[\([0-9]*\)\]$/@@inode \1/p'
done
echo "@@unix"
cat /proc/net/unix 2>/dev/null
echo "@@tcp"
cat /proc/net/tcp /proc/net/tcp6 2>/dev/null
echo "@@users"
getent passwd 2>/dev/null | cut -d: -f1,3
echo "@@initd"
ls /etc/init.d 2>/dev/null
echo "@@present"
{
    awk 'NR > 1 && $4 ~ /10000$/ && NF >= 8 { print $8 }' /proc/net/unix 2>/dev/null
    printf '%s\n' "$socks" | sed -n 's/^--socket=//p'
} | while IFS= read -r s; do [ -n "$s" ] && [ -S "$s" ] && printf '%s\n' "$s"; done
"""
    + CONTAINERS_SCRIPT
    + """
echo "@@end"
"""
)


@dataclass
class _Proc:
    pid: int
    exe: str = ""
    args: list[str] | None = None
    uid: int | None = None
    parent: str = ""
    cgroups: list[str] | None = None
    inodes: set[str] | None = None
    pidns: str = ""


def _option(args: list[str], name: str) -> str | None:
    value = None
    for arg in args:
        for prefix in (f"--{name}=", f"--{name.replace('_', '-')}="):
            if arg.startswith(prefix):
                value = arg[len(prefix) :]
    return value


def parse_instances(text: str) -> list[ServerInstance]:
    """Turn the output of :data:`FIND_SCRIPT` into instances (pure)."""
    procs: list[_Proc] = []
    unix: dict[str, str] = {}
    tcp: dict[str, int] = {}
    users: dict[int, str] = {}
    initd: set[str] = set()
    section = "procs"
    own_ns = ""
    for line in text.splitlines():
        if line in ("@@unix", "@@tcp", "@@users", "@@initd", "@@present", "@@containers", "@@end"):
            section = line[2:]
            continue
        if section == "procs":
            tag, _, value = line.partition(" ")
            if tag == "@@self":
                own_ns = value.strip()
            elif tag == "@@pid" and value.isdigit():
                procs.append(_Proc(int(value), args=[], cgroups=[], inodes=set()))
            elif not procs:
                continue
            elif tag == "@@exe":
                procs[-1].exe = value.removesuffix(" (deleted)")
            elif tag == "@@arg":
                assert procs[-1].args is not None
                procs[-1].args.append(value)
            elif tag == "@@status":
                parts = value.split()
                if "Uid:" in parts:
                    procs[-1].uid = int(parts[parts.index("Uid:") + 1])
            elif tag == "@@parent":
                procs[-1].parent = value.strip()
            elif tag == "@@pidns":
                procs[-1].pidns = value.strip()
            elif tag == "@@cgroup":
                assert procs[-1].cgroups is not None
                procs[-1].cgroups.append(value)
            elif tag == "@@inode":
                assert procs[-1].inodes is not None
                procs[-1].inodes.add(value)
        elif section == "unix":
            fields = line.split()
            # Num RefCount Protocol Flags Type St Inode [Path]; listening: Flags has 00010000
            if len(fields) >= 8 and fields[3].endswith("10000") and fields[0] != "Num":
                unix[fields[6]] = fields[7]
        elif section == "tcp":
            fields = line.split()
            if len(fields) >= 10 and fields[3] == "0A" and ":" in fields[1]:
                tcp[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
        elif section == "users":
            name, _, uid = line.partition(":")
            if uid.isdigit():
                users[int(uid)] = name
        elif section == "initd":
            initd.add(line.strip())
    # A server in another pid namespace runs in a container: its socket, files and service
    # are the container's (the same /run/mysqld/mysqld.sock may be two sockets), so it is
    # reached through its engine (exec), never through this host's sockets. One whose
    # container no engine here names (LXC, a test host's own systemd) is left out. (Not the
    # mount namespace: systemd gives hardened units such as mariadb.service one of their own.)
    containers = parse_containers(text)
    found: list[ServerInstance] = []
    for p in procs:
        if own_ns and p.pidns and p.pidns != own_ns:
            container = owner(p.cgroups or [], containers)
            if container is not None:
                found.append(_contained(p, container))
        else:
            found.append(_instance(p, unix, tcp, users, initd))
    return found


def _contained(p: _Proc, container: Container) -> ServerInstance:
    """A server in a container: reached and restarted through its engine."""
    args = p.args or []
    inner = dataclasses.replace(container, server_uid=p.uid)
    return ServerInstance(
        pid=p.pid,
        binary=p.exe or (args[0] if args else ""),
        argv=tuple(args),
        sockets=(),
        ports=(),
        defaults_file=_option(args[:2], "defaults-file"),
        datadir=_option(args, "datadir"),
        started_by="container",
        service=container.name,
        container=inner,
    )


def _instance(
    p: _Proc, unix: dict[str, str], tcp: dict[str, int], users: dict[int, str], initd: set[str]
) -> ServerInstance:
    args = p.args or []
    inodes = p.inodes or set()
    sockets = sorted({unix[i] for i in inodes if i in unix})
    ports = sorted({tcp[i] for i in inodes if i in tcp})
    notes: list[str] = []
    if not inodes:
        notes.append("socket inodes not readable (needs root); used command-line arguments")
        if sock := _option(args, "socket"):
            sockets = [sock]
        if (port := _option(args, "port")) and port.isdigit():
            ports = [int(port)]
    started_by, service = "manual", None
    for cg in p.cgroups or []:
        unit = cg.rsplit("/", 1)[-1]
        if unit.endswith(".service") and "system.slice" in cg:
            started_by, service = "systemd", unit
    if started_by == "manual" and p.parent == "mysqld_safe":
        started_by = "mysqld_safe"
        for script in ("mariadb", "mysql"):
            if script in initd:
                started_by, service = "sysv", script
                break
    user = users.get(p.uid, str(p.uid)) if p.uid is not None else ""
    return ServerInstance(
        pid=p.pid,
        binary=p.exe or (args[0] if args else ""),
        argv=tuple(args),
        user=_option(args, "user") or user,
        sockets=tuple(sockets),
        ports=tuple(ports),
        defaults_file=_option(args[:2], "defaults-file"),
        datadir=_option(args, "datadir"),
        started_by=started_by,
        service=service,
        notes=tuple(notes),
    )


def present_sockets(text: str) -> set[str]:
    """The listening sockets and the servers' --socket paths that exist as sockets (pure)."""
    found: set[str] = set()
    inside = False
    for line in text.splitlines():
        if line.startswith("@@"):
            inside = line == "@@present"
        elif inside and line:
            found.add(line)
    return found


FIND_ARGV = ("sh", "-c", FIND_SCRIPT)


def find_instances(transport: Transport, *, sudo: bool = True) -> list[ServerInstance]:
    """Every mysqld/mariadbd instance on the host, with its sockets and ports."""
    result = transport.run(list(FIND_ARGV), sudo=sudo, timeout=30).check()
    return parse_instances(result.out)


class InstanceChoiceError(InnoTuneError):
    """No instance, several without a choice, or a choice that matches none."""


def choose_instance(
    instances: list[ServerInstance],
    spec: str | None,
    stopped: Sequence[StoppedContainer] = (),
) -> ServerInstance:
    """Pick the instance named by ``spec`` (a socket path, a port, a pid or a container's name).

    Without ``spec``, the only one. ``stopped``: the host's stopped containers, so that one
    asked for by name is named as stopped, with how to start it.
    """
    halted = next((c for c in stopped if spec is not None and c.name == spec.strip()), None)
    if halted is not None and not any(
        i.container is not None and i.container.name == halted.name for i in instances
    ):
        start = shlex.join(halted.start_argv)
        raise InstanceChoiceError(
            f"The {halted.engine} container {halted.name} is stopped ({halted.status}).",
            f"Start it with: {start}, then try again.",
        )
    if not instances:
        raise InstanceChoiceError(
            "No MySQL or MariaDB server is running on this host.",
            "Start the server (for example: sudo service mariadb start), then try again.",
        )
    if spec is None:
        if len(instances) == 1:
            return instances[0]
        listing = "; ".join(i.label for i in instances)
        raise InstanceChoiceError(
            f"This host runs {len(instances)} server instances: {listing}.",
            "Choose one with --instance SOCKET|PORT|PID|CONTAINER.",
            "Choose one in the list below, or type its socket, port, pid or container name in "
            "the Server instance box.",
        )
    spec = spec.strip()
    for inst in instances:
        if spec in inst.sockets:
            return inst
        if inst.container is not None and spec in (inst.container.name, inst.container.id):
            return inst
    if spec.isdigit():
        number = int(spec)
        for inst in instances:
            if number in inst.ports:
                return inst
        for inst in instances:
            if number == inst.pid:
                return inst
    blind = [i for i in instances if any("needs root" in n for n in i.notes)]
    if blind and (spec.isdigit() or spec.startswith("/")):
        # Without sudo the servers' sockets are invisible; take the endpoint as given.
        note = "endpoint given as the instance; not matched to a process (sudo would show it)"
        return ServerInstance(
            pid=blind[0].pid if len(blind) == 1 else 0,
            binary=blind[0].binary,
            argv=blind[0].argv if len(blind) == 1 else (),
            sockets=(spec,) if spec.startswith("/") else (),
            ports=(int(spec),) if spec.isdigit() else (),
            notes=(note,),
        )
    listing = "; ".join(i.label for i in instances)
    raise InstanceChoiceError(
        f"No server instance matches {shlex.quote(spec)}.",
        f"Running here: {listing}.",
    )


def find_again(instances: list[ServerInstance], old: ServerInstance) -> ServerInstance | None:
    """The instance among ``instances`` that is the server ``old`` named, after a restart.

    A restarted server is a new process (a new pid); what stays is its container, its
    socket, its port, its service unit or script, in that order of trust. None when no
    instance (or more than one) matches: the caller keeps what it had.
    """
    container = old.container
    if container is not None:
        named = [i for i in instances if i.container and i.container.name == container.name]
        return named[0] if len(named) == 1 else None
    tests: list[Callable[[ServerInstance], bool]] = [
        lambda i: bool(set(i.sockets) & set(old.sockets)),
        lambda i: bool(set(i.ports) & set(old.ports)),
        lambda i: old.pid != 0 and i.pid == old.pid,
        lambda i: (
            old.service is not None
            and (i.started_by, i.service, i.datadir) == (old.started_by, old.service, old.datadir)
        ),
    ]
    for test in tests:
        matches = [i for i in instances if test(i)]
        if len(matches) == 1:
            return matches[0]
    return None
