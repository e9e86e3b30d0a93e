"""What every exercise shares: the lab it runs in, its texts, and its result."""

from __future__ import annotations

import json
import math
import threading
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from app.practice.server import PrivateServer
from app.resources import resource_path

Say = Callable[[str], None]


def _quiet(_text: str) -> None:
    """The default progress reporter: says nothing."""


def resource_dir() -> Path:
    """The folder with the exercises' texts (``*.toml``) and recorded results."""
    return resource_path("exercises")


def unwrap(text: str) -> str:
    """Join hard-wrapped lines into paragraphs (blank lines stay paragraph breaks)."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


class ExerciseCancelled(Exception):
    """The learner pressed Stop; the exercise cleaned up after itself."""


@dataclass
class Lab:
    """Where an exercise runs: a private server it may kill and restart, and scratch space.

    Attributes:
        server: the practice server (or a test's disposable one); never a real server.
        workdir: scratch space for images, copies and snapshots.
        say: progress as text.
        cancelled: set to ask the exercise to stop at its next check.
        restart_argv: how a detached process restarts ``server`` (the apply runner's
            ``--restart-command``); None builds one from this source tree.
    """

    server: PrivateServer
    workdir: Path
    say: Say = _quiet
    cancelled: threading.Event = field(default_factory=threading.Event)
    restart_argv: Sequence[str] | None = None

    def check(self) -> None:
        """Raise :class:`ExerciseCancelled` if Stop was pressed."""
        if self.cancelled.is_set():
            raise ExerciseCancelled("Stopped.")


@dataclass(frozen=True)
class ExerciseText:
    """An exercise's words, from ``resources/exercises/<id>.toml``."""

    id: str
    order: int
    title: str
    intro: str
    happened: str  # a str.format template filled with the result's figures
    duration: str = ""  # how long a run takes here, said before it starts ("about 15 s")

    @property
    def before_start(self) -> str:
        """The introduction and how long a run takes: what a learner reads before Start."""
        return f"{self.intro}\n\nIt takes {self.duration}." if self.duration else self.intro

    def explain(self, figures: dict[str, Any]) -> str:
        """The "what just happened" text with this run's figures in it."""
        return unwrap(self.happened.format(**figures))


def load_texts() -> list[ExerciseText]:
    """Every exercise's texts, in their order.

    Raises:
        ValueError: a file lacks a key or has an unknown one.
    """
    keys = {"order", "title", "intro", "happened", "duration"}
    texts = []
    for path in sorted(resource_dir().glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if set(data) != keys:
            raise ValueError(
                f"{path.name}: keys must be exactly {sorted(keys)}, not {sorted(data)}"
            )
        texts.append(
            ExerciseText(
                id=path.stem,
                order=int(data["order"]),
                title=str(data["title"]),
                intro=unwrap(str(data["intro"])),
                happened=str(data["happened"]),
                duration=str(data["duration"]),
            )
        )
    return sorted(texts, key=lambda t: t.order)


def text_for(exercise_id: str) -> ExerciseText:
    """One exercise's texts."""
    for text in load_texts():
        if text.id == exercise_id:
            return text
    raise KeyError(exercise_id)


def nice_ticks(top: float) -> tuple[float, float, int]:
    """A value axis for bars up to ``top``: its end, its step and the decimals a tick needs.

    Steps are 1, 2, 2.5 or 5 times a power of ten, so ticks read 0, 10000, 20000 (never
    39576.1) or 0, 0.05, 0.1.

    >>> nice_ticks(39576.1)
    (50000.0, 10000.0, 0)
    >>> nice_ticks(0.31)
    (0.4, 0.1, 1)
    >>> nice_ticks(0.0)
    (1.0, 0.2, 1)
    """
    top = max(top, 0.0) * 1.15 or 1.0
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    end = math.ceil(top / step - 1e-9) * step
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step, decimals) != step:
        decimals += 1  # 2.5, 0.25
    return float(round(end, decimals)), float(round(step, decimals)), decimals


@dataclass(frozen=True)
class Chart:
    """A bar chart: one bar per category for each series."""

    title: str
    categories: list[str]
    series: dict[str, list[float]]
    y_label: str


@dataclass
class ExerciseResult:
    """What an exercise measured, ready to show: a table, a chart and the explanation.

    ``recorded`` is None for a run made just now; otherwise it says where and when the
    shown result was recorded (the machine here could not run it).
    """

    exercise: str
    headers: list[str]
    rows: list[list[str]]
    explanation: str
    chart: Chart | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    recorded: str | None = None

    def to_json(self) -> str:
        """The result as JSON (how a real run is saved as a recorded one)."""
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> ExerciseResult:
        """Read a result saved with :meth:`to_json`."""
        data = json.loads(text)
        chart = data.pop("chart", None)
        return cls(**data, chart=Chart(**chart) if chart else None)


class LossRun(Protocol):
    """One trx_commit level of a loss exercise: acknowledged commits and how many were lost."""

    @property
    def level(self) -> int:
        """innodb_flush_log_at_trx_commit for this run."""
        ...

    @property
    def acked(self) -> int:
        """Commits the server acknowledged."""
        ...

    @property
    def lost(self) -> int:
        """Acknowledged commits missing afterwards."""
        ...

    @property
    def window(self) -> int:
        """Commits acknowledged in the last flush window before the cut."""
        ...

    @property
    def within_bound(self) -> bool:
        """Whether the loss stayed within what that level allows."""
        ...


def _yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def loss_result(
    exercise: str,
    runs: Sequence[LossRun],
    *,
    lost_header: str,
    chart_title: str,
    figures: dict[str, Any],
    explanation: str,
) -> ExerciseResult:
    """The table and chart of a loss exercise (server crash, power cut): one row per level."""
    return ExerciseResult(
        exercise=exercise,
        headers=[
            "trx_commit",
            "acknowledged",
            lost_header,
            f"acked in last {figures['window_seconds']:.0f} s",
            "as expected",
        ],
        rows=[
            [
                str(r.level),
                str(r.acked),
                str(r.lost),
                str(r.window),
                "yes" if r.within_bound else "NO",
            ]
            for r in runs
        ],
        chart=Chart(
            title=chart_title,
            categories=[f"trx_commit={r.level}" for r in runs],
            series={
                "lost": [float(r.lost) for r in runs],
                # At 1 every acknowledged commit was on disk: nothing was at risk.
                "at risk (last window)": [0.0 if r.level == 1 else float(r.window) for r in runs],
            },
            y_label="commits",
        ),
        explanation=explanation,
        figures=figures,
    )
