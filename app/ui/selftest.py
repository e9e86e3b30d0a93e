"""``innotune --self-test``: prove this installation can run, without a screen or a server.

For CI and for users reporting a problem: it starts Qt (offscreen unless QT_QPA_PLATFORM
says otherwise), loads every data file and library the program loads lazily, builds the
wizard and renders each page, and prints one line per check. A frozen build runs the same
code, so a file or plug-in the bundle lacks shows up here instead of in the middle of a job.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

# What the frozen build must carry: the libraries whose package metadata is read at run
# time (paramiko >= 4 reads its own version at import) and the modules loaded lazily.
DISTRIBUTIONS = ("paramiko", "cryptography", "bcrypt", "PyNaCl", "PyMySQL", "psutil", "keyring")
LAZY_MODULES = (
    "app.remote.ssh",  # paramiko, cryptography, bcrypt, nacl
    "app.mysql.session",  # PyMySQL
    "app.practice.practice",
    "app.jobs.runner",
    "app.bench",
    "PySide6.QtCharts",  # the Verify page's chart
)


class SelfTestFailed(Exception):
    """One check failed; the message says which and why."""


def _process_age() -> float:
    """Seconds since this process started (psutil's create_time), for time-to-window."""
    import psutil

    return time.time() - psutil.Process().create_time()


def _check_resources() -> str:
    from app.knobs.sliders import load_sliders
    from app.resources import resource_path

    wanted = ["glossary.toml", "sliders.toml", "practice/seed.sql", "practice/workload.sql"]
    missing = [name for name in wanted if not resource_path(name).is_file()]
    knob_files = sorted(resource_path("knobs").glob("*.toml"))
    if missing or not knob_files:
        raise SelfTestFailed(f"missing under {resource_path()}: {missing or ['knobs/*.toml']}")
    load_sliders()  # strictly: a malformed declaration fails here, not on the Trade-offs page
    return f"{len(knob_files)} knob files, glossary, sliders, practice SQL in {resource_path()}"


def _check_catalogue() -> str:
    from app.knobs import load_catalogue
    from app.knobs.glossary import glossary

    catalogue = load_catalogue()
    terms = glossary()
    if not catalogue.names() or not terms:
        raise SelfTestFailed("the catalogue or the glossary is empty")
    return f"{len(catalogue.names())} knobs, {len(terms)} glossary terms"


def _check_modules() -> str:
    for name in LAZY_MODULES:
        importlib.import_module(name)
    return ", ".join(LAZY_MODULES)


def _check_metadata() -> str:
    return ", ".join(f"{dist} {importlib.metadata.version(dist)}" for dist in DISTRIBUTIONS)


def _check_keyring() -> str:
    from app.access.keyring_store import platform_backend

    backend = platform_backend()
    # The Secret Service backend imports its D-Bus libraries only if present: ask for them.
    needed = ("secretstorage", "jeepney") if backend.__module__.endswith("SecretService") else ()
    for name in needed:
        importlib.import_module(name)
    return f"{backend.__module__}.{backend.__qualname__} loads" + (
        f" with {', '.join(needed)}" if needed else ""
    )


def _check_wizard() -> str:
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QApplication

    from app import APP_NAME, __version__
    from app.domain.threads import register_gui_thread
    from app.ui.wizard import MainWizard

    existing = QApplication.instance()
    app = existing or QApplication([sys.argv[0] if sys.argv else APP_NAME])
    assert isinstance(app, QApplication)
    if existing is None:  # set up as launch.py does; an application already running keeps its own
        app.setApplicationName(APP_NAME)
        app.setOrganizationName(APP_NAME)  # QSettings: ~/.config/InnoTune/InnoTune.conf
        app.setApplicationVersion(__version__)
        register_gui_thread()
    from app.ui.launch import window_icon

    icon = window_icon()
    if not icon.availableSizes():
        raise SelfTestFailed("the window icon did not load")
    if existing is None:
        app.setWindowIcon(icon)
    wizard = MainWizard()
    try:
        wizard.show()
        app.processEvents()
        shown = _process_age()
        seen = []
        for page_id in wizard.pageIds():
            page = wizard.page(page_id)
            # grab() lays out and paints the page off screen: styles, fonts, icons, the
            # chart; initializePage() is not called, as it would reach for a server.
            image = page.grab()
            if image.isNull() or image.width() < 1:
                raise SelfTestFailed(f"page {page.title()!r} did not render")
            seen.append(page.title())
        return (
            f"Qt {qVersion()}, platform {app.platformName()}, style {app.style().name()}, "
            f"icon {len(icon.availableSizes())} sizes, "
            f"window shown {shown:.2f} s after start; pages: {', '.join(seen)}"
        )
    finally:
        wizard.hide()  # not close(): that would save this window's geometry as the user's
        wizard.deleteLater()
        app.processEvents()


CHECKS: tuple[tuple[str, Callable[[], str]], ...] = (
    ("resources", _check_resources),
    ("catalogue", _check_catalogue),
    ("modules", _check_modules),
    ("package metadata", _check_metadata),
    ("keyring", _check_keyring),
    ("wizard", _check_wizard),
)


def run_self_test(out: TextIO | None = None) -> int:
    """Run every check, print one line each; 0 when all passed, 1 otherwise."""
    from app import APP_NAME, __version__

    stream = out or sys.stdout
    frozen = "frozen" if getattr(sys, "frozen", False) else "from source"
    print(
        f"{APP_NAME} {__version__} self-test ({frozen}, Python {sys.version.split()[0]})",
        file=stream,
    )
    failed = 0
    for name, check in CHECKS:
        try:
            detail = check()
        except Exception as exc:  # noqa: BLE001 - every failure is a finding to print
            failed += 1
            print(f"FAIL {name}: {type(exc).__name__}: {exc}", file=stream)
        else:
            print(f"ok   {name}: {detail}", file=stream)
    verdict = "passed" if not failed else f"FAILED ({failed} of {len(CHECKS)} checks)"
    print(f"self-test {verdict}", file=stream)
    stream.flush()
    return 0 if not failed else 1
