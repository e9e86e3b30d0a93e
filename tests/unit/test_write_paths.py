"""Every change that reaches a target goes through the job: the code paths that write, listed.

An ``ast`` walk over ``app/`` (the job itself, ``app/targetjob``, aside: it is what runs on
the target) finds each call that can change a host or its server through InnoTune's
connections: a Transport's ``write_file_atomic``; a command or shell script given to
``run``/``submit`` that writes a file (``>``, ``tee``, ``rm``, ``mv``, ``mkdir`` ...),
sets a kernel value (``sysctl -w``), manages a service or device (``systemctl``,
``service``, ``udevadm``, ``losetup``, ``umount``), starts or signals a process; SQL given
to ``query``/``execute`` that sets a variable (``SET GLOBAL``/``SET PERSIST``/``RESET
PERSIST``) or changes data. The list found must be exactly :data:`ALLOWED`, each entry
with the reason it is not a configuration change made outside the job.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

APP = Path(__file__).parents[2] / "app"
JOB = "targetjob"

_SHIPPING = "ships or steers the job (its zipapp, bundle, control files), never the config"
_SNAPSHOT = "stores the snapshot in InnoTune's own root-only directory before the job starts"
_BENCH = "benchmark scratch schema or files (app/bench), removed afterwards; no config change"
_PRACTICE = "a teaching exercise on the practice server (this computer's private instance)"

ALLOWED = {
    "jobs/history.py::_tool": "puts the job's zipapp on the target for --list/--prune",
    "jobs/control.py::_upload": _SHIPPING,
    "jobs/control.py::launch": _SHIPPING,
    "jobs/control.py::request_cancel": _SHIPPING,
    "jobs/control.py::confirm": _SHIPPING,
    "jobs/runner.py::discard": "removes a job that never ran, and its snapshot",
    "jobs/snapshot.py::make_root_dir": _SNAPSHOT,
    "jobs/snapshot.py::store_on_target": _SNAPSHOT,
    "bench/runner.py::Benchmark.run_sides": _BENCH,
    "bench/steps.py::ScratchTables.ready": _BENCH,
    "bench/steps.py::ScratchTables.empty": _BENCH,
    "bench/program.py::_input_on_target": _BENCH,
    "bench/program.py::_remove": _BENCH,
    "bench/program.py::kill_clients": "ends the benchmark's own client connections",
    "exercises/__init__.py::drop_schema": _PRACTICE + " (the exercises' own database, at the end)",
    "exercises/bufferpool.py::measure": _PRACTICE,
    "exercises/redolog.py::measure": _PRACTICE,
    "exercises/tools.py::Settings.set": _PRACTICE + " (saved first, put back at the end)",
    "exercises/tools.py::restore_settings": _PRACTICE + " (putting the saved settings back)",
    "exercises/tools.py::drop_table": _PRACTICE + " (the exercise's own table, at the end)",
    "exercises/bufferpool.py::run": _PRACTICE,
    "exercises/crash.py::crash_once": _PRACTICE,
    "exercises/powercut.py::attached": _PRACTICE,
    "exercises/powercut.py::detach": _PRACTICE,
    "exercises/powercut.py::clean_leftovers": _PRACTICE,
    "exercises/powercut.py::cut_once": _PRACTICE,
    "exercises/restart.py::run": _PRACTICE,
    "mysql/burst.py::create_table": _PRACTICE + " (the exercises' write bursts)",
    "mysql/burst.py::load_rows": _PRACTICE + " (the exercises' write bursts)",
    "remote/ssh.py::SshTransport._kill_marked": "ends InnoTune's own command on the host",
    "remote/ssh.py::SshTransport._kill": "ends InnoTune's own command on the host",
}

_RUNS = {"run", "submit", "run_checked"}
_SQL_RUNS = {"query", "execute", "executemany"}
_SQL = re.compile(
    r"\b(SET\s+(GLOBAL|PERSIST|PERSIST_ONLY)|RESET\s+PERSIST|CREATE|DROP|INSERT|UPDATE|DELETE"
    r"|ALTER|GRANT|TRUNCATE|SHUTDOWN|KILL)\s",
    re.IGNORECASE,
)
# In a shell script: a redirection into a file (not /dev/null, not a descriptor), or a
# command that writes, removes, starts or signals (``kill -0`` only asks).
_SHELL = re.compile(
    r"(?<![<0-9&>])>>?\s*(?!/dev/null|&|\d)"
    r"|\b(tee|rm|mv|cp|mkdir|chmod|chown|install|ln|truncate|dd|setsid|systemd-run|sysctl\s+-w)\b"
    r"|\bkill\s+(?!-0)"
)
_ARGV0 = {
    "rm", "mv", "cp", "mkdir", "chmod", "chown", "tee", "install", "ln", "truncate", "dd",
    "kill", "systemctl", "service", "udevadm", "systemd-run", "setsid", "losetup", "mount",
    "umount", "reboot",
}  # fmt: skip


def _texts(call: ast.Call, consts: dict[str, str]) -> list[str]:
    """String constants in the call's arguments, module constants (scripts) resolved."""
    found = []
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        for node in ast.walk(arg):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
            elif isinstance(node, ast.Name) and node.id in consts:
                found.append(consts[node.id])
    return found


def _marks(call: ast.Call, consts: dict[str, str]) -> set[str]:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    marks = {"write_file_atomic"} if name == "write_file_atomic" else set()
    texts = _texts(call, consts) if name in _RUNS | _SQL_RUNS else []
    for text in texts:
        if name in _SQL_RUNS:
            marks |= {f"sql: {m.group(0).strip()}" for m in [_SQL.search(text)] if m}
        elif text in _ARGV0 or (text == "sysctl" and {"-w", "--write"} & set(texts)):
            marks.add(f"argv: {text}")
        elif " " in text or ">" in text:
            marks |= {f"sh: {m.group(0).strip()}" for m in [_SHELL.search(text)] if m}
    return marks


def write_paths(source: str) -> dict[str, set[str]]:
    """``function → marks`` for each function (or class method) of ``source`` that writes."""
    tree = ast.parse(source)
    consts = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: dict[str, set[str]] = {}

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = [*scope, child.name]
            if isinstance(child, ast.Call) and (marks := _marks(child, consts)):
                found.setdefault(".".join(scope) or "<module>", set()).update(marks)
            visit(child, inner)

    visit(tree, [])
    return found


def test_the_scanner_sees_each_kind_of_write() -> None:
    source = """
SCRIPT = 'printf "%s" "$1" > "$2"'
def a(t): t.write_file_atomic("/etc/x", b"")
def b(t): t.run(["sysctl", "-w", "vm.swappiness=1"])
def c(t): t.run(["sh", "-c", SCRIPT, "sh", "1", "/sys/block/sda/queue/nr_requests"])
def d(s): s.query("SET GLOBAL innodb_io_capacity = 900")
def e(t): t.run(["systemctl", "restart", "mariadb"])
def reads(t, s):
    t.run(["sysctl", "-n", "vm.swappiness"])
    t.run(["sh", "-c", 'cat "$1" 2>/dev/null; kill -0 "$2"', "sh", "/x", "1"])
    s.query("SELECT @@GLOBAL.innodb_io_capacity")
"""
    assert sorted(write_paths(source)) == ["a", "b", "c", "d", "e"]


def test_only_the_job_writes_to_a_target() -> None:
    found = {}
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP)
        if rel.parts[0] == JOB:
            continue  # the job: what runs on the target and makes the change
        for function, marks in write_paths(path.read_text()).items():
            found[f"{rel}::{function}"] = sorted(marks)
    unexpected = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not unexpected, f"writes to a target outside the job: {unexpected}"
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"allowed but no longer writing (drop them from ALLOWED): {stale}"
