"""All eight exercises through `innotune exercise NAME --quick --json --out FILE`, headless.

The practice server is started once for the module, on an ext4 filesystem of its own on a
loop device (its I/O scheduler is the kernel's "none"), and every exercise runs on it
through the command line's handler, in its short form. Each test asserts the figures the
exercise teaches, and that the server's settings are back as configured afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import run_cli
from app.practice.binaries import find_binaries
from app.practice.practice import PracticeServer
from tests.hosts.loopdev import LoopFs
from tests.hosts.util import need, need_root

# Settings the exercises change; each must be back afterwards.
WATCHED = (
    "innodb_log_file_size",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_log_at_trx_commit",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_buffer_pool_size",
)


@pytest.fixture(scope="module")
def practice() -> Iterator[PracticeServer]:
    """The practice server, on an ext4 loop filesystem of its own; gone afterwards."""
    need_root()
    need(Path("/dev/loop-control").exists(), "no loop device support (/dev/loop-control)")
    need(find_binaries() is not None, "no MariaDB/MySQL server programs installed")
    # Short: the socket path under it must fit the 107 bytes of a Unix socket address.
    top = Path(tempfile.mkdtemp(prefix="itx-"))
    # Sparse: the 1 GiB redo log and the power cut's images take real space only while used.
    fs = LoopFs(image=top / "disk.img", mountpoint=top / "m", size_mb=3072)
    server = PracticeServer(top / "m" / "practice")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(top / "home"))  # the command's log, not the user's
        try:
            fs.attach()
            server.start()
            yield server
        finally:
            server.stop()
            fs.detach()
            shutil.rmtree(top, ignore_errors=True)


def settings(practice: PracticeServer) -> dict[str, str]:
    lines = practice.server.query("SELECT " + ", ".join(f"@@GLOBAL.{n}" for n in WATCHED))
    return dict(zip(WATCHED, lines.splitlines()[-1].split("\t"), strict=True))


def exercise(practice: PracticeServer, name: str, tmp_path: Path) -> dict[str, Any]:
    """Run ``innotune exercise NAME`` and return its saved JSON; the settings are back."""
    before = settings(practice)
    out = tmp_path / f"{name}.json"
    argv = ["exercise", name, "--dir", str(practice.base), "--quick", "--json", "--out", str(out)]
    assert run_cli(argv) == 0
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["exercise"] == name and result["rows"] and "{" not in result["explanation"]
    assert settings(practice) == before, f"{name} left settings changed"
    assert not list(practice.server.include_dir.glob("9*-innotune-exercise*"))
    return result


def _vm(name: str) -> str:
    return Path(f"/proc/sys/vm/{name}").read_text().strip()


def by_level(result: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(r["level"]): r for r in result["figures"]["runs"]}


def test_redo_log_size_writes_fewer_pages_per_1000_transactions_with_1_gib(
    practice: PracticeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = exercise(practice, "redolog", tmp_path)
    f = result["figures"]
    assert f["small"] == "16 MiB" and f["large"] == "1 GiB"  # MariaDB: no smaller than the buffer
    small, large = f["runs"]
    assert large["pages_per_1000"] < small["pages_per_1000"]
    assert large["total_per_1000"] < small["total_per_1000"]
    assert 0 < f["fewer_percent"] <= 100
    assert small["peak_checkpoint_age"] > 0 and large["peak_checkpoint_age"] > 0
    assert small["commits_per_s"] > 0 and large["commits_per_s"] > 0
    # The conclusion is the measured one: a percentage only when the rounds separate.
    text = result["explanation"]
    assert f["pages_sentence"] in text and f["rate_sentence"] in text
    if f["pages_verdict"] == "better":
        assert f"{f['fewer_percent']:.0f} % fewer pages" in text
    else:
        assert "no clear difference" in text or "more pages" in text
    assert f["live"] == "changed live, without a restart"  # MariaDB 10.9+ resizes it live
    # The command also printed its progress, one line per phase, on stderr.
    err = capsys.readouterr().err
    assert "Redo log 16 MiB, round 1 of 5" in err and "Redo log 1 GiB, round 5 of 5" in err


def test_doublewrite_copies_every_page_when_on_and_none_when_off(
    practice: PracticeServer, tmp_path: Path
) -> None:
    result = exercise(practice, "doublewrite", tmp_path)
    f = result["figures"]
    on, off = f["runs"]
    assert on["setting"] == "ON" and off["setting"] == "OFF"
    assert on["pages_written"] > 0 and on["dblwr_pages_written"] > 0
    assert off["pages_written"] > 0 and off["dblwr_pages_written"] == 0
    assert on["dblwr_pages_written"] <= on["pages_written"]
    assert on["commits_per_s"] > 0 and off["commits_per_s"] > 0
    read_only = practice.server.query(
        "SELECT READ_ONLY FROM information_schema.SYSTEM_VARIABLES "
        "WHERE VARIABLE_NAME = 'INNODB_DOUBLEWRITE'"
    ).split()[-1]
    assert off["live"] is (read_only == "NO")  # measured, not assumed: 10.11 needs a restart
    assert f["cost_sentence"] in result["explanation"]
    assert "data=journal" in result["explanation"]


def test_flushing_keeps_fewer_pages_dirty_at_the_disks_measured_rate(
    practice: PracticeServer, tmp_path: Path
) -> None:
    result = exercise(practice, "flushing", tmp_path)
    f = result["figures"]
    low, fit = f["runs"]
    assert low["io_capacity"] == 100 and fit["io_capacity"] == f["disk_rate"] >= 200
    assert low["level"] > fit["level"]
    assert len(low["dirty_percent"]) >= 10 and len(fit["dirty_percent"]) >= 10
    assert max(low["dirty_percent"]) > 0
    assert f["scheduler"] == "none"  # the loop device's
    assert "is a loop device" in result["explanation"]
    assert "without sorting or merging them" in result["explanation"]
    chart = result["chart"]
    assert chart and len(chart["series"]) == 2
    assert all(len(v) == len(chart["categories"]) for v in chart["series"].values())


def test_crash_loses_nothing_acknowledged_at_1_and_2(
    practice: PracticeServer, tmp_path: Path
) -> None:
    result = exercise(practice, "crash", tmp_path)
    runs = by_level(result)
    assert all(row[-1] == "yes" for row in result["rows"])
    for level in (1, 2):
        assert runs[level]["acked"] > 0 and runs[level]["lost"] == 0
    assert runs[0]["lost"] <= runs[0]["window"] < runs[0]["acked"]


def test_power_cut_loses_nothing_at_1_and_at_most_the_window_at_2(
    practice: PracticeServer, tmp_path: Path
) -> None:
    before = (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs"))
    result = exercise(practice, "powercut", tmp_path)
    assert result["recorded"] is None  # root and loop devices: a real run
    runs = by_level(result)
    assert runs[1]["acked"] > 0 and runs[1]["lost"] == 0
    assert runs[2]["lost"] <= runs[2]["window"] < runs[2]["acked"]
    # Restored and removed: the kernel settings, the loop devices, the mounts, the files.
    assert (_vm("dirty_writeback_centisecs"), _vm("dirty_expire_centisecs")) == before
    work = practice.base.with_name("exercises") / "powercut"
    assert (
        str(work)
        not in subprocess.run(["losetup", "-l", "-n"], capture_output=True, text=True).stdout
    )
    assert str(work) not in Path("/proc/self/mounts").read_text()
    assert not work.exists()


def test_buffer_pool_that_fits_reads_nothing_from_disk(
    practice: PracticeServer, tmp_path: Path
) -> None:
    small, fits = exercise(practice, "bufferpool", tmp_path)["figures"]["runs"]
    assert small["pool_bytes"] < fits["pool_bytes"]
    assert small["disk_reads"] > small["updates"] * 0.5
    assert fits["disk_reads"] <= fits["updates"] * 0.01


def test_restart_locks_clients_out_for_a_while(practice: PracticeServer, tmp_path: Path) -> None:
    f = exercise(practice, "restart", tmp_path)["figures"]
    assert f["failed"] >= 1
    assert 0 < f["downtime"] <= f["shutdown"] + f["startup"] + 3.0


@pytest.mark.usefixtures("own_apply_jobs")
def test_a_bad_change_is_rolled_back_by_the_apply_job(
    practice: PracticeServer, tmp_path: Path
) -> None:
    need(os.geteuid() == 0, "the apply job keeps its journal under /var/lib/innotune")
    f = exercise(practice, "badchange", tmp_path)["figures"]
    assert f["path"] == "InnoTune's apply job", f["why"]
    assert f["state"] == "rolled-back" and f["failed_start"]
    assert f["page_size"] == "16384" and f["restored"]
