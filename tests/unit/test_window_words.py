"""Errors carry two wordings: the command line's (its flags) and the window's (its boxes).

The wizard shows ``window_fix``; no command-line flag ever reaches the window.
"""

from __future__ import annotations

import re

import pymysql
import pytest

from app.access.database import root_password_needed
from app.access.doctor import Step, _fail
from app.domain.container import Container
from app.domain.errors import InnoTuneError, SudoError
from app.inspect.instances import choose_instance
from app.mysql.session import explain_login_error
from app.remote.transport import raise_for_sudo

FLAG = re.compile(r"(^|[\s(])--[a-z]")


def _errors() -> list[InnoTuneError]:
    found: list[InnoTuneError] = [
        explain_login_error(pymysql.err.OperationalError(2002, "no socket"), "root"),
        root_password_needed(
            Container("docker", "0" * 64, "db", "mariadb:11", env_names=("MARIADB_ROOT_PASSWORD",))
        ),
    ]
    for call in (
        lambda: choose_instance([], None),
        lambda: raise_for_sudo("a password is required", False),
    ):
        try:
            call()
        except InnoTuneError as exc:
            found.append(exc)
    return found


@pytest.mark.parametrize("exc", _errors(), ids=lambda e: type(e).__name__)
def test_the_window_wording_has_no_flag(exc: InnoTuneError) -> None:
    assert not FLAG.search(exc.problem), exc.problem
    assert not FLAG.search(exc.window_fix), exc.window_fix


def test_the_command_line_keeps_its_flags() -> None:
    exc = explain_login_error(pymysql.err.OperationalError(2002, "no socket"), "root")
    assert "--instance" in exc.fix and "Server instance box" in exc.window_fix
    try:
        raise_for_sudo("a password is required", False)
    except SudoError as sudo:
        assert "--ask-sudo-password" in sudo.fix and "sudo password" in sudo.window_fix


def test_a_failed_step_carries_the_window_wording() -> None:
    step = _fail("login", InnoTuneError("refused", "give --mysql-user", "type a Database user"))
    assert step == Step("login", "fail", "refused", "give --mysql-user", "type a Database user")
    same = _fail("login", InnoTuneError("refused", "check the password"))
    assert same.window_fix == ""  # the window shows the fix as it is


def test_errors_name_the_server_by_its_line() -> None:
    from app.mysql.session import server_words

    assert server_words("MySQL server has gone away", "11.8.2-MariaDB-log") == (
        "MariaDB server has gone away"
    )
    assert server_words("Lost connection to MySQL server during query", "10.5.27-MariaDB") == (
        "Lost connection to MariaDB server during query"
    )
    assert server_words("MySQL server has gone away", "9.7.4") == "MySQL server has gone away"
    assert server_words("Can't connect to MySQL server on 'db' (111)", "") == (
        "Can't connect to the server on 'db' (111)"
    )
