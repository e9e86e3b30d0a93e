"""Screenshots of every wizard page, from a real run against the practice server.

Run from the checkout (``make screenshots``); the PNGs land in installers/screenshots/ and are
committed, so README.md shows the current code. The script starts its own Xvfb (a real X
server: Qt's xcb plug-in, real fonts and style, no window manager needed) and runs the wizard
with XDG_DATA_HOME and XDG_CONFIG_HOME in a temporary directory, so the practice server it
starts is a throwaway one and the user's own settings and profiles are neither read nor
written. The flow is the one a person follows: Check on the Connect page starts the practice
server, Next inspects, plans and previews, Apply applies (with the restart), Verify runs a
two-second "before" benchmark. The practice server is stopped from a worker thread at the end
(the transport layer refuses to run on the GUI thread).

    python installers/make_screenshots.py [--out installers/screenshots] [--scale 2]

``--scale 2`` sets QT_SCALE_FACTOR=2 (a HiDPI check; the window is then 2000×1520 pixels).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.domain.bench import BenchReport

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1000, 760
INNER = "INNOTUNE_SCREENSHOTS_INNER"


def start_xvfb(scale: float) -> tuple[subprocess.Popen[bytes], str]:
    """Start Xvfb on a free display number (it tells us which through -displayfd)."""
    if shutil.which("Xvfb") is None:
        sys.exit("Xvfb is missing: apt install xvfb (make sysdeps-test installs it)")
    read, write = os.pipe()
    size = f"{int(WIDTH * scale) + 200}x{int(HEIGHT * scale) + 200}x24"
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        server.kill()
        sys.exit("Xvfb did not start")
    return server, f":{number}"


def outer(args: argparse.Namespace) -> int:
    """Start Xvfb and a temporary home for the run, run the inner part, clean up."""
    server, display = start_xvfb(args.scale)
    try:
        with tempfile.TemporaryDirectory(prefix="innotune-shots-") as tmp:
            env = dict(
                os.environ,
                DISPLAY=display,
                QT_QPA_PLATFORM="xcb",
                XDG_DATA_HOME=str(Path(tmp) / "data"),
                XDG_CONFIG_HOME=str(Path(tmp) / "config"),
                XDG_RUNTIME_DIR=tmp,
                **{INNER: "1"},
            )
            env.pop("WAYLAND_DISPLAY", None)
            if args.scale != 1:
                env["QT_SCALE_FACTOR"] = f"{args.scale:g}"
            argv = [sys.executable, __file__, "--out", str(args.out), "--scale", f"{args.scale:g}"]
            return subprocess.run(argv, env=env, cwd=ROOT, check=False).returncode
    finally:
        server.terminate()
        server.wait(10)


def inner(args: argparse.Namespace) -> int:
    """Drive the wizard through every page and save one PNG per page."""
    from PySide6.QtCore import QEventLoop, Qt
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app import APP_NAME, __version__
    from app.domain.threads import register_gui_thread
    from app.ui.launch import window_icon
    from app.ui.wizard import MainWizard

    app = QApplication([APP_NAME])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setWindowIcon(window_icon())
    register_gui_thread()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def wait_for(what: str, done: Callable[[], bool], timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            time.sleep(0.02)

    def settle(seconds: float = 0.3) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.01)

    def shoot(name: str) -> None:
        settle()
        image = wizard.grab().toImage()
        # Pages are mostly flat colours: a 256-colour palette keeps the text crisp and makes
        # the files several times smaller than 32-bit PNGs.
        small = image.convertToFormat(
            QImage.Format.Format_Indexed8,
            Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither,
        )
        path = out / f"{name}.png"
        if not small.save(str(path), "PNG", 0):  # quality 0: the strongest compression
            raise SystemExit(f"could not write {path}")
        print(f"{path}  {image.width()}×{image.height()}  {path.stat().st_size // 1024} KiB")

    wizard = MainWizard()
    wizard.resize(WIDTH, HEIGHT)
    wizard.show()
    settle(1.0)
    stopped = False
    try:
        connect = wizard.pages["Connect"]
        connect.view.practice.setChecked(True)  # type: ignore[attr-defined]
        connect.view.check.click()  # type: ignore[attr-defined]
        wait_for("the connection check", lambda: wizard.state.connected, 240)
        wait_for("the check to finish", lambda: not connect.task.is_running())  # type: ignore[attr-defined]
        shoot("1-connect")

        wizard.pages["Inspect"].sample.setValue(2)  # type: ignore[attr-defined]
        wizard.next()
        wait_for("the inspection", lambda: wizard.state.facts is not None)
        shoot("2-inspect")

        wizard.next()
        wait_for("the plan", lambda: wizard.state.plan is not None)
        # Move the sliders as a user trying things would: commits confirmed by the OS cache,
        # a bigger buffer pool and redo log, so the later pages have changes to show.
        sections = wizard.pages["Trade-offs"].sections  # type: ignore[attr-defined]
        sections["crash_loss"].control.setValue(1)
        sections["memory"].control.setValue(20)
        redo = sections["redo"].control
        redo.setValue(redo.maximum())
        wait_for("the new plan", lambda: bool(wizard.state.plan and wizard.state.plan.changes))
        sections["crash_loss"].setFocus()
        shoot("3-tradeoffs")

        wizard.next()
        wait_for("the preview", lambda: wizard.state.preview is not None)
        shoot("4-preview")

        # A real "before" benchmark of the practice server as it is, before anything changes
        # (the Verify page's own run, in a worker as the page runs it), so Verify can show
        # before and after side by side.
        before = run_before_bench(wizard, wait_for)

        wizard.next()
        apply = wizard.pages["Apply"]
        apply.consent.setChecked(True)  # type: ignore[attr-defined]
        apply.apply_button.click()  # type: ignore[attr-defined]
        wait_for("the apply", lambda: not apply.task.is_running(), 300)  # type: ignore[attr-defined]
        if apply.status is None:  # type: ignore[attr-defined]
            print("the apply failed: " + apply.state_label.text(), file=sys.stderr)  # type: ignore[attr-defined]
        shoot("5-apply")

        wizard.next()
        verify = wizard.pages["Verify"]
        wait_for("the write rate", lambda: not verify.running())  # type: ignore[attr-defined]
        verify.seconds.setValue(2)  # type: ignore[attr-defined]
        verify.threads.setValue(2)  # type: ignore[attr-defined]
        verify.use_sysbench.setChecked(False)  # type: ignore[attr-defined]
        wizard.state.bench_before = before
        verify.show_results()  # type: ignore[attr-defined]
        verify.run_after.click()  # type: ignore[attr-defined]

        def after_done() -> bool:
            box = verify.confirm_box  # type: ignore[attr-defined]
            if box is not None:  # the practice server is idle; answer yes if asked anyway
                box.done(QMessageBox.StandardButton.Yes)
            return wizard.state.bench_after is not None and not verify.running()  # type: ignore[attr-defined]

        wait_for("the benchmark", after_done, 120)
        shoot("6-verify")

        wizard.next()
        shoot("7-done")
        stop_practice(wizard, wait_for)
        stopped = True
    finally:
        if not stopped:
            stop_practice(wizard, wait_for)
        wizard.hide()
    sys.stdout.flush()
    # Leave at once: tearing the Qt objects down at interpreter exit, with worker threads'
    # QObjects around, has crashed PySide6 (none_dealloc); the work is saved and stopped.
    os._exit(0)


def run_before_bench(wizard: object, wait_for: Callable[..., None]) -> BenchReport:
    """The Verify page's "before" run, a task on the host's worker before the changes."""
    from app.domain.bench import BenchReport
    from app.ui.hostworker import Task
    from app.ui.pages.verify import BenchInputs, run_bench

    state = wizard.state  # type: ignore[attr-defined]
    out: list[object] = []
    inputs = BenchInputs(state.target, state.secrets, "before", 2, 2, False, None)
    task = state.host.submit(Task("benchmark", run_bench, inputs))
    task.finished.connect(out.append)
    task.failed.connect(out.append)
    wait_for("the before benchmark", lambda: bool(out), 120)
    if isinstance(out[0], BaseException):
        raise SystemExit(f"the before benchmark failed: {out[0]}")
    assert isinstance(out[0], BenchReport)
    return out[0]


def stop_practice(wizard: object, wait_for: Callable[..., None]) -> None:
    """Close the connection and stop the practice server, in a worker thread."""
    from app.places import default_practice_dir
    from app.practice.practice import PracticeServer

    state = wizard.state  # type: ignore[attr-defined]
    directory = default_practice_dir()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            state.stop_hosts()  # every task ended, the connection closed
            if directory.exists():
                PracticeServer(directory).stop()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=work, name="stop-practice")
    thread.start()
    wait_for("the practice server to stop", lambda: not thread.is_alive(), 180)
    if errors:
        print(f"stopping the practice server failed: {errors[0]}", file=sys.stderr)


def main() -> int:
    """Outside: start Xvfb and re-run this script inside it; inside: take the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "installers" / "screenshots")
    parser.add_argument("--scale", type=float, default=1.0, help="QT_SCALE_FACTOR (HiDPI check)")
    args = parser.parse_args()
    args.out = args.out.resolve()
    if os.environ.get(INNER) == "1":
        return inner(args)
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
