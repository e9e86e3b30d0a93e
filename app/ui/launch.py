"""Start the Qt application and show the wizard."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon


def _display_available() -> bool:
    if os.environ.get("QT_QPA_PLATFORM", "").startswith(("offscreen", "minimal", "vnc")):
        return True
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# The libraries Qt's xcb platform plug-in loads from the system, with the Debian/Ubuntu package
# that has each (found by `ldd libqxcb.so` on PySide6 6.12). The PySide6 wheels bundle none of
# them; Qt >= 6.5 needs libxcb-cursor0, which desktop installs often lack, and then only says
# "could not load the Qt platform plugin xcb". A PyInstaller build carries most of them in
# _internal/ (found first, so they pass here), but never libxcb, libEGL or libGL.
XCB_LIBRARIES = {
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


def _uses_xcb() -> bool:
    """True when Qt will pick its xcb (X11) platform plug-in on this Linux system."""
    if sys.platform != "linux":
        return False
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(";")[0].split(":")[0] == "xcb"
    # Unset: Qt 6 prefers Wayland in a Wayland session and falls back to xcb otherwise.
    wayland = os.environ.get("WAYLAND_DISPLAY") and os.environ.get("XDG_SESSION_TYPE") == "wayland"
    return bool(os.environ.get("DISPLAY")) and not wayland


def missing_libraries(sonames: dict[str, str] | None = None) -> list[str]:
    """The shared libraries (sonames) of ``sonames`` that the dynamic loader cannot load."""
    import ctypes

    missing = []
    for soname in sonames or XCB_LIBRARIES:
        try:
            ctypes.CDLL(soname)  # loads what Qt would load a moment later anyway
        except OSError:
            missing.append(soname)
    return missing


def missing_libraries_message(missing: list[str], packages: dict[str, str] | None = None) -> str:
    """What to tell the user when libraries Qt needs are not installed."""
    names = packages or XCB_LIBRARIES
    debs = " ".join(dict.fromkeys(names.get(soname, soname) for soname in missing))
    return (
        "InnoTune cannot open its window: these system libraries are missing:\n"
        + "".join(f"  - {soname}\n" for soname in missing)
        + "Install them, then start InnoTune again:\n"
        + f"  - Debian, Ubuntu: sudo apt install {debs}\n"
        + "  - Fedora, RHEL: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms "
        "xcb-util-renderutil xcb-util-image libxkbcommon-x11\n"
        + "  - openSUSE: sudo zypper install libxcb-cursor0 libxkbcommon-x11-0\n"
        + "The command line works without them: innotune --help\n"
    )


def _tell_desktop_user(text: str) -> None:
    """Started from a menu, stderr goes nowhere: show the message with a desktop tool too."""
    import shutil
    import subprocess

    if sys.stderr.isatty():
        return
    for tool, argv in (
        ("zenity", ["zenity", "--error", "--no-markup", "--title=InnoTune", f"--text={text}"]),
        ("kdialog", ["kdialog", "--title", "InnoTune", "--error", text]),
        ("xmessage", ["xmessage", text]),
    ):
        if shutil.which(tool):
            subprocess.run(argv, check=False, timeout=600)
            return


NO_DISPLAY = """InnoTune needs a display to open its window, and none was found.
  - On a desktop, start it from a terminal inside the graphical session.
  - Over SSH, connect with 'ssh -X', or use a virtual screen: xvfb-run -a innotune
  - Without a screen, use the command line: innotune --help
"""


def window_icon() -> QIcon:
    """The program's icon at every size shipped (PNG, so no SVG plug-in is needed)."""
    from PySide6.QtGui import QIcon

    from app.resources import resource_path

    icon = QIcon()
    for png in sorted(resource_path("icons").glob("innotune-*.png")):
        icon.addFile(str(png))
    return icon


def freeze_startup_objects() -> None:
    """Keep the objects made at start-up out of Python's full garbage collections.

    Start-up leaves some 50,000 long-lived objects (modules, classes, Qt wrappers, the
    knob catalogue). Each full collection walks them all, 27-46 ms during which every
    thread stops, and one used to fall into the Connect check. Frozen, they are never
    scanned again; later objects are collected as before. No ``gc.collect()`` first: that
    would be the very pause this avoids, and start-up makes little cyclic garbage.
    """
    import gc

    gc.freeze()


def launch_wizard(argv: list[str] | None = None) -> int:
    """Open the wizard window and run the event loop."""
    if not _display_available():
        sys.stderr.write(NO_DISPLAY)
        return 2
    if _uses_xcb():
        missing = missing_libraries()
        if missing:
            text = missing_libraries_message(missing)
            sys.stderr.write(text)
            _tell_desktop_user(text)
            return 3
    from PySide6.QtWidgets import QApplication

    from app import APP_NAME, __version__
    from app.domain.threads import register_gui_thread
    from app.ui.wizard import MainWizard

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)  # QSettings: ~/.config/InnoTune/InnoTune.conf
    app.setApplicationVersion(__version__)
    assert isinstance(app, QApplication)
    app.setDesktopFileName("innotune")  # Wayland matches the window to innotune.desktop
    app.setWindowIcon(window_icon())
    register_gui_thread()
    from app.logsetup import setup_logging
    from app.places import app_data_dir

    setup_logging(app_data_dir() / "logs")
    wizard = MainWizard()
    wizard.show()
    from PySide6.QtCore import QTimer

    # Once the events of the first show are handled: what they made is long-lived too.
    QTimer.singleShot(0, freeze_startup_objects)
    return int(app.exec())
