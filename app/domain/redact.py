"""Keeping secrets out of every log line, report and error text.

Secrets are registered the moment they enter the program (the Connect page, a CLI
prompt); :func:`redact` replaces each with ``****`` wherever it appears. The logging
filter applies it to every record before any handler writes it.
"""

from __future__ import annotations

import logging
import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()

# Shapes that carry a password even when we never saw the value (a pasted my.cnf, argv).
_PATTERNS = (
    re.compile(r"(?i)(password\s*=\s*)(\S+)"),
    re.compile(r"(?i)(--password=)(\S+)"),
    re.compile(r"(?i)(IDENTIFIED BY\s+)('[^']*'|\"[^\"]*\")"),
)

MASK = "****"


def register_secret(value: str | None) -> None:
    """Remember a secret so it is masked from now on (short values are masked too)."""
    if value:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret and every password-shaped value masked."""
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    return text


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Mask a record's message, traceback and stack in place (idempotent)."""
    record.msg = redact(record.getMessage())
    record.args = None
    if record.exc_info and record.exc_info[1] is not None:
        text = record.exc_text or logging.Formatter().formatException(record.exc_info)
        record.exc_text = redact(text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


class RedactingFilter(logging.Filter):
    """A handler filter that masks secrets in the message, its arguments and tracebacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the record in place; never drops a record."""
        redact_record(record)
        return True


def install_record_factory() -> None:
    """Mask every record as it is created, so no handler (ours or anyone's) sees a secret."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "innotune_redacting", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        return redact_record(previous(*args, **kwargs))

    factory.innotune_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
