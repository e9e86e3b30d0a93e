"""The log file on disk: every record passes the redacting filter first."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from app.domain.redact import RedactingFilter, install_record_factory


def setup_logging(log_dir: Path, level: int = logging.INFO) -> Path:
    """Log to ``log_dir/innotune.log`` (rotated, 1 MiB × 5), masking secrets. Returns the path."""
    install_record_factory()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_dir.chmod(0o700)
    path = log_dir / "innotune.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1 << 20, backupCount=5)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # paramiko logs secrets-adjacent detail at DEBUG; keep it quiet.
    logging.getLogger("paramiko").setLevel(logging.WARNING)
    path.chmod(0o600)
    return path
