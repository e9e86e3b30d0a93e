"""Teaching exercises run for real on the practice server, each ending with a measured result.

Every exercise is a ``run(lab, **scale) -> ExerciseResult`` function; its words live in
``resources/exercises/<id>.toml``. No Qt here: the wizard's Exercises window runs them in
a worker and shows the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.exercises import badchange, bufferpool, crash, powercut, restart
from app.exercises.model import ExerciseResult, Lab

RUNNERS: dict[str, Callable[..., ExerciseResult]] = {
    "crash": crash.run,
    "powercut": powercut.run,
    "bufferpool": bufferpool.run,
    "restart": restart.run,
    "badchange": badchange.run,
}


def run(exercise_id: str, lab: Lab, **scale: Any) -> ExerciseResult:
    """Run one exercise by its id (the name of its ``.toml`` file)."""
    return RUNNERS[exercise_id](lab, **scale)
