"""Secrets never reach the log file: registered values and password shapes are masked."""

from __future__ import annotations

import logging
from pathlib import Path

from app.access.doctor import Secrets
from app.domain.redact import redact, register_secret
from app.logsetup import setup_logging


def test_registered_secrets_and_password_shapes_are_masked() -> None:
    register_secret("canary-Secret-42")
    text = redact("sudo got canary-Secret-42; my.cnf password = hunter2; --password=abc")
    assert "canary-Secret-42" not in text and "hunter2" not in text and "abc" not in text
    assert text.count("****") == 3


def test_secrets_given_to_a_connection_are_registered() -> None:
    Secrets(sudo_password="sudo-canary-7", mysql_password="db-canary-8")
    assert redact("x sudo-canary-7 y db-canary-8") == "x **** y ****"


def test_the_log_file_never_holds_a_secret(tmp_path: Path) -> None:
    Secrets(login_password="login-canary-9")
    path = setup_logging(tmp_path / "logs")
    log = logging.getLogger("innotune.test")
    try:
        log.warning("connecting with %s", "login-canary-9")
        try:
            raise RuntimeError("auth failed for login-canary-9")
        except RuntimeError:
            log.exception("it failed")
        for handler in logging.getLogger().handlers:
            handler.flush()
        text = path.read_text()
    finally:
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "baseFilename", "") == str(path):
                logging.getLogger().removeHandler(handler)
                handler.close()
    assert "connecting with ****" in text
    assert "auth failed for ****" in text
    assert "login-canary-9" not in text
    assert oct(path.stat().st_mode & 0o777) == "0o600"
