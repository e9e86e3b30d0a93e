"""Teaching exercises run for real on the practice server, each ending with a measured result.

Every exercise is a ``run(lab, **scale) -> ExerciseResult`` function; its words live in
``resources/exercises/<id>.toml``. No Qt here: the wizard's Exercises window runs them in
a worker and shows the result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from app.domain.errors import InnoTuneError
from app.exercises import (
    badchange,
    bufferpool,
    crash,
    doublewrite,
    flushing,
    powercut,
    redolog,
    restart,
)
from app.exercises.model import ExerciseResult, Lab, text_for
from app.mysql import burst

log = logging.getLogger(__name__)

RUNNERS: dict[str, Callable[..., ExerciseResult]] = {
    "crash": crash.run,
    "powercut": powercut.run,
    "bufferpool": bufferpool.run,
    "restart": restart.run,
    "badchange": badchange.run,
    "redolog": redolog.run,
    "flushing": flushing.run,
    "doublewrite": doublewrite.run,
}

#: Each exercise's shorter form (``innotune exercise --quick``, the tests): fewer rows, rounds
#: and seconds, so smaller and less certain figures.
QUICK: dict[str, dict[str, Any]] = {
    "crash": {"seconds": 3.0},
    "powercut": {"seconds": 3.0},
    "bufferpool": {"rows": 20000, "seconds": 1.5},
    "restart": {"dirty_seconds": 1.0},
    "redolog": {"rows": 10000, "transactions": 300},
    "flushing": {"rows": 20000, "seconds": 10, "tail": 4},
    "doublewrite": {"rows": 10000, "transactions": 250},
}


def run(exercise_id: str, lab: Lab, **scale: Any) -> ExerciseResult:
    """Run one exercise by its id (the name of its ``.toml`` file).

    It says first how long it takes; at its end (also a stopped or failed one) the
    exercises' own database is dropped from the practice server.
    """
    text = text_for(exercise_id)
    if text.duration:
        lab.say(f"{text.title}: this takes {text.duration} …")
    try:
        return RUNNERS[exercise_id](lab, **scale)
    finally:
        drop_schema(lab)


def drop_schema(lab: Lab) -> None:
    """Drop the exercises' database from the lab's server, if the server runs."""
    if lab.server.running_pid() is None:
        return
    try:
        session = burst.connect(str(lab.server.socket_path))
    except InnoTuneError as exc:
        log.warning("could not drop %s: %s", burst.SCHEMA, exc.problem)
        return
    try:
        session.query(f"DROP DATABASE IF EXISTS {burst.SCHEMA}")
    except InnoTuneError as exc:
        log.warning("could not drop %s: %s", burst.SCHEMA, exc.problem)
    finally:
        session.close()
