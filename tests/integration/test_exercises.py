"""The teaching exercises' corners, on disposable private servers (never the practice server).

Each exercise's main outcome, run headless on one practice server, is checked in
test_exercises_headless.py; here: a killed power-cut run undone by the next, the recorded
run shown without root, the restart's words, the duration said first, a bad change undone
by hand.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app import exercises
from app.exercises import badchange, powercut
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


def _vm(name: str) -> str:
    return Path(f"/proc/sys/vm/{name}").read_text().strip()


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


def test_the_same_bad_change_undone_by_hand_when_the_job_is_not_used(
    private_server: PrivateServer, tmp_path: Path
) -> None:
    result = badchange.run(lab(private_server, tmp_path), use_runner=False)
    f = result.figures
    assert f["path"] == "by hand" and f["state"] == "rolled-back"
    assert "page size" in f["log"]
    assert f["page_size"] == "16384"
    assert not (private_server.include_dir / badchange.DROP_IN).exists()
