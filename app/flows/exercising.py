"""The teaching exercises, for both faces: which there are, the lab on the practice server, a run.

The window (app/ui/exercises.py) and ``innotune exercise`` both build their lab here, so an
exercise runs on the same practice server, with the same scratch space, from either.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.exercises import QUICK
from app.exercises import run as _run
from app.exercises.model import ExerciseResult, ExerciseText, Lab, Say, load_texts

__all__ = ["ExerciseResult", "exercises", "practice_lab", "run_exercise"]


def exercises() -> list[ExerciseText]:
    """Every exercise's words, in their order."""
    return load_texts()


def practice_lab(base: Path, say: Say, cancelled: threading.Event | None = None) -> Lab:
    """The practice server at ``base``, started (set up on first use); scratch space beside it."""
    from app.practice.practice import PracticeServer

    practice = PracticeServer(base)
    practice.start(say=say)
    workdir = base.with_name("exercises")
    workdir.mkdir(parents=True, exist_ok=True)
    return Lab(
        server=practice.server,
        workdir=workdir,
        say=say,
        cancelled=cancelled or threading.Event(),
        restart_argv=practice.endpoint().restart_argv,
    )


def run_exercise(
    exercise_id: str, lab: Lab, scale: Mapping[str, Any] | None = None, *, quick: bool = False
) -> ExerciseResult:
    """Run one exercise in ``lab``; ``quick`` runs its shorter form (smaller, less certain).

    Raises:
        KeyError: no exercise has that id.
    """
    if exercise_id not in {t.id for t in load_texts()}:
        raise KeyError(exercise_id)
    sized = {**(QUICK.get(exercise_id, {}) if quick else {}), **(scale or {})}
    return _run(exercise_id, lab, **sized)
