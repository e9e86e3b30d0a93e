"""Start the Qt application and show the wizard."""

from __future__ import annotations

import os
import sys


def _display_available() -> bool:
    if os.environ.get("QT_QPA_PLATFORM", "").startswith(("offscreen", "minimal", "vnc")):
        return True
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


NO_DISPLAY = """InnoTune needs a display to open its window, and none was found.
  - On a desktop, start it from a terminal inside the graphical session.
  - Over SSH, connect with 'ssh -X', or use a virtual screen: xvfb-run -a innotune
  - Without a screen, use the command line: innotune --help
"""


def launch_wizard(argv: list[str] | None = None) -> int:
    """Open the wizard window and run the event loop."""
    if not _display_available():
        sys.stderr.write(NO_DISPLAY)
        return 2
    from PySide6.QtWidgets import QApplication

    from app import APP_NAME, __version__
    from app.domain.threads import register_gui_thread
    from app.ui.wizard import MainWizard

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(__version__)
    register_gui_thread()
    from app.logsetup import setup_logging
    from app.ui.paths import app_data_dir

    setup_logging(app_data_dir() / "logs")
    wizard = MainWizard()
    wizard.show()
    return int(app.exec())
