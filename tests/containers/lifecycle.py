"""InnoTune's whole lifecycle on a server in a container, as a user runs it: `innotune`.

Two containers of one image on one engine: ``NAME-conf`` with a host directory mounted on
/etc/mysql/conf.d (and compose labels), ``NAME-plain`` without one. The steps: doctor,
inspect, plan, preview, apply with a restart into the mounted directory, rollback (the
directory byte for byte as before), apply refused without a mounted directory (nothing
written) and the compose export offered instead, and the benchmark inside the container.
Each step's result and time go into a table (:func:`table`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.containers.engines import Engine, ImageSpec

REPO = Path(__file__).resolve().parents[2]
TRX = "innodb_flush_log_at_trx_commit"
# Only the crash-loss slider moves: the kernel and disks are this machine's.
SLIDERS = ("--crash-loss", "os", "--fit-disks", "off", "--fit-os", "off",
           "--memory-share", "keep", "--redo", "keep")  # fmt: skip
# The write rates are sampled for a moment only: no step here reads them (the sampling through
# the engine runs all the same; the rates' figures are tested on a server of the suite's own,
# tests/integration/test_bench.py::test_write_rate_sees_another_writer and
# tests/unit/test_server_facts.py).
SAMPLE = ("--sample", "0.2")
JOB_ID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}(?:-restore)?\b")


@dataclass
class Step:
    """One step of the lifecycle: what it was, how it ended, how long it took."""

    name: str
    ok: bool
    seconds: float
    detail: str = ""


@dataclass
class Lifecycle:
    """The steps run on one engine and image, and the job ids to clean up."""

    engine: str
    server: str
    steps: list[Step] = field(default_factory=list)
    job_ids: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every step passed."""
        return all(s.ok for s in self.steps)


def innotune(engine: Engine, data_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`innotune ARGS` with the engine's environment and its own data directory."""
    env = dict(engine.environ(), XDG_DATA_HOME=str(data_home))
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def listing(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes."""
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path)): p.read_bytes() for p in files}


def run_lifecycle(
    engine: Engine,
    spec: ImageSpec,
    workdir: Path,
    *,
    bench_seconds: float = 15,
    bench_threads: int = 2,
) -> Lifecycle:
    """Start the two containers, run every step, remove the containers; the steps' results.

    A failed step is recorded with its output and the lifecycle goes on where it can (the
    later steps of the mounted container need its apply).
    """
    name = f"innotune-{engine.name}-{spec.host}-{os.getpid()}"
    conf, plain = f"{name}-conf", f"{name}-plain"
    conf_dir = workdir / "conf"
    data_home = workdir / "innotune-data"
    result = Lifecycle(engine.name, f"{spec.flavour} {spec.line} ({spec.host} image)")
    labels = {"com.docker.compose.project": "shop", "com.docker.compose.service": "db"}

    def step(title: str, work: Callable[[], str]) -> bool:
        began = time.monotonic()
        try:
            detail, ok = work(), True
        except AssertionError as exc:
            detail, ok = str(exc)[-3000:], False
        result.steps.append(Step(title, ok, time.monotonic() - began, detail))
        return ok

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = innotune(engine, data_home, *args)
        result.job_ids.extend(JOB_ID.findall(done.stdout + done.stderr))
        return done

    def passed(done: subprocess.CompletedProcess[str]) -> str:
        assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def trx(container: str) -> str:
        return engine.sql(container, spec, f"SELECT @@GLOBAL.{TRX}")

    began = time.monotonic()
    # Both initialise their datadirs side by side; then each must answer its client.
    engine.start_server(conf, spec, data_dir=workdir / "data-conf", conf_dir=conf_dir,
                        labels=labels, env={"MARIADB_AUTO_UPGRADE": "1"})  # fmt: skip
    engine.start_server(plain, spec, data_dir=workdir / "data-plain")
    engine.wait_ready(conf, spec)
    engine.wait_ready(plain, spec)
    result.steps.append(Step("start both containers", True, time.monotonic() - began))
    try:
        snapshot: list[str] = []

        def doctor() -> str:
            out = passed(cli("doctor", "local", "--instance", conf))
            assert f"{engine.name} container {conf}" in out, out
            assert f"inside the container, reached through {engine.name} exec" in out, out
            assert "All steps passed" in out, out
            every = cli("doctor", "local").stdout  # several instances: the list names them
            assert conf in every and plain in every, every
            return "all 8 steps OK; both containers listed"

        def inspect() -> str:
            out = passed(cli("inspect", "local", "--instance", conf, *SAMPLE))
            assert "in a container" in out, out
            assert "compose project shop, service db" in out, out
            assert f"data /var/lib/mysql: on the host at {workdir / 'data-conf'}" in out, out
            assert f"a host directory {conf_dir} mounted on /etc/mysql/conf.d" in out, out
            assert f"Write path of {workdir / 'data-conf'}" in out, out
            assert "environment variables the entrypoint reads (MARIADB_AUTO_UPGRADE)" in out
            return "container, compose labels, data and options found"

        def plan() -> str:
            out = passed(cli("plan", "local", "--instance", conf, *SAMPLE, *SLIDERS,
                             "--out", str(workdir / "plan.json")))  # fmt: skip
            changes = json.loads((workdir / "plan.json").read_text())["changes"]
            assert any(c["key"] == TRX and c["proposed"] == "2" for c in changes), out
            return f"{TRX} 1 -> 2"

        def preview() -> str:
            out = passed(cli("preview", "local", "--instance", conf, *SAMPLE, *SLIDERS,
                             "--restart"))  # fmt: skip
            assert f"{conf_dir}/99-innotune.cnf (new file" in out, out
            assert "the container reads it as /etc/mysql/conf.d/99-innotune.cnf" in out, out
            assert f"{engine.name} restart {conf}" in out, out
            assert "the kernel and disk settings are this host's" in out, out
            return "drop-in in the mounted directory, restart through the engine"

        before = listing(conf_dir)

        def apply() -> str:
            pid = engine.cli("inspect", "-f", "{{.State.Pid}}", conf).strip()
            out = passed(cli("apply", "local", "--instance", conf, *SAMPLE, *SLIDERS,
                             "--restart", "--yes", "--watch", "2"))  # fmt: skip
            found = re.search(r"^\s*snapshot\s+(\S+)$", out, re.MULTILINE)
            assert found, out
            snapshot.append(found.group(1))
            assert "99-innotune.cnf" in listing(conf_dir), out
            assert trx(conf) == "2", out
            assert engine.cli("inspect", "-f", "{{.State.Pid}}", conf).strip() != pid, out
            healthy = re.search(r"healthy after ([\d.]+ s)", out)
            return f"written on the host, restarted ({healthy.group(1) if healthy else '?'})"

        def apply_live() -> str:
            pid = engine.cli("inspect", "-f", "{{.State.Pid}}", conf).strip()
            out = passed(cli("apply", "local", "--instance", conf, *SAMPLE, *SLIDERS,
                             "--yes", "--watch", "1"))  # fmt: skip
            found = re.search(r"^\s*snapshot\s+(\S+)$", out, re.MULTILINE)
            assert found, out
            assert trx(conf) == "2", out
            assert engine.cli("inspect", "-f", "{{.State.Pid}}", conf).strip() == pid, out
            back = passed(cli("rollback", "local", found.group(1), "--instance", conf, "--yes"))
            assert listing(conf_dir) == before, back
            assert trx(conf) == "1", back
            return "set live through exec, no restart; rolled back live"

        def rollback() -> str:
            assert snapshot, "no snapshot: the apply failed"
            out = passed(cli("rollback", "local", snapshot[0], "--instance", conf, "--yes"))
            assert listing(conf_dir) == before, out
            assert trx(conf) == "1", out
            return "directory byte for byte as before, value back"

        def refused() -> str:
            look = (
                "exec",
                plain,
                "ls",
                "-la",
                "--time-style=full-iso",
                "/etc/mysql",
                "/etc/mysql/conf.d",
                "/etc/mysql/mariadb.conf.d",
                "/etc/mysql/mysql.conf.d",
            )
            inside = engine.cli(*look, check=False)
            done = cli("apply", "local", "--instance", plain, *SAMPLE, *SLIDERS,
                       "--restart", "--yes")  # fmt: skip
            out = done.stdout + done.stderr
            assert "has no configuration directory kept on the host" in out, out
            assert "lost when the container is recreated" in out, out
            assert "nothing was changed" in out, out
            assert "== Option files ==" not in out, "a refused apply lists no actions"
            assert engine.cli(*look, check=False) == inside, "nothing written inside"
            assert trx(plain) == "1", out
            return "refused plainly; nothing written"

        def export() -> str:
            out = passed(cli("export", "local", "--instance", plain, *SAMPLE, *SLIDERS,
                             "--compose", str(workdir / "export")))  # fmt: skip
            # Started with plain `run`: the same run with the drop-in mounted, from where
            # the files are, into the include directory the server reads last.
            script = (workdir / "export" / "docker-run.sh").read_text()
            run = next(ln for ln in script.splitlines() if f"{engine.name} run " in ln)
            source = (workdir / "export" / "99-innotune.cnf").resolve()
            assert f"-v {source}:/etc/mysql/" in run and "/99-innotune.cnf:ro" in run, run
            assert f"--name {plain}" in run and "--network none" in run, run
            dropin = (workdir / "export" / "99-innotune.cnf").read_text()
            assert f"{TRX} = 2" in dropin, out
            return "docker run script and drop-in written"

        def bench() -> str:
            out = passed(cli("bench", "local", "--instance", conf, "--seconds",
                             f"{bench_seconds:g}", "--threads", str(bench_threads), "--rounds", "1",
                             *SAMPLE, "--yes", "--workloads", "small_tx"))  # fmt: skip
            assert "on the target" in out, out
            row = re.search(r"^small_tx\s+1\s+([\d,.]+)", out, re.MULTILINE)
            assert row and float(row.group(1).replace(",", "")) > 0, out
            engine_line = out.split(" with ", 1)[1].split(" (20", 1)[0] if " with " in out else ""
            return f"{engine_line}: {row.group(1)} commits/s at 1 client"

        for title, work in (
            ("doctor", doctor),
            ("inspect", inspect),
            ("plan", plan),
            ("preview", preview),
            ("apply live + rollback (no restart)", apply_live),
            ("apply (mounted conf dir) + restart", apply),
            ("rollback", rollback),
            ("apply (no mounted conf dir)", refused),
            ("export --compose", export),
            ("bench inside", bench),
        ):
            step(title, work)
    finally:
        engine.cli("rm", "-f", conf, plain, check=False)
    return result


def table(runs: list[Lifecycle]) -> str:
    """The lifecycle table: per container, each step's result and time."""
    lines = []
    for run in runs:
        lines.append(f"{run.engine} · {run.server}")
        lines.append(f"  {'step':<38} {'result':<6} {'time':>7}  detail")
        for s in run.steps:
            detail = s.detail.splitlines()[0][:90] if s.detail else ""
            lines.append(
                f"  {s.name:<38} {'ok' if s.ok else 'FAIL':<6} {s.seconds:>6.1f}s  {detail}"
            )
    return "\n".join(lines)
