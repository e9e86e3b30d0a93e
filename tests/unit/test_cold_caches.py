"""``make test-cold`` moves the test caches aside and always puts them back.

(tests/cold_caches.py)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cold_caches import aside, caches_aside

ROOT = Path(__file__).resolve().parents[2]


def _warm(tmp_path: Path) -> list[Path]:
    caches = [tmp_path / "hosts", tmp_path / "containers"]
    for cache in caches:
        cache.mkdir()
        (cache / "image").write_text(f"warm {cache.name}")
    return caches


def _back(caches: list[Path]) -> None:
    for cache in caches:
        assert [p.name for p in cache.iterdir()] == ["image"], cache
        assert (cache / "image").read_text() == f"warm {cache.name}"
        assert not aside(cache).exists()


def test_the_caches_are_empty_during_the_run_and_back_after_a_failure(tmp_path: Path) -> None:
    caches = _warm(tmp_path)
    with pytest.raises(ValueError, match="the run failed"), caches_aside(caches, say=str):
        assert not any(c.exists() for c in caches)
        caches[0].mkdir()
        (caches[0] / "cold-built").write_text("built by the cold run")
        raise ValueError("the run failed")
    _back(caches)


def test_a_cache_aside_for_a_cold_run_still_going_stops_a_new_one(tmp_path: Path) -> None:
    caches = _warm(tmp_path)
    # A live process whose command line names the cold run's module.
    going = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "tests.cold_caches"]
    )
    try:
        # Until it has exec'd, the child's command line is still pytest's.
        cmdline = Path(f"/proc/{going.pid}/cmdline")
        deadline = time.monotonic() + 30
        while b"tests.cold_caches" not in cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        left = tmp_path / f"hosts.warm-{going.pid}"
        left.mkdir()
        with pytest.raises(RuntimeError, match="still goes"), caches_aside(caches, say=str):
            pass
        assert left.exists()
        _back(caches)
    finally:
        going.kill()
        going.wait()


def test_a_cache_a_killed_cold_run_left_aside_is_put_back_first(tmp_path: Path) -> None:
    caches = _warm(tmp_path)
    # As a cold run killed outright leaves them: the warm caches aside, half-built ones in place.
    dead = subprocess.Popen([sys.executable, "-c", "pass", "tests.cold_caches"])
    dead.wait()
    for cache in caches:
        cache.rename(tmp_path / f"{cache.name}.warm-{dead.pid}")
        cache.mkdir()
        (cache / "half-built").write_text("built by the killed run")
    said: list[str] = []
    with caches_aside(caches, say=said.append):
        assert not any(c.exists() for c in caches)
    _back(caches)
    assert any("killed" in line for line in said), said


def _cold(tmp_path: Path, *command: str) -> subprocess.Popen[str]:
    env = {**os.environ, "INNOTUNE_TEST_HOSTS_CACHE": str(tmp_path / "hosts")}
    argv = [sys.executable, "-m", "tests.cold_caches", "--force", "--", *command]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def test_the_command_s_failure_is_the_cold_run_s_and_the_caches_come_back(
    tmp_path: Path,
) -> None:
    caches = _warm(tmp_path)
    run = _cold(tmp_path, "sh", "-c", f"test ! -e {caches[0]} && mkdir {caches[0]} && exit 3")
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 3, out
    _back(caches)


def test_a_terminated_cold_run_puts_the_caches_back(tmp_path: Path) -> None:
    caches = _warm(tmp_path)
    flag = tmp_path / "started"
    run = _cold(tmp_path, "sh", "-c", f"touch {flag}; sleep 60")
    deadline = time.monotonic() + 30
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flag.exists() and not caches[0].exists()
    stopped = time.monotonic()
    run.send_signal(signal.SIGTERM)
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 130, out
    assert "the caches are back" in out
    assert time.monotonic() - stopped < 20, "the command's group was not ended at once"
    _back(caches)
