"""Screenshots of every wizard page, from a real run against the practice server or a test host.

Run from the checkout (``make screenshots``); the PNGs land in installers/screenshots/ and are
committed, so README.md shows the current code.

``--target sid`` or ``--target trixie`` (``make screenshots TARGET=sid``, root) boots that
Debian test host (MySQL 9.7 or MariaDB 11.8 under systemd, tests/hosts/debian_hosts.py) and
walks it as a person would over SSH: the host-key question, the check, every page before
Apply, the apply (with its restart), Verify's before/after benchmark, Done, then Inspect,
Trade-offs and Preview again on the changed server; ``--exercises`` adds each exercise of the
Exercises window, run for real on a throwaway practice server. A fresh boot per scale, so
each walk starts from the untouched server. The pictures go to
docs/screenshots/<host>/<scale>x/NN-page.png, grabbed from the X server's screen (what the
window really shows, dialogs included), and ``--record DIR`` keeps what the walk saw (the
check's steps, the facts, the benchmark reports) as JSON for the layout tests.

The script starts its own Xvfb (a real X server: Qt's xcb plug-in, real fonts and style, no window
manager needed) and runs the wizard with XDG_DATA_HOME and XDG_CONFIG_HOME in a temporary
directory, so the practice server it starts is a throwaway one and the user's own settings and
profiles are neither read nor written. The flow is the one a person follows: Check on the Connect
page starts the practice server, Next inspects, plans and previews, Apply applies (with the
restart), Verify runs a two-second "before" benchmark. The practice server is stopped from a
worker thread at the end (the transport layer refuses to run on the GUI thread).

    python installers/make_screenshots.py [--out installers/screenshots] [--scale 2]
    python installers/make_screenshots.py --target sid --scales 1,2 [--exercises]
    python installers/make_screenshots.py --target sid --only recommendation

``--only recommendation`` (a comma list of page names) pictures those pages alone, unnumbered,
beside the set, and ends the walk there.

``--scale 2`` sets QT_SCALE_FACTOR=2 (a HiDPI check; the window is then 2000×1520 pixels).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1000, 760  # the practice walk's window (README's pictures)
INNER = "INNOTUNE_SCREENSHOTS_INNER"
HOST = "INNOTUNE_SCREENSHOTS_HOST"  # the booted host, as JSON, for the inner part
TARGETS = ("practice", "sid", "trixie", "bullseye")


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


def run_inner(args: argparse.Namespace, scale: float, out: Path, host: dict[str, Any]) -> int:
    """Start Xvfb and a temporary home for one walk, run the inner part in it, clean up."""
    server, display = start_xvfb(scale)
    try:
        with tempfile.TemporaryDirectory(prefix="innotune-shots-") as tmp:
            env = dict(
                os.environ,
                DISPLAY=display,
                QT_QPA_PLATFORM="xcb",
                XDG_DATA_HOME=str(Path(tmp) / "data"),
                XDG_CONFIG_HOME=str(Path(tmp) / "config"),
                XDG_RUNTIME_DIR=tmp,
                **{INNER: "1", HOST: json.dumps(host)},
            )
            env.pop("WAYLAND_DISPLAY", None)
            env.pop("QT_SCALE_FACTOR", None)
            if scale != 1:
                env["QT_SCALE_FACTOR"] = f"{scale:g}"
            argv = [sys.executable, __file__, "--out", str(out), "--target", args.target]
            if args.exercises:
                argv.append("--exercises")
            if args.record is not None:
                argv += ["--record", str(args.record)]
            if args.only:
                argv += ["--only", args.only]
            return subprocess.run(argv, env=env, cwd=ROOT, check=False).returncode
    finally:
        server.terminate()
        server.wait(10)


def outer(args: argparse.Namespace) -> int:
    """Per scale: boot the target (a fresh one each time), walk it under Xvfb, power it off."""
    if args.target == "practice":
        scale = args.scales[0]
        return run_inner(args, scale, args.out or ROOT / "installers" / "screenshots", {})
    if os.geteuid() != 0:
        sys.exit(f"run as root: the {args.target} test host boots with systemd")
    sys.path.insert(0, str(ROOT))
    from tests.hosts.debian_hosts import SPECS, DebianHost

    base = args.out or ROOT / "docs" / "screenshots" / args.target
    failed = 0
    for scale in args.scales:
        work = Path(tempfile.mkdtemp(prefix=f"innotune-shots-{args.target}-"))
        host = DebianHost(SPECS[args.target], work / "host")
        try:
            host.boot()
            version = host.sql("SELECT @@version").strip()
            print(f"{args.target}: {version} booted in {host.boot_seconds:.1f} s", flush=True)
            about = {
                "name": args.target,
                "port": host.ssh_port,
                "key": str(host.client_key),
                "version": version,
            }
            code = run_inner(args, scale, base / f"{scale:g}x", about)
            failed = failed or code
        finally:
            host.poweroff()
            with contextlib.suppress(OSError):
                shutil.rmtree(work)
    return failed


class WalkDone(Exception):
    """Every page asked for with --only is pictured: the walk ends there."""


def inner(args: argparse.Namespace) -> int:
    """Drive the wizard through every page and save one PNG per page (and per exercise)."""
    from PySide6.QtCore import QEventLoop, Qt
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication, QScrollArea, QWidget

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
    if os.environ.get(HOST) and not args.only:
        # A walk of a host pictures the whole set again: an older set's numbering differs.
        for old in out.glob("[0-9][0-9]-*.png"):
            old.unlink()
    host: dict[str, Any] = json.loads(os.environ.get(HOST) or "{}")
    walk = "practice" if not host else "host"
    shots: list[str] = []
    only = {x for x in args.only.split(",") if x}
    wanted = set(only)

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

    def shoot(name: str, window: QWidget | None = None) -> None:
        if only and not any(name.split("-", 1)[-1].startswith(x) for x in only):
            return
        wanted.difference_update(x for x in only if name.split("-", 1)[-1].startswith(x))
        settle()
        window = window or wizard
        if walk == "practice":
            image = window.grab().toImage()
        else:
            # The screen itself, where the window (and any dialog over it) is drawn: what a
            # person sees, not the widget asked to paint itself again.
            frame = window.frameGeometry()
            screen = window.screen()
            image = screen.grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
            image = image.toImage()
        # Pages are mostly flat colours: a 256-colour palette keeps the text crisp and makes
        # the files several times smaller than 32-bit PNGs.
        small = image.convertToFormat(
            QImage.Format.Format_Indexed8,
            Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither,
        )
        if walk == "host" and not only:
            name = f"{len(shots) + 1:02d}-{name}"
        shots.append(name)
        path = out / f"{name}.png"
        if not small.save(str(path), "PNG", 0):  # quality 0: the strongest compression
            raise SystemExit(f"could not write {path}")
        print(f"{path}  {image.width()}×{image.height()}  {path.stat().st_size // 1024} KiB")
        if only and not wanted:
            raise WalkDone  # every page asked for is pictured

    def shoot_scrolled(name: str, page: QWidget, window: QWidget | None = None) -> None:
        """A long page: one picture per screenful of its scroll area."""
        areas = [a for a in page.findChildren(QScrollArea) if a.isVisible()]
        if not areas:
            shoot(name, window)
            return
        bar = max(areas, key=lambda a: a.height()).verticalScrollBar()
        part = 1
        bar.setValue(0)
        settle()  # the page's last layout pass decides whether it scrolls at all
        parts = bar.maximum() > 0
        while True:
            shoot(f"{name}-{part}" if parts else name, window)
            if bar.value() >= bar.maximum():
                break
            bar.setValue(bar.value() + bar.pageStep())
            part += 1
        bar.setValue(0)

    def record(name: str, data: object) -> None:
        if args.record is not None and walk == "host":
            where = args.record / host["name"]
            where.mkdir(parents=True, exist_ok=True)
            (where / name).write_text(json.dumps(data, indent=1, default=str) + "\n")

    wizard = MainWizard()
    if walk == "practice":
        wizard.resize(WIDTH, HEIGHT)
    wizard.move(0, 0)
    wizard.show()  # the host walk keeps the size a new window opens at
    settle(1.0)
    stopped = False
    try:
        try:
            if walk == "practice":
                practice_walk(wizard, wait_for, shoot, shoot_scrolled)
            else:
                host_walk(wizard, host, wait_for, shoot, shoot_scrolled, record)
            if args.exercises:
                exercises_walk(wizard, wait_for, shoot, shoot_scrolled)
        except WalkDone:
            pass
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


def move_sliders(wizard: Any, wait_for: Callable[..., None]) -> None:
    """Move the sliders as a user trying things would, so the later pages show changes.

    Commits confirmed by the OS cache, a bigger buffer pool and redo log.
    """
    wait_for("the plan", lambda: wizard.state.plan is not None)
    sections = wizard.pages["Trade-offs"].sections
    sections["crash_loss"].control.setValue(1)
    sections["memory"].control.setValue(20)
    redo = sections["redo"].control
    redo.setValue(redo.maximum())
    wait_for("the new plan", lambda: bool(wizard.state.plan and wizard.state.plan.changes))
    sections["crash_loss"].setFocus()


def apply_changes(wizard: Any, wait_for: Callable[..., None]) -> None:
    """Tick the consent, press Apply and wait for the job (with its restart) to end."""
    apply = wizard.pages["Apply"]
    apply.consent.setChecked(True)
    apply.apply_button.click()
    # With "Measure before and after" ticked, the task runs before, the apply and after.
    wait_for("the apply", lambda: apply.task is not None and not apply.task.is_running(), 600)
    if apply.status is None:
        print("the apply failed: " + apply.state_label.text(), file=sys.stderr)


def wait_for_verify(wizard: Any, wait_for: Callable[..., None]) -> None:
    """Verify, filled from the apply's own before and after runs (no click on the page)."""
    verify = wizard.pages["Verify"]
    wait_for("the write rate", lambda: not verify.running())
    if wizard.state.bench_before is None or wizard.state.bench_after is None:
        print("the apply measured no before and after: Verify shows none", file=sys.stderr)


def wait_for_recommendation(wizard: Any, wait_for: Callable[..., None]) -> None:
    """The Recommendation page, its plan shown and its preview built behind it."""
    wait_for("the plan", lambda: wizard.state.plan is not None)
    wait_for("the preview", lambda: wizard.state.preview is not None, 120)


def practice_walk(
    wizard: Any,
    wait_for: Callable[..., None],
    shoot: Callable[..., None],
    shoot_scrolled: Callable[..., None],
) -> None:
    """README's pictures: the practice server, one picture per page."""
    connect = wizard.pages["Connect"]
    connect.view.practice.setChecked(True)
    connect.view.check.click()
    wait_for("the connection check", lambda: wizard.state.connected, 240)
    wait_for("the check to finish", lambda: not connect.task.is_running())
    shoot("1-connect")

    wizard.pages["Inspect"].sample.setValue(2)
    wizard.next()
    wait_for("the inspection", lambda: wizard.state.facts is not None)
    shoot("2-inspect")

    wizard.next()
    wait_for_recommendation(wizard, wait_for)
    shoot("3-recommendation")

    wizard.next()  # Next there: the trade-offs, to adjust
    move_sliders(wizard, wait_for)
    shoot("4-tradeoffs")

    wizard.next()
    wait_for("the preview", lambda: wizard.state.preview is not None)
    shoot("5-preview")

    # Apply measures "before" on the unchanged server and "after" with the change in force
    # (its "Measure before and after" box, ticked on a quiet server), so Verify shows both.
    wizard.next()
    apply_changes(wizard, wait_for)
    shoot("6-apply")
    wizard.next()
    wait_for_verify(wizard, wait_for)
    shoot_scrolled("7-verify", wizard.pages["Verify"])
    wizard.next()
    shoot("8-done")


def host_walk(
    wizard: Any,
    host: dict[str, Any],
    wait_for: Callable[..., None],
    shoot: Callable[..., None],
    shoot_scrolled: Callable[..., None],
    record: Callable[[str, object], None],
) -> None:
    """A test host over SSH: every page before Apply, the apply, and the pages after it."""
    connect = wizard.pages["Connect"]
    view = connect.view
    view.ssh.setChecked(True)
    view.host.setText("127.0.0.1")
    view.port.setText(str(host["port"]))
    view.user.setText("root")
    view.identity.setText(host["key"])
    shoot("connect-form")
    view.check.click()
    wait_for("the host-key question", lambda: connect.host_key_box is not None, 120)
    shoot("connect-host-key")
    connect.trust_button.click()
    wait_for("the connection check", lambda: wizard.state.connected, 240)
    wait_for("the check to finish", lambda: not connect.task.is_running())
    shoot("connect")
    result = wizard.state.connection
    record(
        "check-steps.json",
        [dataclasses.asdict(s) for s in result.steps] if result is not None else [],
    )

    inspect = wizard.pages["Inspect"]
    inspect.sample.setValue(2)
    wizard.next()
    wait_for("the inspection", lambda: wizard.state.facts is not None, 240)
    shoot_scrolled("inspect", inspect)
    record("facts.json", json.loads(wizard.state.facts.to_json()))

    wizard.next()
    wait_for_recommendation(wizard, wait_for)
    shoot_scrolled("recommendation", wizard.pages["Recommendation"])

    wizard.next()  # Next there: the trade-offs, to adjust
    wait_for("the plan", lambda: wizard.state.plan is not None)
    shoot_scrolled("tradeoffs", wizard.pages["Trade-offs"])
    move_sliders(wizard, wait_for)
    shoot_scrolled("tradeoffs-moved", wizard.pages["Trade-offs"])

    wizard.next()
    wait_for("the preview", lambda: wizard.state.preview is not None, 120)
    shoot("preview")

    wizard.next()
    # With a restart: the pages after it must show the new server process, not the old one.
    wizard.pages["Apply"].restart_box.setChecked(True)
    shoot("apply")
    apply_changes(wizard, wait_for)
    shoot("apply-done")
    wizard.next()
    wait_for_verify(wizard, wait_for)
    shoot_scrolled("verify", wizard.pages["Verify"])
    before = wizard.state.bench_before
    record("bench-before.json", json.loads(before.to_json()) if before is not None else None)
    after = wizard.state.bench_after
    record("bench-after.json", json.loads(after.to_json()) if after is not None else None)
    wizard.next()
    shoot("done")

    # After Apply: back to Inspect, inspect the changed server, and plan again from it.
    while wizard.currentPage() is not inspect:
        wizard.back()
        if wizard.currentPage() is wizard.pages["Trade-offs"]:
            shoot("tradeoffs-back")  # planned from facts the apply has put out of date
    wait_for("the page to settle", lambda: not inspect.task or not inspect.task.is_running())
    # The first facts, marked out of date (the apply restarted the server); one click reads
    # the server again.
    shoot("inspect-back")
    inspect.dated.linkActivated.emit("again")
    wait_for("the new inspection", lambda: wizard.state.facts is not None, 240)
    wait_for("the inspection to end", lambda: not inspect.task.is_running())
    shoot_scrolled("inspect-after", inspect)
    wizard.next()
    wait_for("the plan", lambda: wizard.state.plan is not None)
    shoot_scrolled("tradeoffs-after", wizard.pages["Trade-offs"])
    wizard.next()
    wait_for("the preview", lambda: wizard.state.preview is not None, 120)
    shoot("preview-after")


def exercises_walk(
    wizard: Any,
    wait_for: Callable[..., None],
    shoot: Callable[..., None],
    shoot_scrolled: Callable[..., None],
) -> None:
    """Each exercise of the Exercises window: its introduction, then its measured result."""
    from app.ui.exercises import ExercisesDialog

    dialog = ExercisesDialog(wizard)
    wizard.exercises_dialog = dialog
    dialog.move(0, 0)
    dialog.show()
    for key, panel in dialog.panels.items():
        dialog.tabs.setCurrentWidget(panel)
        shoot(f"exercise-{key}", dialog)
        done: list[object] = []
        panel.finished.connect(done.append)
        panel.start_button.click()
        wait_for(f"the {key} exercise", lambda done=done: bool(done), 900)
        wait_for("its end", lambda panel=panel: panel.start_button.isEnabled())
        shoot_scrolled(f"exercise-{key}-result", panel, dialog)
    dialog.done(0)
    wizard.exercises_dialog = None


def stop_practice(wizard: Any, wait_for: Callable[..., None]) -> None:
    """Close the connections and stop the practice server, in a worker thread."""
    from app.places import default_practice_dir
    from app.practice.practice import PracticeServer

    state = wizard.state
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
    parser.add_argument("--out", type=Path, default=None, help="where the PNGs go")
    parser.add_argument("--target", choices=TARGETS, default="practice")
    parser.add_argument("--scale", type=float, default=None, help="QT_SCALE_FACTOR (HiDPI check)")
    parser.add_argument("--scales", default="1", help="comma list of scales, e.g. 1,2")
    parser.add_argument("--exercises", action="store_true", help="each exercise too")
    parser.add_argument("--record", type=Path, default=None, help="keep what the walk saw here")
    parser.add_argument(
        "--only", default="", help="picture only these pages (comma list of names), then stop"
    )
    args = parser.parse_args()
    if args.scale is not None:
        args.scales = [args.scale]
    else:
        args.scales = [float(x) for x in str(args.scales).split(",") if x]
    if args.out is not None:
        args.out = args.out.resolve()
    if args.record is not None:
        args.record = args.record.resolve()
    if os.environ.get(INNER) == "1":
        return inner(args)
    return outer(args)


if __name__ == "__main__":
    sys.exit(main())
