"""What set a benchmark run's pace besides the server: its clients, or CPUs busy elsewhere.

On a machine whose CPUs are busy, a commit can spend most of its time ready to run but waiting
for a CPU (the kernel's run-queue wait, read from the server's threads' schedstat), and no
setting of the server shortens that wait; :func:`cpu_wait` says when a run was paced that way.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.bench import BenchReport, WorkloadResult


def parse_schedstat(text: str) -> dict[str, int]:
    """The threads' ``schedstat`` lines summed: ``run_ns`` on a CPU, ``wait_ns`` waiting for one.

    Empty when no line could be read (no such process, or a kernel without schedstat).
    """
    run = wait = 0
    seen = False
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            run += int(parts[0])
            wait += int(parts[1])
            seen = True
    return {"run_ns": run, "wait_ns": wait} if seen else {}


#: A run whose server threads waited for a CPU this share of a commit's time or more (and
#: longer than they ran) was paced by the machine's CPUs: on the trixie host with two busy
#: loops, 3.3 ms of a 3.5 ms commit, against 0.005 ms on the quiet machine.
CPU_WAIT_SHARE = 0.25


@dataclass(frozen=True)
class CpuWait:
    """A run's wait for a CPU, per commit (milliseconds).

    Attributes:
        wait_ms: the time the server's threads together waited for a CPU, per commit.
        run_ms: the CPU they used per commit (None where unmeasured).
        commit_ms: one client's time per commit (clients / commits per second).
        paced: the wait was a large part of a commit (:data:`CPU_WAIT_SHARE`) and longer than
            the server's own work: the CPUs, busy, set the run's pace.
    """

    wait_ms: float
    run_ms: float | None
    commit_ms: float
    paced: bool


def cpu_wait(r: WorkloadResult) -> CpuWait | None:
    """The run's wait for a CPU per commit; None when unmeasured or no commit completed."""
    if r.cpu is None or r.cpu.server_wait is None or r.commits <= 0 or r.seconds <= 0:
        return None
    per_commit = r.seconds * 1000 / r.commits
    wait = r.cpu.server_wait * per_commit
    run = None if r.cpu.server_cores is None else r.cpu.server_cores * per_commit
    commit = max(1, r.threads) * per_commit
    paced = wait >= CPU_WAIT_SHARE * commit and (run is None or wait >= run)
    return CpuWait(round(wait, 3), None if run is None else round(run, 3), round(commit, 3), paced)


def cpu_wait_text(r: WorkloadResult) -> str:
    """What a run paced by busy CPUs waited, in a few words ("" when it was not paced)."""
    found = cpu_wait(r)
    if found is None or not found.paced:
        return ""
    ran = "" if found.run_ms is None else f" and ran {found.run_ms:.2f} ms"
    return f"waited {found.wait_ms:.2f} ms for a CPU{ran} per commit of {found.commit_ms:.2f} ms"


#: What the faces say above the runs :func:`cpu_wait_text` names.
CPU_WAIT_NOTE = (
    "The machine's CPUs were busy: in these runs the server's threads spent much of each commit "
    "ready to run but waiting for a CPU. No setting of the server shortens that wait, so it "
    "hides part of what a change does; measure at a quieter time to see a change whole."
)


def pace_text(reports: list[BenchReport]) -> str:
    """Which runs the clients limited, and which waited for a CPU much of each commit.

    Empty when none did; the Verify page shows it under the chart.
    """
    lines = []
    for report in reports:
        for r in report.client_bound:
            why = r.cpu.why if r.cpu is not None else ""
            lines.append(f"{report.label or 'run'}: {r.workload} ×{r.threads}: {why}")
    parts = []
    if lines:
        parts.append(
            "The clients, not the server, were the limit in these runs, so their figures (and "
            "any gain or loss between them) belong partly to the client: " + "; ".join(lines) + "."
        )
    waits = cpu_wait_note(reports, each=False)
    if waits:
        parts.append(waits)
    return "\n\n".join(parts)


#: What the command line says before each paced run's figures.
PER_RUN = "The server's threads, per run:"


def paced_runs(reports: list[BenchReport]) -> list[tuple[str, WorkloadResult, str]]:
    """(report's label, run, :func:`cpu_wait_text`) of every run busy CPUs paced, in order."""
    return [
        (report.label or "run", r, text)
        for report in reports
        for r in report.results
        if (text := cpu_wait_text(r))
    ]


def cpu_wait_note(reports: list[BenchReport], *, each: bool = True) -> str:
    """:data:`CPU_WAIT_NOTE` and the runs it names ("" none).

    ``each``: every run with its figures (the command line); else the runs named by report
    and one run's figures, the first, as an example (the window, where twelve runs' figures
    would be a wall of numbers).
    """
    paced = paced_runs(reports)
    if not paced:
        return ""
    if each:
        runs = "; ".join(f"{label}: {r.workload} × {r.threads}: {text}" for label, r, text in paced)
        return f"{CPU_WAIT_NOTE} {PER_RUN} {runs}."
    by_label: dict[str, list[str]] = {}
    for label, r, _text in paced:
        by_label.setdefault(label, []).append(f"{r.workload} ×{r.threads}")
    named = "; ".join(f"{label}: {', '.join(runs)}" for label, runs in by_label.items())
    label, first, text = paced[0]
    return (
        f"{CPU_WAIT_NOTE} Runs paced that way: {named}. For instance {label}, "
        f"{first.workload} ×{first.threads}: the server's threads {text}."
    )


def cpu_wait_summary(reports: list[BenchReport]) -> str:
    """One sentence for the Done page: how many runs busy CPUs paced ("" none)."""
    paced = len(paced_runs(reports))
    if not paced:
        return ""
    runs = "one run" if paced == 1 else f"{paced} runs"
    return (
        f"The machine's CPUs were busy: in {runs} the server spent much of each commit waiting "
        "for a CPU, which no setting shortens (the Verify page gives the figures)."
    )
