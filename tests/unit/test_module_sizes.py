"""No module in app/ grows past 600 lines (issue 29): a module that long holds several things.

Split a module along its seams rather than raising the limit; docs/design.md's Layout section
names the packages.
"""

from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
LIMIT = 600


def test_no_module_is_over_the_limit() -> None:
    sizes = {
        str(path.relative_to(APP.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in APP.rglob("*.py")
    }
    assert len(sizes) > 100  # the walk found the code
    over = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them along their seams): {over}"
