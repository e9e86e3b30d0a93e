"""Restart anyway, and Cancel, against a real private server.

``restart_anyway`` (``innotune apply --restart``) restarts the server although every change
is live: the values then come from the new option files, and the rollback of that snapshot
restarts too. A cancel before the launch leaves nothing behind; a cancel while the job runs
(here: asked for by the restart command itself, so the moment is exact) waits for the
restart, then rolls back to the snapshot and restarts on the old files.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from app.describe import dynamic, optionfile
from app.jobs import control, runner
from app.jobs import snapshot as snap
from app.practice.server import PrivateServer
from app.remote.local import LocalTransport
from tests.hosts.util import need_root
from tests.integration.conftest import Cli
from tests.integration.test_apply import (  # noqa: F401 - autouse cleanup of jobs
    REPO,
    _remove_new_jobs_and_snapshots,
    change,
    facts_for,
    host_for,
    remove_jobs_and_snapshots,
    restart_argv,
    run_job,
    tree,
    variable,
)

TRX = "innodb_flush_log_at_trx_commit"


def _trx_actions(transport: LocalTransport, server: PrivateServer) -> tuple[Any, list[Any]]:
    """trx_commit 1 → 2: a dynamic change, also written to the drop-in."""
    socket = str(server.socket_path)
    facts = facts_for(transport, socket)
    host = host_for(transport, facts, socket)
    wanted = change(TRX, "dynamic", "2")
    actions = [
        optionfile.describe([wanted], host)[0],
        dynamic.describe([wanted], host)[0],
    ]
    host.session.close()
    assert not any(a.restart_needed for a in actions)
    return facts, actions


def _cancelling_restart(server: PrivateServer) -> list[str]:
    """A restart command that first asks its own job to cancel (the job is its parent)."""
    script = (
        'dir=$(tr "\\000" "\\n" < /proc/$PPID/cmdline | tail -n 1); : > "$dir/cancel"; exec "$@"'
    )
    return ["sh", "-c", script, "sh", *restart_argv(server)]


def test_restart_anyway_sets_the_values_once_and_its_rollback_restarts_too(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    before, pid = tree(server.base / "etc"), server.running_pid()
    facts, actions = _trx_actions(local, server)
    steps: list[runner.JobStep] = []
    status = run_job(
        local,
        facts,
        actions,
        tmp_path,
        on_step=steps.append,
        restart_argv=restart_argv(server),
        restart_anyway=True,
    )
    assert status.state == "applied", (status.errors, [s.line() for s in steps])
    assert status.restarted and status.downtime_seconds is not None
    restarted_pid = server.running_pid()
    assert restarted_pid not in (None, pid)
    # Set once, by the restart, from the drop-in: no SET GLOBAL before it.
    lines = [s.line() for s in steps]
    assert not any(s.step == "dynamic" and s.status == "start" for s in steps), lines
    assert any("not set live" in s.detail and TRX in s.detail for s in steps), lines
    names = [s.step for s in steps]
    assert names.index("write") < names.index("validate") < names.index("restart")
    assert names.index("restart") < names.index("verify") < names.index("watch")
    assert variable(server, TRX) == "2"

    back = runner.rollback(local, status.snapshot_id or "")
    assert back.state == "rolled-back", back.errors
    assert back.restarted  # the restored files are proven by a restart too
    assert server.running_pid() not in (None, restarted_pid)
    assert variable(server, TRX) == "1"
    assert tree(server.base / "etc") == before


def test_restart_anyway_without_a_known_restart_is_refused_before_anything(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    before = tree(server.base / "etc")
    facts, actions = _trx_actions(local, server)
    with pytest.raises(runner.ApplyError, match="restart was asked for"):
        run_job(local, facts, actions, tmp_path, restart_anyway=True)
    assert tree(server.base / "etc") == before and variable(server, TRX) == "1"


def test_cancel_before_the_launch_changes_and_keeps_nothing(
    local: LocalTransport,
    private_server: PrivateServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = private_server
    before, pid = tree(server.base / "etc"), server.running_pid()
    facts, actions = _trx_actions(local, server)
    made: list[str] = []
    new_id = snap.new_id

    def recording() -> str:
        made.append(new_id())
        return made[-1]

    monkeypatch.setattr(snap, "new_id", recording)
    cancel = threading.Event()
    upload = control._upload

    def upload_then_cancel(*args: Any) -> str:
        directory = upload(*args)
        cancel.set()  # the person presses Cancel while the job is being uploaded
        return directory

    monkeypatch.setattr(control, "_upload", upload_then_cancel)
    with pytest.raises(runner.ApplyCancelled, match="nothing on the host was changed"):
        run_job(local, facts, actions, tmp_path, cancel=cancel)
    assert made and not Path(runner.job_dir(made[0])).exists()
    assert not Path(snap.target_dir(made[0])).exists()
    assert not (tmp_path / "snapshots" / made[0]).exists()
    assert tree(server.base / "etc") == before
    assert server.running_pid() == pid and variable(server, TRX) == "1"


def test_cancel_as_the_job_begins_to_wait_for_its_confirmation_rolls_back(
    local: LocalTransport,
    private_server: PrivateServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cancel pressed after follow's last look at the request, as the job starts waiting."""
    server = private_server
    before = tree(server.base / "etc")
    facts, actions = _trx_actions(local, server)
    cancel = threading.Event()
    poll = control._poll

    def poll_then_cancel(*args: Any, **kw: Any) -> Any:
        found = poll(*args, **kw)
        if found[2] is not None and found[2].state == "awaiting-confirm":
            cancel.set()  # the exact moment: the state is read, the request not yet
        return found

    monkeypatch.setattr(control, "_poll", poll_then_cancel)
    seen: list[int] = []
    done = run_job(
        local,
        facts,
        actions,
        tmp_path,
        confirm_within=600.0,  # only the cancel can end the wait soon
        cancel=cancel,
        on_step=lambda step: seen.append(step.seq),
    )
    assert cancel.is_set()
    assert done.state == "rolled-back" and done.cancelled, (done.state, done.errors)
    assert seen == sorted(set(seen)), "a journal step was shown twice"
    assert [s.step for s in done.steps].count("cancel") == 1
    assert tree(server.base / "etc") == before
    assert variable(server, TRX) == "1"


def test_cancel_during_the_restart_waits_for_it_then_rolls_back(
    local: LocalTransport, private_server: PrivateServer, tmp_path: Path
) -> None:
    server = private_server
    before, pid = tree(server.base / "etc"), server.running_pid()
    facts, actions = _trx_actions(local, server)
    steps: list[runner.JobStep] = []
    status = run_job(
        local,
        facts,
        actions,
        tmp_path,
        on_step=steps.append,
        restart_argv=_cancelling_restart(server),
        restart_anyway=True,
    )
    lines = [s.line() for s in steps]
    assert status.state == "rolled-back" and status.cancelled, (status.errors, lines)
    assert "cancelled by the user after the restart" in status.errors[0]
    names = [s.step for s in steps]
    # The restart under way was finished and judged healthy, then everything was undone,
    # and the server restarted on the old files.
    assert names.index("restart") < names.index("cancel") < names.index("restore")
    assert names.index("restore") < names.index("restart-old")
    assert [s.status for s in steps if s.step == "restart"][-1] == "ok"
    assert status.restarted
    assert server.running_pid() not in (None, pid)
    assert variable(server, TRX) == "1"
    assert tree(server.base / "etc") == before


def test_cli_apply_restart_then_rollback_restarts_again(
    private_server: PrivateServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    need_root()
    server = private_server
    socket = str(server.socket_path)
    innotune = Cli(tmp_path / "xdg")
    request.addfinalizer(lambda: remove_jobs_and_snapshots(innotune.ids))

    helped = innotune("apply", "--help")
    assert "--restart " in helped.stdout and "prove it starts with the new" in helped.stdout
    before, pid = tree(server.base / "etc"), server.running_pid()
    restart = shlex.join(restart_argv(server))
    sliders = ["--crash-loss", "os", "--fit-os", "off", "--fit-disks", "off"]
    sliders += ["--memory-share", "keep", "--redo", "keep"]
    applied = innotune(
        "apply",
        "local",
        "--instance",
        socket,
        "--sample",
        "0",
        *sliders,
        "--yes",
        "--restart",
        "--restart-command",
        restart,
        "--watch",
        "1",
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "a restart was asked for" in applied.stdout  # the preview says so
    assert "Estimated downtime" in applied.stdout
    assert "✓ restart" in applied.stderr and "✓ verify" in applied.stderr
    restarted_pid = server.running_pid()
    assert restarted_pid not in (None, pid)
    assert variable(server, TRX) == "2"
    snapshot_id = re.search(r"snapshot\s+(\S+)", applied.stdout)
    assert snapshot_id, applied.stdout

    # The snapshot remembers the restart command and that a restart is wanted.
    back = innotune("rollback", "local", snapshot_id.group(1), "--yes")
    assert back.returncode == 0, back.stdout + back.stderr
    assert "✓ restart-old" in back.stderr
    assert server.running_pid() not in (None, restarted_pid)
    assert variable(server, TRX) == "1"
    assert tree(server.base / "etc") == before


def test_ctrl_c_during_a_cli_apply_rolls_back(
    private_server: PrivateServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    need_root()
    server = private_server
    before = tree(server.base / "etc")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    out_path = tmp_path / "out.txt"
    argv = [sys.executable, "-m", "app", "apply", "local", "--instance", str(server.socket_path)]
    argv += ["--sample", "0", "--crash-loss", "os", "--fit-os", "off", "--fit-disks", "off"]
    argv += ["--memory-share", "keep", "--redo", "keep"]
    argv += ["--yes", "--restart", "--restart-command", shlex.join(restart_argv(server))]
    argv += ["--watch", "1"]
    seen: list[str] = []
    with (
        open(out_path, "w") as out,
        subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=REPO,
        ) as proc,
    ):
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("✓ write:") and proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # the person presses Ctrl-C
        proc.wait(timeout=300)
    text = out_path.read_text()
    request.addfinalizer(
        lambda: remove_jobs_and_snapshots(
            re.findall(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}(?:-restore)?\b", text + "".join(seen))
        )
    )
    assert proc.returncode == 130, text + "".join(seen)
    assert "cancelling" in "".join(seen)
    assert "rolled-back (cancelled)" in text
    assert tree(server.base / "etc") == before
    assert server.running_pid() is not None and variable(server, TRX) == "1"
