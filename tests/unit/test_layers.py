"""The layering of ../shared/HOUSE-STYLE.md, kept true by walking each module's imports."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

APP = Path(__file__).parents[2] / "app"

# Which of InnoTune's own packages each package may import (besides itself).
ALLOWED = {
    "domain": set(),
    "remote": {"domain"},
    "mysql": {"domain"},
    "optionfiles": {"domain", "remote"},
    "knobs": {"domain", "resources"},
    "planner": {"domain", "knobs", "targetjob"},
    "inspect": {"domain", "remote", "mysql", "optionfiles"},
    "access": {"domain", "remote", "mysql", "inspect"},
    "practice": {"domain", "remote", "mysql", "optionfiles", "resources"},
    "appliers": {"domain", "remote", "mysql", "optionfiles", "planner", "access", "targetjob"},
    # Shipped to the target and run there by a bare python3 (see the test below).
    "targetjob": set(),
    "bench": {"domain", "remote", "mysql", "access", "resources"},
    "export": {"domain", "appliers", "optionfiles", "planner", "knobs"},
}
# Third-party libraries each confined to one package.
CONFINED = {"PySide6": "ui", "paramiko": "remote", "pymysql": "mysql", "keyring": "access"}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_every_package_imports_only_what_it_may() -> None:
    wrong = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP)
        package = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for module in _imports(path):
            top = module.split(".")
            owner = CONFINED.get(top[0])
            if owner and package != owner:
                wrong.append(f"{rel}: {module} belongs in app/{owner}")
            if top[0] == "app" and len(top) > 1 and package in ALLOWED:
                if top[1] != package and top[1] not in ALLOWED[package]:
                    wrong.append(f"{rel}: app.{package} may not import app.{top[1]}")
    assert not wrong, "\n".join(wrong)


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
