"""Tear down what a test run left when its pytest process died (SIGSEGV, SIGKILL, a time limit).

The fixtures clean up after themselves when pytest lives to run their teardown. When it does
not, its booted hosts, private servers, mounts and loop devices would run on. So each run, at
its start (as root):

- moves itself into a cgroup of its own (``innotune-run-PID``): every process it starts,
  whatever its session or process group, is born there and can be found after pytest is gone;
- records itself in ``/run/innotune-tests/runs/PID.json`` (its pid, start time and the
  directories its processes, mounts and loop devices are named by);
- starts a supervisor (``python -m tests.hosts.reaper watch FILE``) in a session of its own,
  outside that cgroup, which waits on a pidfd for pytest to end and then tears down whatever
  is left: the booted hosts' cgroups (``cgroup.kill``), everything still in the run's cgroup,
  processes named by the run's directories, their mounts and loop devices, and the shared
  test accounts and Debian MariaDB when no other run still uses them.

If the supervisor dies too, the next run does the same for every record whose pytest is gone
(:func:`sweep_dead_runs`). Nothing of another live run is touched: its record's pid is alive.

The shared services (the Debian MariaDB and rsyslog, which concurrent runs share) are left
out of the cgroup kill; their own records say which runs use them and who started them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

RUNS = Path("/run/innotune-tests/runs")
# The hosts' cgroups: innotune-test-<host>-<pytest pid>-<port> (tests/hosts/debian_hosts.py).
HOST_CGROUP = re.compile(r"^innotune-test-[a-z]+-(\d+)-\d+$")
RUN_CGROUP = re.compile(r"^innotune-run-(\d+)$")
# Device nodes no test may change: mode 666, owned by root; the group may be root's or tty's.
DEVICES = {"/dev/null": ("root",), "/dev/zero": ("root",), "/dev/tty": ("root", "tty")}
# The supervisor's Popen, kept so that it is never collected (and warned about) while it runs.
_SUPERVISORS: list[subprocess.Popen[bytes]] = []


def cgroup2_root() -> Path | None:
    """This machine's cgroup2 hierarchy, or None."""
    for path in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if (path / "cgroup.procs").exists() and (path / "cgroup.controllers").exists():
            return path
    return None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None when it does not exist."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(record: dict[str, object]) -> bool:
    """True while the record's pytest still runs (the same process, not a reused pid)."""
    pid = int(str(record["pid"]))
    return start_ticks(pid) == record.get("start")


def other_live_runs() -> list[int]:
    """The pids of the other test runs on this machine that are still going."""
    found = []
    for path in RUNS.glob("*.json") if RUNS.is_dir() else []:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if int(record["pid"]) != os.getpid() and _alive(record):
            found.append(int(record["pid"]))
    return found


# -- a run's start ------------------------------------------------------------------------------


def begin_run(markers: Iterable[str]) -> Path:
    """Record this run, move it into its own cgroup, start its supervisor; the record's path."""
    RUNS.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    root = cgroup2_root()
    cgroup = root / f"innotune-run-{pid}" if root is not None else None
    record = {"pid": pid, "start": start_ticks(pid), "markers": sorted(set(markers)),
              "cgroup": str(cgroup) if cgroup else None}  # fmt: skip
    path = RUNS / f"{pid}.json"
    path.write_text(json.dumps(record))
    log = open(RUNS / f"{pid}.log", "ab")  # noqa: SIM115 - handed to the supervisor
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "tests.hosts.reaper", "watch", str(path)],
        cwd=Path(__file__).resolve().parents[2],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,  # a signal to pytest's process group does not reach it
    )
    log.close()
    _SUPERVISORS.append(supervisor)
    record["supervisor"] = supervisor.pid
    path.write_text(json.dumps(record))
    if cgroup is not None:
        # The supervisor was born in the old cgroup and stays there; pytest moves, and
        # everything it starts from now on is born in the run's cgroup.
        cgroup.mkdir(exist_ok=True)
        (cgroup / "cgroup.procs").write_text(str(pid))
    return path


def leave_shared(argv: list[str]) -> list[str]:
    """``argv`` run from this machine's root cgroup: for a service other runs share."""
    root = cgroup2_root()
    if root is None:
        return argv
    import shlex

    script = f"echo $$ > {shlex.quote(str(root / 'cgroup.procs'))} && exec {shlex.join(argv)}"
    return ["sh", "-c", script]


# -- tearing down -------------------------------------------------------------------------------


def shared_service_pids() -> set[int]:
    """The Debian MariaDB and rsyslogd, shared by the runs and handled by their own records.

    The server as its init script starts it: mysqld_safe and everything below it (mariadbd,
    and the ``logger`` that carries its error lines to syslog), born in whichever run's
    cgroup restarted it.
    """
    pids: set[int] = set()
    with contextlib.suppress(OSError, ValueError):
        pids.add(int(Path("/run/mysqld/mysqld.pid").read_text().strip()))
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            comm = (proc / "comm").read_text().strip()
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(proc.name))
            if comm in ("rsyslogd", "mysqld_safe"):
                pids.add(int(proc.name))
    todo = list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in pids:
                pids.add(child)
                todo.append(child)
    return pids


def _cgroup_pids(cgroup: Path) -> list[int]:
    found: list[int] = []
    for procs in cgroup.rglob("cgroup.procs"):
        with contextlib.suppress(OSError, ValueError):
            found += [int(p) for p in procs.read_text().split()]
    return found


def _remove_cgroup(cgroup: Path, said: list[str], spare: frozenset[int] = frozenset()) -> None:
    """Kill what runs in ``cgroup`` (but ``spare``), wait, and remove it with its children."""
    if not cgroup.is_dir():
        return
    pids = [p for p in _cgroup_pids(cgroup) if p not in spare]
    if pids:
        said.append(f"killed {len(pids)} process(es) in {cgroup.name}")
    kept = [p for p in _cgroup_pids(cgroup) if p in spare]
    if kept:
        # A shared service born here: move it out before the whole cgroup is killed.
        root = cgroup2_root()
        for pid in kept:
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(str(pid))  # type: ignore[operator]
    kill = cgroup / "cgroup.kill"
    if kill.exists():
        with contextlib.suppress(OSError):
            kill.write_text("1")
    else:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    # Killed processes may take a moment to die (one in the middle of a disk write), and a
    # cgroup is removable only once the kernel says it is unpopulated.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for path in sorted(
            (p for p in cgroup.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)
        ):
            with contextlib.suppress(OSError):
                path.rmdir()
        with contextlib.suppress(OSError):
            cgroup.rmdir()
        if not cgroup.exists():
            return
        time.sleep(0.1)
    said.append(f"could not remove {cgroup} in 20 s: {_cgroup_pids(cgroup)} still in it")


def _names(marker: str, text: str) -> bool:
    """True when ``text`` names the directory ``marker`` or a path under it: as a whole path,
    so that /tmp/pytest-of-root/pytest-1 never names /tmp/pytest-of-root/pytest-12."""
    return re.search(re.escape(marker.rstrip("/")) + r"(?=/|\s|$)", text) is not None


def _processes_named(markers: list[str]) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if any(_names(m, cmd) for m in markers):
                found.append(int(proc.name))
    return found


_CONTAINER_ID = re.compile(r"(?:/docker/|libpod-)([0-9a-f]{64})")


def _container_processes(markers: list[str]) -> list[int]:
    """Processes of containers whose state lives in the run's directories.

    A container's server runs in the engine's cgroup, not the run's, and its command line
    names nothing of the run: when the run's own dockerd or podman died with it, these were
    left running. They are found by the container id in their cgroup, kept as a directory
    (``containers/<id>``, ``overlay-containers/<id>``) under one of the run's directories.
    """
    by_id: dict[str, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            found = _CONTAINER_ID.search((proc / "cgroup").read_text())
            if found:
                by_id.setdefault(found.group(1), []).append(int(proc.name))
    if not by_id:
        return []
    ours: set[str] = set()
    for marker in markers:
        top = Path(marker)
        if not top.is_dir():
            continue
        for folder, dirs, _files in os.walk(top):
            if len(Path(folder).relative_to(top).parts) >= 6:
                dirs[:] = []  # the engines keep container state a few levels down
            ours.update(d for d in dirs if d in by_id)
    return [pid for cid in sorted(ours) for pid in by_id[cid]]


def _mounts_under(markers: list[str]) -> list[str]:
    points = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        point = line.split()[1].replace("\\040", " ")
        if any(_names(m, point) for m in markers):
            points.append(point)
    return sorted(points, key=len, reverse=True)


def _loops_under(markers: list[str]) -> list[str]:
    out = subprocess.run(
        ["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
        capture_output=True,
        text=True,
    ).stdout
    found = []
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and any(_names(m, parts[1]) for m in markers):
            found.append(parts[0])
    return found


def _device_state(path: str) -> tuple[int, str, str]:
    import grp
    import pwd

    st = os.stat(path)
    return st.st_mode & 0o7777, pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name


def device_changes() -> list[str]:
    """This machine's device nodes whose mode or owner a test changed (not 666, root)."""
    found = []
    for path, groups in DEVICES.items():
        try:
            mode, user, group = _device_state(path)
        except (OSError, KeyError):
            continue
        if mode != 0o666 or user != "root" or group not in groups:
            found.append(f"device {path} is {mode:o} {user}:{group}, not 666 root:{groups[-1]}")
    return found


def _put_devices_back(said: list[str]) -> None:
    for path, groups in DEVICES.items():
        with contextlib.suppress(OSError, KeyError):
            mode, user, group = _device_state(path)
            if mode != 0o666 or user != "root" or group not in groups:
                os.chown(path, 0, -1 if group in groups else 0)
                os.chmod(path, 0o666)  # noqa: S103 - a device node's own mode
                said.append(f"put {path} back to 666 root (was {mode:o} {user}:{group})")


def tear_down(record: dict[str, object]) -> list[str]:
    """Everything of a run whose pytest is gone; what was done, as sentences."""
    said: list[str] = []
    pid = int(str(record["pid"]))
    markers = [str(m) for m in record.get("markers", [])]  # type: ignore[attr-defined]
    spare = frozenset(shared_service_pids())
    root = cgroup2_root()
    if root is not None:
        for cgroup in sorted(root.iterdir()):
            match = HOST_CGROUP.match(cgroup.name)
            if match and int(match.group(1)) == pid:
                _remove_cgroup(cgroup, said)
        if record.get("cgroup"):
            _remove_cgroup(Path(str(record["cgroup"])), said, spare)
    if markers:
        named = [p for p in _processes_named(markers) if p not in spare]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for p in named:
                with contextlib.suppress(OSError):
                    os.kill(p, sig)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(start_ticks(p) for p in named):
                time.sleep(0.1)
        if named:
            said.append(f"stopped {len(named)} process(es) named by the run's directories")
        contained = [p for p in _container_processes(markers) if p not in spare]
        for p in contained:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        if contained:
            said.append(f"stopped {len(contained)} process(es) of the run's containers")
        for point in _mounts_under(markers):
            if subprocess.run(["umount", point], capture_output=True).returncode:
                subprocess.run(["umount", "-l", point], capture_output=True)
            said.append(f"unmounted {point}")
        for loop in _loops_under(markers):
            subprocess.run(["losetup", "-d", loop], capture_output=True)
            said.append(f"detached {loop}")
    said += _release_shared()
    _put_devices_back(said)
    for marker in markers:
        if "innotune-tests-home-" in marker:
            shutil.rmtree(marker, ignore_errors=True)
    return said


def _release_shared() -> list[str]:
    """The shared accounts and Debian MariaDB: put away when no live run uses them."""
    said = []
    from tests.hosts.debian_mariadb import DebianMariaDB
    from tests.hosts.sshd import USERS_STATE, SshUsers

    if USERS_STATE.exists():
        SshUsers().remove(leaving=0)  # whoever calls this (a supervisor, a run) stays
        if not USERS_STATE.exists():
            said.append("removed the test accounts (no run uses them)")
    if DebianMariaDB.release_if_unused():
        said.append("put the Debian MariaDB back as found (no run uses it)")
    return said


def sweep_dead_runs() -> list[str]:
    """What runs that died (and whose supervisor died too) left: torn down now."""
    said: list[str] = []
    if not RUNS.is_dir():
        return said
    for path in sorted(RUNS.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if _alive(record):
            continue
        done = tear_down(record)
        said += [f"run {record['pid']}: {line}" for line in done]
        path.unlink(missing_ok=True)
    root = cgroup2_root()
    for cgroup in sorted(root.iterdir()) if root is not None else []:
        # A booted host of a run that left no record (an older suite): its pytest is gone.
        match = HOST_CGROUP.match(cgroup.name) or RUN_CGROUP.match(cgroup.name)
        if match and start_ticks(int(match.group(1))) is None:
            done: list[str] = []
            _remove_cgroup(cgroup, done)
            said += [f"run {match.group(1)}: {line}" for line in done]
    for log in RUNS.glob("*.log"):
        if not log.with_suffix(".json").exists() and start_ticks(int(log.stem)) is None:
            log.unlink(missing_ok=True)  # its run and supervisor are gone: it was read or not
    return said


def watch(path: Path) -> None:
    """The supervisor: wait for the run's pytest to end, then tear down what it left."""
    record = json.loads(path.read_text())
    pid = int(record["pid"])
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        fd = None
    if fd is not None and start_ticks(pid) == record.get("start"):
        select.select([fd], [], [])
        os.close(fd)
    record = json.loads(path.read_text())
    said = tear_down(record)
    stamp = time.strftime("%H:%M:%S")
    for line in said or ["nothing was left"]:
        print(f"{stamp} run {pid}: {line}", flush=True)
    path.unlink(missing_ok=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "watch":
        watch(Path(sys.argv[2]))
    elif len(sys.argv) == 2 and sys.argv[1] == "sweep":
        for line in sweep_dead_runs():
            print(line)
    else:
        sys.exit("usage: python -m tests.hosts.reaper watch RECORD | sweep")
