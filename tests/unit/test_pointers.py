"""No stale pointers: every path and ``app.module.name`` the text names exists.

Comments, docstrings, the Markdown documents and resources/ point readers at code: a file
(``app/flows/planning.py``, ``tests/hosts/``) or a name in a module
(``app.planner.starts.starting_points``). When the code moves, such a pointer goes stale
silently (resources/sliders.toml long pointed at an ``app/planner/sliders.py`` that was gone).

Left out, as not pointers to this tree: changelogs (what was true then), the notes of recorded
fixtures (paths in other projects), templates and globs (``innotune-$s.png``, ``mysql-*/``),
and dotted names whose second part is no package of ``app`` (``app.exec()``: a QApplication
called ``app``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Where the pointers are looked for (files of these kinds, under these folders and the root).
PLACES = ("app", "tests", "installers", "resources", "docs")
SUFFIXES = {".py", ".md", ".toml", ".sql", ".sh", ".spec", ".txt"}
SKIPPED = {"CHANGELOG.md", "SOURCE.md"}

PATH = re.compile(r"(?<![\w./$-])((?:app|tests|installers|resources)/[\w./-]*\w)(?![\w$*{<-])")
MEMBER = re.compile(r"(?<![\w./$-])((?:app|tests|installers)/[\w/]+\.py)::([A-Za-z_]\w*)")
DOTTED = re.compile(r"(?<![\w./-])(app(?:\.[A-Za-z_]\w*)+)")
PACKAGES = {p.stem for p in (ROOT / "app").iterdir() if p.suffix == ".py" or p.is_dir()}


def _texts() -> Iterator[tuple[Path, str]]:
    files = [p for p in ROOT.glob("*.md") if p.name not in SKIPPED]
    for place in PLACES:
        files += [
            p
            for p in sorted((ROOT / place).rglob("*"))
            if p.suffix in SUFFIXES
            and p.name not in SKIPPED
            and "__pycache__" not in p.parts
            and p != Path(__file__).resolve()  # its own examples of stale pointers
            and "fixtures" not in p.relative_to(ROOT).parts[:2]
        ]
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.name == "README.md" and "\n## Changelog" in text:
            text = text.split("\n## Changelog", 1)[0]  # what was true then
        yield path, text


def _path_exists(pointer: str) -> bool:
    found = ROOT / pointer
    return found.exists() or found.with_name(found.name + ".py").exists()


def _member_exists(path: str, name: str) -> bool:
    """``tests/unit/test_x.py::test_y``: a function, class or module-level name in the file."""
    source = ROOT / path
    if not source.is_file():
        return False
    defined = rf"^\s*(?:async def|def|class)\s+{name}\b|^{name}\s*[:=]"
    return re.search(defined, source.read_text(encoding="utf-8"), re.M) is not None


def _name_exists(dotted: str) -> bool:
    """``app.a.b.name``: the longest importable module, then each attribute in turn."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _stale() -> list[str]:
    stale = []
    for path, text in _texts():
        where = path.relative_to(ROOT)
        for match in PATH.finditer(text):
            if not _path_exists(match.group(1)):
                stale.append(f"{where}: {match.group(1)}")
        for match in MEMBER.finditer(text):
            if not _member_exists(match.group(1), match.group(2)):
                stale.append(f"{where}: {match.group(0)}")
        for match in DOTTED.finditer(text):
            name = match.group(1)
            if name.split(".")[1] in PACKAGES and not _name_exists(name):
                stale.append(f"{where}: {name}")
    return sorted(set(stale))


def test_every_path_and_name_the_text_points_at_exists() -> None:
    assert _stale() == []


def test_a_stale_pointer_is_found(tmp_path: Path) -> None:
    # The checks themselves: what the sliders' notes once said, and its true place now.
    assert not _path_exists("app/planner/sliders.py")
    assert _path_exists("app/planner/starts.py") and _path_exists("app/flows/freshness")
    assert not _name_exists("app.planner.sliders.starting_points")
    assert not _name_exists("app.planner.starts.no_such_function")
    assert _name_exists("app.planner.starts.starting_points")
    found = PATH.findall("see app/planner/sliders.py starting_points, innotune-$s.png, mysql-*/")
    assert found == ["app/planner/sliders.py"]
    assert _member_exists("app/planner/starts.py", "starting_points")
    assert not _member_exists("app/planner/starts.py", "no_such_function")
