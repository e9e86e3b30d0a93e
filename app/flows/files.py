"""Facts and plans saved as JSON files (by `inspect --out`, `plan --out`, `preview --plan-out`)."""

from __future__ import annotations

from pathlib import Path

from app.domain.errors import InnoTuneError
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan


def read_facts(name: str | Path) -> HostFacts:
    """The facts saved in ``name``.

    Raises:
        InnoTuneError: the file cannot be read or holds no InnoTune facts.
    """
    try:
        return HostFacts.from_json(Path(name).read_text())
    except OSError as exc:
        raise InnoTuneError(f"Cannot read {name}: {exc.strerror}.") from None
    except (ValueError, TypeError) as exc:  # TypeError: an object missing required fields
        raise InnoTuneError(
            f"{name} is not an InnoTune facts file: {exc}",
            "Save facts with `innotune inspect TARGET --out FILE`.",
        ) from None


def read_plan(name: str | Path, fix: str) -> Plan:
    """The plan saved in ``name``; ``fix`` says how to save one.

    Raises:
        InnoTuneError: the file cannot be read or holds no InnoTune plan.
    """
    try:
        return Plan.from_json(Path(name).read_text())
    except OSError as exc:
        raise InnoTuneError(f"Cannot read {name}: {exc.strerror}.") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise InnoTuneError(f"{name} is not an InnoTune plan file: {exc}", fix) from None
