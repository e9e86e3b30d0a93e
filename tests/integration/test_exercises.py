"""The teaching exercises, run for real on disposable private servers (never the practice server).

Bursts are scaled down to a second or two; the outcomes checked are the ones the exercises
teach: no acknowledged commit lost after kill -9 at trx_commit 1 and 2, at 0 no more than the
flush window held; after a simulated power cut none lost at 1 and at 2 no more than its
window (never that some loss occurred); the pool that fits reads nothing from disk; a
restart's downtime is seen by a client; a bad change is rolled back.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import exercises
from app.exercises import badchange, bufferpool, crash, powercut, restart
from app.exercises.model import ExerciseResult, Lab
from app.practice.server import PrivateServer
from tests.hosts.util import need, need_root

REPO = Path(__file__).resolve().parents[2]


def lab(server: PrivateServer, tmp_path: Path) -> Lab:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Lab(server, work)


def by_level(result: ExerciseResult) -> dict[int, dict[str, object]]:
    return {int(r["level"]): r for r in result.figures["runs"]}


def test_crash_loses_no_acknowledged_commit_at_1_and_2_and_at_0_stays_within_the_window(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    # Longer than the window (flush timeout 1 s + margin 1 s), so the bound at 0 means something.
    result = crash.run(lab(private_server, tmp_path), seconds=3.0)
    runs = by_level(result)
    assert set(runs) == {0, 1, 2}
    for level in (1, 2):
        assert runs[level]["acked"] > 0
        assert runs[level]["lost"] == 0, f"trx_commit={level} lost acknowledged commits"
    # At 0 the loss is bounded by the flush window; zero is a valid outcome.
    assert runs[0]["lost"] <= runs[0]["window"] < runs[0]["acked"]
    assert all(row[-1] == "yes" for row in result.rows)
    assert "At 1" in result.explanation and result.chart is not None
    # The option files give trx_commit back: the exercise left the server as configured.
    assert private_server.query("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").split()[-1] == "1"


def _vm(name: str) -> str:
    return Path(f"/proc/sys/vm/{name}").read_text().strip()


def test_power_cut_on_a_copy_of_the_loop_device_loses_nothing_at_1_and_at_most_the_window_at_2(
    tmp_path: Path,
) -> None:
    need_root()
    need(Path("/dev/loop-control").exists(), "no loop device support (/dev/loop-control)")
    assert powercut.why_not_here() is None
    before = (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs"))
    work = tmp_path / "work"
    work.mkdir()
    unused = PrivateServer(tmp_path / "unused")  # the exercise makes its own server
    result = powercut.run(Lab(unused, work), seconds=3.0)
    assert result.recorded is None
    runs = by_level(result)
    assert runs[1]["acked"] > 0 and runs[1]["lost"] == 0
    assert runs[2]["lost"] <= runs[2]["window"] < runs[2]["acked"]
    # Restored and removed: the kernel settings, the loop devices, the mounts, the files.
    assert (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs")) == before
    loops = subprocess.run(["losetup", "-l", "-n"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in loops
    assert str(tmp_path) not in Path("/proc/self/mounts").read_text()
    assert not (work / "powercut").exists()


def test_a_killed_power_cut_run_is_undone_by_the_next_one(tmp_path: Path) -> None:
    """Kernel settings held back, a mounted loop device: what a killed run leaves behind."""
    need_root()
    need(Path("/dev/loop-control").exists(), "no loop device support (/dev/loop-control)")
    before = (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs"))
    work = tmp_path / "powercut"
    (work / "server" / "data").mkdir(parents=True)
    image = work / "disk.img"
    with open(image, "wb") as fh:
        fh.truncate(64 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    device = subprocess.run(
        ["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        subprocess.run(["mount", device, str(work / "server" / "data")], check=True)
        held = powercut.writeback_held(work / "writeback.json")
        held.__enter__()  # and never left: the process "dies" here
        assert _vm("dirty_writeback_centisecs") == "0"
        powercut.clean_leftovers(work)
        assert (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs")) == before
        assert str(work) not in Path("/proc/self/mounts").read_text()
        assert (
            str(image)
            not in subprocess.run(["losetup", "-l", "-n"], capture_output=True, text=True).stdout
        )
        assert not work.exists()
    finally:
        powercut.restore_writeback(work / "writeback.json")
        subprocess.run(["umount", "-l", str(work / "server" / "data")], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)


def test_power_cut_without_root_shows_the_recorded_run_labelled_as_such(tmp_path: Path) -> None:
    """As an unprivileged user the simulation cannot run: the recorded result stands in."""
    need_root()  # to become another user
    code = (
        "import json; from pathlib import Path; "
        "from app.exercises import powercut; "
        "from app.exercises.model import Lab; "
        "from app.practice.server import PrivateServer; "
        "r = powercut.run(Lab(PrivateServer(Path('/nonexistent')), Path('/tmp'))); "
        "print(r.to_json())"
    )
    as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable]
    probe = subprocess.run([*as_nobody, "-c", "import app"], cwd=REPO, capture_output=True)
    need(probe.returncode == 0, "nobody cannot read this checkout or its Python")
    proc = subprocess.run(
        [*as_nobody, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = ExerciseResult.from_json(proc.stdout)
    assert result.recorded and "needs root" in result.recorded
    assert "Recorded result of a real run" in result.recorded
    assert by_level(result)[1]["lost"] == 0


def test_buffer_pool_that_fits_reads_nothing_from_disk_and_the_small_one_does(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    result = bufferpool.run(lab(private_server, tmp_path), rows=20000, seconds=1.5)
    small, fits = result.figures["runs"]
    assert small["pool_bytes"] < fits["pool_bytes"]
    assert small["disk_reads"] > small["updates"] * 0.5  # most updates needed a page read
    assert fits["disk_reads"] <= fits["updates"] * 0.01
    assert result.chart is not None and len(result.chart.categories) == 2
    # Put back: no drop-in left, the configured pool size in force.
    assert not (private_server.include_dir / bufferpool.DROP_IN).exists()
    pool = private_server.query("SELECT @@GLOBAL.innodb_buffer_pool_size").split()[-1]
    assert pool == str(128 * 1024 * 1024)


def test_restart_downtime_is_seen_by_a_polling_client(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    result = restart.run(lab(private_server, tmp_path), dirty_seconds=1.0)
    f = result.figures
    assert f["failed"] >= 1  # the client really was locked out for a while
    assert 0 < f["downtime"] <= f["shutdown"] + f["startup"] + 3.0
    assert private_server.running_pid() is not None


def test_restart_explains_its_figures_and_what_this_server_resizes_live(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    """Each phase says what it measures, why the lock-out is not their sum, in hundredths;
    the redo log sentence is the server's own (MariaDB resizes it live from 10.9)."""
    result = exercises.run("restart", lab(private_server, tmp_path), dirty_seconds=1.0)
    f = result.figures
    assert result.chart is not None
    for value in result.chart.series["seconds"]:
        assert value == round(value, 2)  # labels like 0.100633 are gone
    text = result.explanation
    assert f"not simply the two phases added ({f['both']:.2f} s)" in text
    assert "until its process was gone" in text and "until it greeted a login" in text
    version = private_server.query("SELECT VERSION()").split()[-1]
    major, minor = (int(x) for x in version.split(".")[:2])
    live = (major, minor) >= (10, 9)
    assert ("changes live" in text) is live, text
    assert ("takes effect only after a restart" in f["redo"]) is not live
    assert "MariaDB" in f["redo"]


def test_an_exercise_says_how_long_it_takes_first_and_leaves_no_database(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    said: list[str] = []
    work = tmp_path / "work"
    work.mkdir()
    exercises.run("restart", Lab(private_server, work, say=said.append), dirty_seconds=1.0)
    assert said[0] == "What a restart costs: this takes about 5 s …"
    schemas = private_server.query("SHOW DATABASES").split()
    assert "innotune_exercises" not in schemas, schemas


@pytest.mark.usefixtures("own_apply_jobs")
def test_a_change_that_stops_the_server_is_rolled_back_by_the_apply_job(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    need(os.geteuid() == 0, "the apply job keeps its journal under /var/lib/innotune")
    etc_before = sorted(p.name for p in private_server.include_dir.iterdir())
    result = badchange.run(lab(private_server, tmp_path))
    f = result.figures
    assert f["path"] == "InnoTune's apply job", f["why"]
    assert f["state"] == "rolled-back" and f["failed_start"]
    assert any("page size" in line for line in f["log_lines"])
    assert f["page_size"] == "16384"
    assert sorted(p.name for p in private_server.include_dir.iterdir()) == etc_before
    assert any(row[2] == "fail" for row in result.rows)


def test_the_same_bad_change_undone_by_hand_when_the_job_is_not_used(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    result = badchange.run(lab(private_server, tmp_path), use_runner=False)
    f = result.figures
    assert f["path"] == "by hand" and f["state"] == "rolled-back"
    assert "page size" in f["log"]
    assert f["page_size"] == "16384"
    assert not (private_server.include_dir / badchange.DROP_IN).exists()
