"""The knob catalogue: resources/knobs/*.toml, loaded strictly (see resources/knobs/README.md)."""

from app.knobs.catalogue import Catalogue, default_catalogue, load_catalogue
from app.knobs.model import (
    CatalogueError,
    Knob,
    LineFacts,
    LinuxFacts,
    UnknownKnob,
    UnsupportedVersion,
    VersionFacts,
    kernel_series,
)

__all__ = [
    "Catalogue",
    "CatalogueError",
    "Knob",
    "LineFacts",
    "LinuxFacts",
    "UnknownKnob",
    "UnsupportedVersion",
    "VersionFacts",
    "default_catalogue",
    "kernel_series",
    "load_catalogue",
]
