"""Event-loop stalls of the wizard while it works, and start-up time to the first window.

Run from the project directory (`make bench-stalls`):

    .venv/bin/python -m tests.benchmarks.bench_stalls [--runs 5]

A 5 ms QTimer on the GUI thread records how late each tick fires while the wizard really
connects to a practice server (started in a temporary data directory), inspects it, and
plans as sliders move. A late tick is time the window could not repaint or take input.
It prints the worst stall and the 99th percentile per step (goal: worst under 100 ms), and
the median start-up time to the first shown window over --runs fresh processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TICK_MS = 5


def startup_seconds(runs: int) -> list[float]:
    """Wall time from starting a fresh interpreter to the wizard's first shown frame."""
    probe = (
        "import time, sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from app.ui.wizard import MainWizard\n"
        "app = QApplication(sys.argv)\n"
        "w = MainWizard(); w.show(); app.processEvents()\n"
        "print('shown')\n"
    )
    times = []
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        )
        assert "shown" in out.stdout
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication, QSlider

    from app.domain.threads import register_gui_thread
    from app.practice.practice import PracticeServer
    from app.ui.pages.connect import ConnectPage
    from app.ui.wizard import MainWizard

    app = QApplication(sys.argv[:1])
    register_gui_thread()
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(max(0.0, now - last[0] - TICK_MS))
        last[0] = now

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)

    def measure(name: str, start: Callable[[], None], done: Callable[[], bool]) -> None:
        gaps.clear()
        last[0] = clock.elapsed()
        timer.start()
        started = time.perf_counter()
        # Run the step from the event loop, as a click would, so a tick can be late for it.
        QTimer.singleShot(0, start)
        app.processEvents()
        while not done() or len(gaps) < 3:
            app.processEvents()
            time.sleep(0.001)
        timer.stop()
        took = time.perf_counter() - started
        ordered = sorted(gaps) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(
            f"{name:<34} took {took:6.2f} s   worst stall {ordered[-1]:6.1f} ms   "
            f"p99 {p99:5.1f} ms   ticks {len(ordered)}"
        )

    with tempfile.TemporaryDirectory(prefix="innotune-stalls-") as tmp:
        wizard = MainWizard()
        wizard.show()
        connect = wizard.currentPage()
        assert isinstance(connect, ConnectPage)
        connect.practice_dir = Path(tmp) / "practice"
        try:
            measure(
                "connect (start practice + doctor)",
                connect.start_check,
                lambda: (
                    connect.job is not None
                    and not connect.job.is_running()
                    and connect.view.check.isEnabled()
                ),
            )
            assert wizard.state.connected, connect.view.message.text()
            wizard.pages["Inspect"].sample.setValue(2)  # type: ignore[attr-defined]
            measure("inspect (2 s sampling)", wizard.next, lambda: wizard.state.facts is not None)
            measure("plan (open Trade-offs)", wizard.next, lambda: wizard.state.plan is not None)
            page = wizard.pages["Trade-offs"]
            sliders = [
                s.control
                for s in page.sections.values()  # type: ignore[attr-defined]
                if isinstance(s.control, QSlider)
            ]

            moves = [
                (control, value)
                for control in sliders
                for value in range(
                    control.minimum(),
                    control.maximum() + 1,
                    max(1, (control.maximum() - control.minimum()) // 6),
                )
            ]
            count = len(moves)

            def move_next() -> None:
                # One move per event-loop turn, as a person dragging a slider would.
                if moves:
                    control, value = moves.pop(0)
                    control.setValue(value)
                    QTimer.singleShot(20, move_next)

            measure(f"plan (move sliders, {count} moves)", move_next, lambda: not moves)
        finally:
            if wizard.state.connection is not None:
                wizard.state.connection.close()
            stopper = PracticeServer(Path(tmp) / "practice")
            import threading

            worker = threading.Thread(target=stopper.stop)  # never on the GUI thread
            worker.start()
            worker.join()
        wizard.close()
        wizard.deleteLater()
        app.processEvents()
    times = startup_seconds(args.runs)
    print(
        f"start-up to first window: median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, max {max(times):.2f}, {args.runs} runs)",
        flush=True,
    )
    # Skip interpreter teardown: PySide6 can crash collecting Qt wrappers after the run.
    os._exit(0)


if __name__ == "__main__":
    main()
