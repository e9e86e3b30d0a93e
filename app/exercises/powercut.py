"""Exercise 2: what a power cut costs, simulated with the datadir on a loop device.

The datadir is an ext4 filesystem on a loop device, mounted with ``commit=300`` and with
the kernel's periodic writeback held back, so whatever the server has not flushed itself
stays in the page cache only. After ``kill -9`` the device is copied with direct I/O: the
copy holds what had reached the "disk", and nothing that was still only in memory. A
server started on the copy shows what a power cut at that moment would have left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from app.exercises.model import ExerciseResult, Lab, Say, loss_result, resource_dir, text_for
from app.mysql import burst
from app.practice.server import SERVER_CNF, PrivateServer, ServerError

#: Seconds added to innodb_flush_log_at_timeout for the bound at 2 (timer start-up jitter).
MARGIN = 1.0
IMAGE_MB = 320
#: The redo log goes through the page cache (as with MySQL, or MariaDB where O_DIRECT is not
#: used for the log); with the MariaDB 10.11 default (OFF) each log write goes straight to
#: the device and even trx_commit=2 loses nothing in this simulation.
EXERCISE_CNF = SERVER_CNF + "innodb_log_file_buffering = ON\ninnodb_log_file_size = 48M\n"
WRITEBACK = {
    "/proc/sys/vm/dirty_writeback_centisecs": "0",  # no periodic flusher wake-ups
    "/proc/sys/vm/dirty_expire_centisecs": "360000",  # nothing counts as old for an hour
}
TOOLS = ("losetup", "mkfs.ext4", "mount", "umount", "dd")


class PowerCutError(ServerError):
    """The loop-device simulation could not be set up."""


def why_not_here() -> str | None:
    """Why this machine cannot run the simulation, or None when it can."""
    if os.geteuid() != 0:
        return (
            "It needs root: it attaches loop devices, mounts them and changes vm.dirty_* settings."
        )
    if not Path("/dev/loop-control").exists():
        return "This machine has no loop devices (/dev/loop-control is missing)."
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"Programs missing: {', '.join(missing)}."
    return None


def _sh(*argv: str, timeout: float = 120.0) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise PowerCutError(f"{' '.join(argv)} failed: {proc.stderr.strip()[-400:]}")
    return proc.stdout


@contextmanager
def attached(image: Path, mountpoint: Path, options: str) -> Iterator[str]:
    """The image on a loop device, mounted; unmounted and detached afterwards."""
    device = _sh("losetup", "--find", "--show", str(image)).strip()
    try:
        mountpoint.mkdir(parents=True, exist_ok=True)
        _sh("mount", "-o", options, device, str(mountpoint))
        try:
            yield device
        finally:
            if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
    finally:
        detach(device, image)


def detach(device: str, image: Path, timeout: float = 30.0) -> None:
    """Detach ``device`` and wait until it no longer holds ``image``.

    ``losetup -d`` on a device still held for a moment (udev's probe after the unmount, a
    lazy unmount finishing) only marks it to be cleared later; ask again until it is gone.
    """
    deadline = time.monotonic() + timeout
    while True:
        subprocess.run(["losetup", "-d", device], capture_output=True)
        listed = subprocess.run(
            ["losetup", "--list", "--noheadings", "-O", "BACK-FILE", device],
            capture_output=True,
            text=True,
        )
        if listed.returncode != 0 or str(image) not in listed.stdout or time.monotonic() > deadline:
            return
        time.sleep(0.2)


def restore_writeback(saved_file: Path) -> None:
    """Put back the vm.dirty_* values a run saved (also those of a run that was killed)."""
    try:
        saved = json.loads(saved_file.read_text())
    except (OSError, ValueError):
        return
    for path, value in saved.items():
        if path in WRITEBACK:
            with suppress(OSError):
                Path(path).write_text(str(value))
    saved_file.unlink(missing_ok=True)


def writeback_notice(saved: dict[str, str]) -> str:
    """What is about to change on this computer, said before it changes."""
    names = [
        f"vm.{Path(p).name} from {saved.get(p, '?')} to {value}" for p, value in WRITEBACK.items()
    ]
    return (
        f"Changing this computer's {' and '.join(names)} until the copy is made "
        "(they are put back right after) …"
    )


@contextmanager
def writeback_held(saved_file: Path, say: Say | None = None) -> Iterator[None]:
    """Hold back the kernel's periodic writeback; the old values come back in any case.

    The old values go to ``saved_file`` before the first write, so that a run killed in
    between can be undone by the next one (:func:`clean_leftovers`).
    """
    saved = {path: Path(path).read_text().strip() for path in WRITEBACK}
    saved_file.write_text(json.dumps(saved))
    if say is not None:
        say(writeback_notice(saved))
    try:
        for path, value in WRITEBACK.items():
            Path(path).write_text(value)
        yield
    finally:
        restore_writeback(saved_file)
        if say is not None:
            say("The kernel's writeback settings are back as they were.")


def clean_leftovers(work: Path) -> None:
    """Undo what a killed earlier run left: kernel settings, mounts, loop devices, files."""
    restore_writeback(work / "writeback.json")
    mounts = [ln.split()[1] for ln in Path("/proc/self/mounts").read_text().splitlines()]
    for mountpoint in sorted((m for m in mounts if m.startswith(f"{work}/")), reverse=True):
        subprocess.run(["umount", "-l", mountpoint], capture_output=True)
    for image in work.glob("*.img"):
        listed = subprocess.run(
            ["losetup", "-j", str(image)], capture_output=True, text=True, check=False
        ).stdout
        for line in listed.splitlines():
            subprocess.run(["losetup", "-d", line.split(":")[0]], capture_output=True)
    shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class CutRun:
    """One level's outcome."""

    level: int
    acked: int
    lost: int
    window: int
    window_seconds: float

    @property
    def within_bound(self) -> bool:
        """None lost at 1; at 2 (and 0) no more than the flush window held."""
        return self.lost == 0 if self.level == 1 else self.lost <= self.window


def cut_once(lab: Lab, server: PrivateServer, device: str, level: int, seconds: float) -> CutRun:
    """Burst at ``level``, kill -9, copy the device as it is on disk, count on the copy."""
    server.start()
    sock = str(server.socket_path)
    table = f"cut_{level}"
    session = burst.connect(sock)
    try:
        burst.create_table(session, table)
        session.query(f"SET GLOBAL innodb_flush_log_at_trx_commit = {int(level)}")
        timeout = float(session.query("SELECT @@GLOBAL.innodb_flush_log_at_timeout")[0][0] or 1)
    finally:
        session.close()
    _sh("sync", "-f", str(server.datadir))  # everything before the burst is on disk
    copy = server.base.parent / f"copy-{level}.img"
    with writeback_held(server.base.parent / "writeback.json", lab.say):
        writer = burst.WriteBurst(sock, table)
        lab.say(f"trx_commit={level}: writing for {seconds:.0f} s, then the power cut …")
        writer.start()
        time.sleep(seconds)
        cut_at = time.monotonic()
        server.kill()
        log = writer.join()
        lab.say(f"trx_commit={level}: copying {device} as it is on disk (direct I/O) …")
        _sh("dd", f"if={device}", f"of={copy}", "iflag=direct", "bs=1M", "status=none", timeout=300)
    try:
        base = server.base.parent / f"after-{level}"
        with attached(copy, base / "data", "noatime"):
            after = PrivateServer(base, server_cnf=EXERCISE_CNF)
            lab.say(f"trx_commit={level}: starting a server on the copy (crash recovery) …")
            after.start()
            try:
                session = burst.connect(str(after.socket_path))
                try:
                    present = burst.surviving_ids(session, table)
                finally:
                    session.close()
            finally:
                after.stop()
        shutil.rmtree(base, ignore_errors=True)
    finally:
        copy.unlink(missing_ok=True)
    window_seconds = timeout + MARGIN
    return CutRun(
        level=level,
        acked=len(log.ids),
        lost=len(log.ids - present),
        window=log.acked_since(cut_at - window_seconds),
        window_seconds=window_seconds,
    )


LOST_HEADER = "lost after the power cut"
CHART_TITLE = "Acknowledged commits lost by a (simulated) power cut"


def recorded() -> ExerciseResult:
    """The result of a real run on a machine that allowed it, labelled as recorded.

    Its table and chart are drawn again from the recorded runs, as a run here draws them.
    """
    saved = ExerciseResult.from_json((resource_dir() / "recorded" / "powercut.json").read_text())
    runs = [
        CutRun(
            level=int(r["level"]),
            acked=int(r["acked"]),
            lost=int(r["lost"]),
            window=int(r["window"]),
            window_seconds=float(r["window_seconds"]),
        )
        for r in saved.figures["runs"]
    ]
    result = loss_result(
        "powercut",
        runs,
        lost_header=LOST_HEADER,
        chart_title=CHART_TITLE,
        figures=saved.figures,
        explanation=saved.explanation,
    )
    result.recorded = saved.recorded
    return result


def run(lab: Lab, *, seconds: float = 4.0, levels: Sequence[int] = (1, 2)) -> ExerciseResult:
    """Simulate a power cut at each level; shows a recorded run where this machine cannot."""
    reason = why_not_here()
    if reason is not None:
        lab.say(f"Cannot simulate a power cut here. {reason} Showing a recorded run instead.")
        result = recorded()
        result.recorded = f"{reason} {result.recorded or ''}".strip()
        return result
    work = lab.workdir / "powercut"
    clean_leftovers(work)
    work.mkdir(parents=True)
    image = work / "disk.img"
    with open(image, "wb") as fh:
        fh.truncate(IMAGE_MB * 1024 * 1024)
    runs: list[CutRun] = []
    try:
        _sh("mkfs.ext4", "-q", "-F", "-L", "innotune-cut", str(image))
        base = work / "server"
        # commit=300: the ext4 journal commits every 5 minutes unless someone fsyncs.
        with attached(image, base / "data", "noatime,commit=300") as device:
            server = PrivateServer(base, server_cnf=EXERCISE_CNF)
            try:
                lab.say("Creating a server whose datadir is on the loop device …")
                server.start()
                for level in levels:
                    lab.check()
                    runs.append(cut_once(lab, server, device, level, seconds))
                    r = runs[-1]
                    lab.say(f"trx_commit={level}: {r.lost} of {r.acked} acknowledged commits lost.")
            finally:
                server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = text_for("powercut")
    by = {r.level: r for r in runs}
    figures = {
        "lost_1": by[1].lost if 1 in by else 0,
        "lost_2": by[2].lost if 2 in by else 0,
        "window_2": by[2].window if 2 in by else 0,
        "window_seconds": runs[0].window_seconds if runs else MARGIN,
        "runs": [r.__dict__ | {"within_bound": r.within_bound} for r in runs],
    }
    return loss_result(
        "powercut",
        runs,
        lost_header=LOST_HEADER,
        chart_title=CHART_TITLE,
        figures=figures,
        explanation=text.explain(figures),
    )
