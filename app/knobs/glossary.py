"""The glossary: plain explanations of the terms the wizard uses (resources/glossary.toml)."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from app.resources import resource_path

GLOSSARY_FILE = resource_path("glossary.toml")


@lru_cache(maxsize=1)
def glossary(path: Path = GLOSSARY_FILE) -> dict[str, str]:
    """Term → explanation, sorted by term (case-insensitive)."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    terms = data.get("terms")
    if not isinstance(terms, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in terms.items()
    ):
        raise ValueError(f"{path}: [terms] must map each term to a non-empty explanation")
    return dict(sorted(terms.items(), key=lambda kv: kv[0].lower()))
