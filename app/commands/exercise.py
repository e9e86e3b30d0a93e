"""`innotune exercise list | NAME`: a teaching exercise on the practice server, from a terminal."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.commands import Handler

if TYPE_CHECKING:  # the exercises load when one runs, not with every command
    from app.flows.exercising import ExerciseResult


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add the ``exercise`` subcommand."""
    parser = subparsers.add_parser(
        "exercise",
        help="run a teaching exercise on the practice server and show what it measured",
        description="Run one of the Exercises window's experiments on the practice server "
        "(started, and set up on first use, if needed): a progress line per phase on stderr, "
        "then the measured table and what it shows. NAME 'list' lists the exercises. The "
        "settings an exercise changes are put back at its end.",
    )
    parser.add_argument("name", metavar="NAME", help="an exercise's name, or 'list'")
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="the practice server's directory (default: <data directory>/practice)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a shorter run (fewer rows, rounds and seconds): quicker, less certain figures",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the figures and the conclusion as JSON"
    )
    parser.add_argument("--out", metavar="FILE", help="also save the result as JSON in FILE")
    handlers["exercise"] = run


def run(args: argparse.Namespace) -> int:
    """List the exercises, or run one and print its result."""
    from app.flows.exercising import exercises, practice_lab, run_exercise

    texts = exercises()
    if args.name == "list":
        if args.json:
            print(
                json.dumps(
                    [{"name": t.id, "title": t.title, "takes": t.duration} for t in texts], indent=2
                )
            )
        else:
            width = max(len(t.id) for t in texts)
            for t in texts:
                print(f"{t.id:<{width}}  {t.title} ({t.duration})")
        return 0
    if args.name not in {t.id for t in texts}:
        names = ", ".join(t.id for t in texts)
        print(f"innotune: no exercise {args.name!r}; the exercises: {names}", file=sys.stderr)
        return 2
    base = Path(args.dir) if args.dir else _default_dir()
    lab = practice_lab(base, _progress)
    result = run_exercise(args.name, lab, quick=args.quick)
    data = asdict(result)
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(render(result))
    return 0


def _default_dir() -> Path:
    from app.places import default_practice_dir

    return default_practice_dir()


def _progress(text: str) -> None:
    # Progress goes to stderr, so stdout is only the result (and stays parseable).
    print(text, file=sys.stderr, flush=True)


def render(result: ExerciseResult) -> str:
    """The result table (aligned columns), then what it shows."""
    table = [result.headers, *result.rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(result.headers))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    parts = ["\n".join(lines), result.explanation]
    if result.recorded:
        parts.insert(0, f"Recorded result, not a run here: {result.recorded}")
    return "\n\n".join(parts)
