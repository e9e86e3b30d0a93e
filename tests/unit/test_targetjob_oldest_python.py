"""The job's unit tests under the oldest python3 it promises on targets (3.7).

The zipapp is built as the runner builds it and put on ``sys.path``, so the tests exercise
the very archive that is shipped. The interpreter: ``INNOTUNE_OLDEST_PYTHON``, else a
pyenv's 3.7, else a ``python3.7`` on PATH; without one the test is skipped, saying so.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.targetjob import pack

OLDEST = (3, 7)
CASES = Path(__file__).with_name("test_targetjob.py")


def _runs(python: str) -> bool:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == str(OLDEST)


def _oldest_python() -> str | None:
    """The first python3.7 that runs (a pyenv shim on PATH may not)."""
    candidates = [os.environ.get("INNOTUNE_OLDEST_PYTHON", "")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.7.*/bin/python3")))
    candidates += [shutil.which("python3.7") or ""]
    return next((c for c in candidates if c and _runs(c)), None)


def test_the_job_package_runs_its_tests_under_the_oldest_python(tmp_path: Path) -> None:
    python = _oldest_python()
    if python is None:
        pytest.skip("no python3.7 on this computer (set INNOTUNE_OLDEST_PYTHON)")
    archive = tmp_path / "job.pyz"
    archive.write_bytes(pack.zipapp())
    shutil.copy(CASES, tmp_path / CASES.name)
    run = subprocess.run(
        [python, "-m", "unittest", "-v", CASES.stem],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(archive)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Ran " in run.stderr and "skipped" not in run.stderr
    # The archive itself runs there as the runner launches it.
    usage = subprocess.run([python, str(archive)], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage: job.pyz" in usage.stderr


def test_the_zipapp_holds_the_package_and_is_reproducible() -> None:
    import io
    import zipfile

    data = pack.zipapp()
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert names[0] == "__main__.py"
    assert sorted(names[1:]) == sorted(f"targetjob/{p.name}" for p in pack.sources())
    assert "targetjob/pack.py" not in names
    assert pack.zipapp() == data  # same sources, same bytes: the tool is re-sent only on change
