"""Real option-file layouts (tests/fixtures/optionfiles/*): the values and where they come from."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from app.optionfiles import (
    Node,
    OptionFileError,
    Reader,
    effective,
    holds_secrets,
    local_reader,
    parse,
    parse_persisted,
    read_config,
    search_order,
    server_groups,
)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "optionfiles"
LAYOUTS = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.toml").exists())


def rooted_reader(root: Path) -> Reader:
    """A reader that sees ``root`` as ``/`` (symlinks inside the fixture are relative)."""

    def read(path: str) -> Node:
        return local_reader(str(root) + path)

    return read


def load(name: str) -> tuple[Path, dict[str, Any]]:
    """The layout's root and its expectations."""
    root = CORPUS / name
    return root, tomllib.loads((root / "expected.toml").read_text())


def test_corpus_has_every_family() -> None:
    """Debian MariaDB (real), Oracle deb/rpm, MariaDB.org rpm, RHEL-family, synthetic."""
    assert len(LAYOUTS) >= 7
    assert (CORPUS / "SOURCE.md").exists()
    for name in LAYOUTS:
        assert f"`{name}/`" in (CORPUS / "SOURCE.md").read_text(), name


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_effective_values(name: str) -> None:
    """Every expected value, with its file:line, and nothing the server would not read."""
    root, spec = load(name)
    home = spec["home"]
    reader = rooted_reader(root)
    tops = search_order(spec["flavour"], home=home)
    groups = server_groups(spec["flavour"], spec["version"])
    if "refuses" in spec:
        with pytest.raises(OptionFileError) as err:
            read_config(reader, tops, groups, home=home)
        assert f"{err.value.path}:{err.value.line}" == spec["refuses"]
        return
    reading = read_config(reader, tops, groups, home=home)
    persisted = None
    if "persisted" in spec:
        persisted = parse_persisted(reader(spec["persisted"]).data, spec["persisted"])
    result = effective(reading.args, argv=spec.get("argv"), persisted=persisted)
    for key, want in spec.get("values", {}).items():
        assert key in result, f"{name}: {key} not found"
        got = result[key]
        if "value" in want:
            assert got.value == want["value"], key
        if "values" in want:
            assert list(got.values) == want["values"], key
        assert str(got.source) == want["from"], key
        if "overridden" in want:
            assert [str(s) for s in got.overridden] == want["overridden"], key
        if "loose" in want:
            assert got.loose is want["loose"], key
    for key in spec.get("absent", {}).get("names", []):
        assert key not in result, f"{name}: {key} should not be read by the server"
    assert [str(p) for p in reading.problems] == spec.get("problems", [])
    secret_files = [p for p, f in reading.parsed.items() if holds_secrets(f)]
    assert secret_files == spec.get("secrets", [])


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_files_round_trip(name: str) -> None:
    """Every file of every real layout parses and renders back byte for byte."""
    root = CORPUS / name
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.name != "expected.toml":
            data = path.read_bytes()
            assert parse(data, str(path)).data == data
