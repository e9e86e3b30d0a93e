"""The layering of ../shared/HOUSE-STYLE.md, kept true by walking each module's imports."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
APP = ROOT / "app"
FACTS = ROOT / "tests" / "fixtures" / "hosts" / "practice-mariadb-10.11" / "facts.json"

# Which of InnoTune's own packages (and top-level modules) each one may import, besides
# itself. Every one under app/ has a row: a new package must say where it stands.
ALLOWED = {
    "domain": set(),
    "resources": set(),
    "logsetup": {"domain"},
    "remote": {"domain"},
    "mysql": {"domain"},
    "places": {"domain", "remote"},
    "optionfiles": {"domain", "remote"},
    "knobs": {"domain", "resources"},
    "planner": {"domain", "knobs", "targetjob"},
    "inspect": {"domain", "remote", "mysql", "optionfiles"},
    "access": {"domain", "remote", "mysql", "inspect"},
    "practice": {"domain", "remote", "mysql", "optionfiles", "resources"},
    "describe": {"domain", "remote", "mysql", "optionfiles", "planner", "access", "targetjob"},
    "jobs": {"domain", "remote", "access", "optionfiles", "targetjob", "describe"},
    # Shipped to the target and run there by a bare python3 (see the test below).
    "targetjob": set(),
    "bench": {"domain", "remote", "mysql", "access", "resources"},
    "export": {"domain", "describe", "optionfiles", "planner", "knobs"},
    "exercises": {
        "domain", "remote", "mysql", "access", "describe", "jobs", "inspect", "practice",
        "resources",
    },
    # The use cases the wizard and the command line share.
    "flows": {
        "domain", "places", "remote", "access", "inspect", "knobs", "planner", "describe", "jobs",
        "export", "bench", "practice", "exercises",
    },
    # The two faces: each uses the flows and the services, never the other face. A plan,
    # a preview, an apply and its job, the snapshots, a benchmark and an export are use
    # cases: the faces reach the planner, the describers, the job machinery, the benchmark
    # and the export only through the flows.
    "commands": {
        "domain", "places", "flows", "remote", "access", "inspect", "knobs", "practice",
    },
    "ui": {
        "domain", "resources", "places", "flows", "logsetup", "remote", "access", "inspect",
        "knobs", "practice", "exercises",
    },
    # Entry points: wiring only. The wizard is reached only by main and by --self-test.
    "cli": {"domain", "commands", "logsetup", "places", "ui"},
    "main": {"domain", "cli", "places", "remote", "ui"},
    "__main__": {"main"},
    "__init__": set(),
}  # fmt: skip
# Third-party libraries each confined to one package.
CONFINED = {"PySide6": "ui", "paramiko": "remote", "pymysql": "mysql", "keyring": "access"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _imports(path: Path) -> set[str]:
    """Absolute names imported anywhere in the file (function-level imports too)."""
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _package(path: Path) -> str:
    rel = path.relative_to(APP)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_every_package_has_a_row() -> None:
    packages = {_package(p) for p in APP.rglob("*.py")}
    assert not packages - set(ALLOWED), f"add a row to ALLOWED for {packages - set(ALLOWED)}"
    assert not set(ALLOWED) - packages, f"rows for packages gone: {set(ALLOWED) - packages}"


def test_every_package_imports_only_what_it_may() -> None:
    wrong = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP)
        package = _package(path)
        for module in _imports(path):
            top = module.split(".")
            owner = CONFINED.get(top[0])
            if owner and package != owner:
                wrong.append(f"{rel}: {module} belongs in app/{owner}")
            if top[0] == "app" and len(top) > 1:
                if top[1] != package and top[1] not in ALLOWED[package]:
                    wrong.append(f"{rel}: app.{package} may not import app.{top[1]}")
    assert not wrong, "\n".join(wrong)


def test_the_documented_layout_is_this_table() -> None:
    design = (ROOT / "docs" / "design.md").read_text()
    section = design.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`app/"):
            may = set() if "standard library" in cells[2] else set(cells[2].split(", "))
            rows |= {name: may for name in re.findall(r"`app/(\w+)(?:\.py)?`", cells[0])}
    assert rows == {k: v for k, v in ALLOWED.items() if k not in ("__init__", "__main__")}


def test_the_target_job_stands_alone() -> None:
    # It is shipped to the target as a zipapp and run there by a bare python3 (3.7+):
    # the standard library and its own modules (relative imports) only.
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    wrong = []
    for path in sorted((APP / "targetjob").glob("*.py")):
        tree = ast.parse(path.read_text(), feature_version=(3, 7))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            wrong += [f"{path.name}: {n}" for n in names if n.split(".")[0] not in stdlib]
    assert not wrong, wrong


# -- import cycles ---------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Each app module and the app modules it imports, at any depth of the file (those under
    ``if TYPE_CHECKING:`` too: a cycle through type hints is still a knot to untie).

    ``from X import name`` counts as importing ``X.name`` when that is a module, else ``X``.
    A relative import is resolved against the importing module's package.
    """
    files = {_module_name(p): p for p in APP.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(_tree(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                ]
            for target in targets:
                while target and target not in files:  # `import app.x.y` of a name in app.x
                    target = target.rpartition(".")[0]
                if target and target != name and target != "app":
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """Each group of modules that import each other, with one shortest cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.add(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(group)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        queue = [start]
        while queue:  # breadth first: the shortest way from start back to start
            here = queue.pop(0)
            for nxt in sorted(graph[here] & group):
                if nxt == start:
                    cycles.append(([*paths[here], start], group))
                    queue = []
                    break
                if nxt not in paths:
                    paths[nxt] = [*paths[here], nxt]
                    queue.append(nxt)
    return cycles


def test_no_import_cycle_among_app_modules() -> None:
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(
        f"{' -> '.join(cycle)}\n  (a group of {len(group)}: {', '.join(sorted(group))})"
        for cycle, group in cycles
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert _cycles(graph) == [(["a", "b", "c", "a"], {"a", "b", "c"})]


# -- the headless commands without Qt ---------------------------------------------------------

# Runs innotune with PySide6 made unimportable, as on a server without Qt installed.
_NO_QT = """
import sys

class NoQt:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "PySide6":
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return None

sys.meta_path.insert(0, NoQt())
from app.main import main
raise SystemExit(main(sys.argv[1:]))
"""

_COMMANDS = (
    "doctor", "inspect", "practice", "plan", "bench", "options", "preview", "apply",
    "snapshots", "rollback", "export",
)  # fmt: skip


def _innotune_without_qt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path))
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run(
        [sys.executable, "-c", _NO_QT, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_the_qt_blocker_blocks(tmp_path: Path) -> None:
    done = _innotune_without_qt(tmp_path, "--self-test")  # the wizard's check needs Qt
    assert done.returncode != 0 and "PySide6" in done.stdout + done.stderr, done


def test_every_command_helps_without_qt(tmp_path: Path) -> None:
    done = _innotune_without_qt(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("COMMAND", 1)[1]
    assert all(f"    {c} " in listed for c in _COMMANDS), done.stdout  # the list is whole
    failed = []
    for command in _COMMANDS:
        done = _innotune_without_qt(tmp_path, command, "--help")
        if done.returncode != 0 or f"usage: innotune {command}" not in done.stdout:
            failed.append(f"{command}: exit {done.returncode}\n{done.stderr}")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_plan_from_facts_runs_without_qt(tmp_path: Path, extra: tuple[str, ...]) -> None:
    done = _innotune_without_qt(tmp_path, "plan", "--facts", str(FACTS), *extra)
    assert done.returncode == 0, done.stderr
    assert "innodb_buffer_pool_size" in done.stdout
