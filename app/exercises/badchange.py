"""Exercise 5: a change that stops the server from starting, and the automatic rollback.

The normal path is InnoTune's own apply job (snapshot → write → validate → restart → health
check → roll back), so the learner sees exactly what would happen on a real server. Where
the job cannot run here (it keeps its journal under /var/lib/innotune and needs root or
sudo for that), the same steps are done by hand, and the result says so.
"""

from __future__ import annotations

import grp
import os
import pwd
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from app.access.database import open_session
from app.describe.actions import Action, FileWrite
from app.domain.errors import InnoTuneError
from app.exercises.model import ExerciseResult, Lab, text_for
from app.inspect.inspection import inspect
from app.inspect.instances import choose_instance, find_instances
from app.jobs import runner
from app.practice.server import PrivateServer, ServerError
from app.remote.local import LocalTransport

DROP_IN = "99-innotune-exercise-bad.cnf"
#: Passes the option check (the variable exists, the value is valid) but this datadir was
#: created with 16 KiB pages, so InnoDB refuses to start.
BAD_CNF = (
    "# Written by InnoTune's 'Undo a bad change' exercise.\n[mysqld]\ninnodb_page_size = 8192\n"
)
REPO = Path(__file__).resolve().parents[3]


def default_restart_argv(server: PrivateServer) -> list[str]:
    """A restart command for a private server, run by the detached job (stop, then start)."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; "
        "from app.practice.server import PrivateServer; "
        f"PrivateServer(Path({str(server.base)!r})).restart(timeout=60)"
    )
    return [sys.executable, "-c", code]


def _owner(path: Path) -> str:
    st = os.stat(path)
    return f"{pwd.getpwuid(st.st_uid).pw_name}:{grp.getgrgid(st.st_gid).gr_name}"


def _page_size(server: PrivateServer) -> str:
    return server.query("SELECT @@GLOBAL.innodb_page_size").split()[-1]


def through_runner(lab: Lab, restart_argv: Sequence[str]) -> runner.JobStatus:
    """Apply the bad drop-in with InnoTune's apply job and follow it to its end."""
    server = lab.server
    transport = LocalTransport()
    try:
        sock = str(server.socket_path)
        instances = find_instances(transport)
        instance = choose_instance(instances, sock)
        session = open_session(transport, instance)
        try:
            lab.say("Reading the server's facts, as the wizard's Inspect step does …")
            facts = inspect(transport, instances, instance, session, sample_seconds=0)
        finally:
            session.close()
        assert facts.server is not None
        bad = Action(
            applier="optionfile",
            change_ids=("exercise",),
            summary=f"exercise: {DROP_IN}",
            files=(
                FileWrite(
                    str(server.include_dir / DROP_IN),
                    None,
                    BAD_CNF.encode(),
                    "0644",
                    _owner(server.include_dir),
                    "option_file",
                ),
            ),
            restart_needed=True,
        )

        def on_step(step: runner.JobStep) -> None:
            lab.say(step.line())

        return runner.apply(
            transport,
            [bad],
            facts.server,
            target_label="exercise: undo a bad change",
            local_dir=lab.workdir / "snapshots",
            on_step=on_step,
            restart_argv=list(restart_argv),
            watch_seconds=2.0,
            health_timeout=60.0,
        )
    finally:
        transport.close()


def by_hand(lab: Lab) -> tuple[list[list[str]], list[str], bool]:
    """The same steps without the job: write, restart, read the log, restore, restart."""
    server = lab.server
    steps: list[list[str]] = []
    started = time.monotonic()

    def step(name: str, status: str, detail: str) -> None:
        steps.append([f"{time.monotonic() - started:.1f} s", name, status, detail])
        lab.say(f"{name}: {detail}")

    drop_in = server.include_dir / DROP_IN
    drop_in.write_text(BAD_CNF)
    step("write", "ok", f"wrote {drop_in}")
    try:
        mark = server.error_log.stat().st_size
    except OSError:
        mark = 0
    failed = False
    try:
        server.restart(timeout=60)
        step("restart", "ok", "the server started (unexpected)")
    except ServerError as exc:
        failed = True
        step("restart", "fail", exc.problem)
    with open(server.error_log, "rb") as fh:
        fh.seek(mark)
        lines = [ln for ln in fh.read().decode(errors="replace").splitlines() if "ERROR" in ln]
    drop_in.unlink(missing_ok=True)
    step("rollback", "ok", f"removed {drop_in}")
    server.restart(timeout=120)
    step("restart", "ok", "the server runs with the old settings")
    return steps, lines, failed


def run(lab: Lab, *, use_runner: bool = True) -> ExerciseResult:
    """Apply a change that stops the server from starting; watch it being undone."""
    server = lab.server
    server.start()
    path = "by hand"
    why = ""
    status: runner.JobStatus | None = None
    if use_runner:
        try:
            status = through_runner(lab, lab.restart_argv or default_restart_argv(server))
            path = "InnoTune's apply job"
            # The job's restart started a new server process; this object still remembers
            # the one it started itself (now gone) and would take that for a failed start.
            server = lab.server = PrivateServer(server.base)
        except InnoTuneError as exc:
            cause = exc.problem.strip().splitlines()[-1][-200:]
            why = f"The apply job could not run here ({cause}), so the steps were done by hand."
            lab.say(why)
    else:
        why = "The steps were done by hand (the apply job was not asked for)."
    if status is not None:
        rows = [
            [s.time[11:19], s.step, s.status, s.detail.splitlines()[0] if s.detail else ""]
            for s in status.steps
        ]
        log_lines = status.log_lines
        state = status.state
        failed_start = state == "rolled-back"
    else:
        rows, log_lines, failed_start = by_hand(lab)
        state = "rolled-back" if failed_start else "applied"
    server.wait_ready(60)
    page_size = _page_size(server)
    back = not (server.include_dir / DROP_IN).exists()
    undone = (
        "The job put the old files back from its snapshot and restarted the server"
        if status is not None
        else "The drop-in was removed and the server restarted"
    )
    # The line naming the cause, not the generic "Aborting" at the end.
    telling = [ln for ln in log_lines if "page size" in ln or "page_size" in ln] or log_lines
    figures = {
        "path": path,
        "undone": undone,
        "why": why,
        "state": state,
        "failed_start": failed_start,
        "log": telling[0] if telling else "(no error line found)",
        "log_lines": log_lines,
        "page_size": page_size,
        "restored": back,
        "drop_in": DROP_IN,
    }
    lab.say(f"Done: {state}; the server runs with innodb_page_size = {page_size}.")
    return ExerciseResult(
        exercise="badchange",
        headers=["time", "step", "status", "detail"],
        rows=rows,
        explanation=text_for("badchange").explain(figures),
        figures=figures,
    )
