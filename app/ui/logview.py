"""The session's log, one click away: a dialog with the log file, scrolled to its end.

The file is the one :func:`app.logsetup.setup_logging` writes: every record was masked by
:mod:`app.domain.redact` before it reached the file, and the text is masked once more on
its way to the dialog, so a line logged by someone else's handler cannot show a secret.
"""

from __future__ import annotations

import html
import logging
import logging.handlers
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.errors import InnoTuneError
from app.domain.redact import redact

# What an error area links to: the page's label sends it to :func:`open_log`.
LOG_LINK = "innotune:log"
DETAILS_LINK = f' <a href="{LOG_LINK}">Details…</a>'
# What to do next when an error is not one InnoTune knows how to explain.
BUG_FIX = "This looks like a bug in InnoTune: please attach the log (Details…) to a bug report."
# The most the dialog reads: the rotating file stays under 1 MiB anyway.
MAX_BYTES = 2 << 20


def current_log_file() -> Path:
    """The log file this process writes (the default place when logging is not set up)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename.endswith(
            "innotune.log"
        ):
            return Path(handler.baseFilename)
    from app.places import app_data_dir

    return app_data_dir() / "logs" / "innotune.log"


def session_offset(path: Path | None = None) -> int:
    """Where this session's lines start in the log file (its size now)."""
    try:
        return (path or current_log_file()).stat().st_size
    except OSError:
        return 0


def read_session_log(path: Path, offset: int = 0) -> str:
    """The log from ``offset`` on (all of it if the file was rotated since), secrets masked."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            start = offset if offset <= size else 0  # rotated: the new file is all this session
            start = max(start, size - MAX_BYTES)
            fh.seek(start)
            data = fh.read()
    except FileNotFoundError:
        return f"No log file yet ({path})."
    except OSError as exc:
        return f"The log file {path} cannot be read: {exc.strerror or exc}."
    return redact(data.decode("utf-8", "replace")) or "Nothing was logged in this session yet."


class LogDialog(QDialog):
    """The log of this session, with Copy and Open log folder."""

    def __init__(self, parent: QWidget | None = None, offset: int = 0) -> None:
        super().__init__(parent)
        self.setObjectName("log_dialog")
        self.setWindowTitle("InnoTune log")
        self.resize(820, 520)
        self.offset = offset
        self.path = current_log_file()
        layout = QVBoxLayout(self)
        self.where = QLabel()
        self.where.setWordWrap(True)
        layout.addWidget(self.where)
        self.text = QPlainTextEdit()
        self.text.setObjectName("log_text")
        self.text.setReadOnly(True)
        self.text.setAccessibleName("log of this session")
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        layout.addWidget(self.text, 1)
        row = QHBoxLayout()
        self.copy = QPushButton("&Copy")
        self.copy.setToolTip("Copy the whole log (secrets are already masked)")
        self.copy.clicked.connect(self._on_copy_clicked)
        self.open_folder = QPushButton("&Open log folder")
        self.open_folder.clicked.connect(self._on_open_folder_clicked)
        self.reload = QPushButton("&Reload")
        self.reload.clicked.connect(self.load)
        self.close_button = QPushButton("C&lose")
        self.close_button.setDefault(True)
        self.close_button.clicked.connect(self.accept)
        for button in (self.copy, self.open_folder, self.reload):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.close_button)
        layout.addLayout(row)
        self.load()

    def load(self) -> None:
        """Read the file again and scroll to its end (the newest lines are what matter)."""
        self.path = current_log_file()
        self.where.setText(
            f"This session's log, from {self.path}. Passwords are masked as ****; "
            "attach it to a bug report as it is."
        )
        self.text.setPlainText(read_session_log(self.path, self.offset))
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())

    def _on_open_folder_clicked(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path.parent)))


def open_log(widget: QWidget) -> None:
    """Show the log from ``widget``'s window (the wizard's own dialog when there is one)."""
    window = widget.window()
    show = getattr(window, "show_log", None)
    if callable(show):
        show()
        return
    dialog = LogDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()


def error_parts(exc: object) -> tuple[str, str]:
    """What went wrong and what to do next, for any exception a page is handed.

    An :class:`InnoTuneError` says both itself; anything else is unexpected, so the next
    step is the bug report the log is for.
    """
    if isinstance(exc, InnoTuneError):
        return exc.problem, exc.window_fix or BUG_FIX
    return f"Unexpected error: {exc}", BUG_FIX


def error_html(problem: str, fix: str, lead: str = "") -> str:
    """An error for a page's message area: ``lead``, the problem in bold, the fix, Details…."""
    head = f"{html.escape(lead)} " if lead else ""
    return f"{head}<b>{html.escape(problem)}</b> {html.escape(fix)}{DETAILS_LINK}"


def log_error(logger: logging.Logger, where: str, problem: str, fix: str) -> None:
    """Write the error shown on a page to the log, so its Details… link finds it there."""
    logger.warning("%s: %s %s", where, problem, fix)


def link_to_log(label: QLabel) -> None:
    """Make ``label`` an error area: rich text whose Details… link opens the log.

    The link is reached by mouse and by keyboard (Tab to it, Enter), and the text can be
    selected to copy it.
    """
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.LinksAccessibleByMouse
        | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
    )
    label.linkActivated.connect(lambda link: open_log(label) if link == LOG_LINK else None)
