"""Where InnoTune's data files (resources/) are, from a checkout and from a frozen build.

From source they sit next to the ``app`` package; a PyInstaller bundle puts them under
``sys._MEIPASS`` (the ``_internal`` folder of a onedir build), which the spec arranges.
"""

from __future__ import annotations

import sys
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parents[1]


def resource_root() -> Path:
    """The folder that holds ``resources/``: the bundle's when frozen, else the checkout's."""
    frozen = getattr(sys, "_MEIPASS", None)
    return Path(frozen) if frozen else _SOURCE_ROOT


def resource_path(*parts: str) -> Path:
    """A path under ``resources/``, e.g. ``resource_path("knobs")`` or ``("glossary.toml")``."""
    return resource_root().joinpath("resources", *parts)
