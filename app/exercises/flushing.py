"""Exercise 8: dirty pages under a steady write load, at io_capacity 100 and at the disk's rate.

innodb_io_capacity tells the page cleaner how many pages a second it may write in the
background. Too low for the disk, and changed ("dirty") pages pile up in the buffer pool
faster than they are written; at the rate the disk can take, they level off low. The
disk's rate is measured first (the same probe as the wizard's "measure the disk").
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from app.domain.errors import InnoTuneError
from app.exercises.model import Chart, ExerciseResult, Lab, text_for
from app.exercises.tools import (
    Sampler,
    Settings,
    Workload,
    drop_table,
    judge,
    load_table,
    restore_leftovers,
    server_words,
    write_out,
)
from app.inspect.diskprobe import probe_disk
from app.mysql import burst
from app.remote.local import LocalTransport

TABLE = "flush_rows"
DIRTY = "Innodb_buffer_pool_pages_dirty"
TOTAL = "Innodb_buffer_pool_pages_total"
#: The page cleaner starts writing in the background above this share of dirty pages.
LOW_WATER = 5
#: Within this many percentage points of its final level the dirty share counts as settled.
BAND = 3.0
#: io_capacity when the disk probe gives no page rate.
FALLBACK = 2000


@dataclass(frozen=True)
class FlushRun:
    """One io_capacity's outcome: the dirty share once a second."""

    io_capacity: int
    dirty: list[float]  # per cent of the buffer pool, one a second from the start of the load
    write_seconds: int  # how many of those seconds the load ran

    @property
    def level(self) -> float:
        """Where the dirty share ended under the load (the last three seconds' mean)."""
        tail = self.dirty[max(0, self.write_seconds - 3) : self.write_seconds] or [0.0]
        return sum(tail) / len(tail)

    @property
    def settled_after(self) -> int | None:
        """Seconds until the dirty share stayed within BAND of its level (None: never)."""
        loaded = self.dirty[: self.write_seconds]
        # Settled means at least the last three loaded seconds within the band.
        for i in range(max(0, len(loaded) - 3)):
            if all(abs(v - self.level) <= BAND for v in loaded[i:]):
                return i + 1
        return None

    @property
    def drained_after(self) -> int | None:
        """Seconds after the load stopped until the dirty share was at LOW_WATER or below."""
        for i, v in enumerate(self.dirty[self.write_seconds :]):
            if v <= LOW_WATER:
                return i + 1
        return None

    @property
    def steady(self) -> list[float]:
        """The second half of the loaded seconds: the samples a verdict compares."""
        return self.dirty[self.write_seconds // 2 : self.write_seconds]


def block_device(directory: Path) -> tuple[Path | None, str]:
    """The sysfs node of the block device under ``directory`` and its active I/O scheduler."""
    try:
        dev = os.stat(directory).st_dev
        node = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve()
    except OSError:
        return None, "unknown"
    queue = node / "queue" / "scheduler"
    if not queue.exists():
        queue = node.parent / "queue" / "scheduler"  # a partition: its disk's queue
    try:
        text = queue.read_text().strip()
    except OSError:
        return node, "unknown"
    found = re.search(r"\[(\S+)\]", text)
    return node, found.group(1) if found else text


MEANINGS = {
    "none": (
        "'none' hands the writes to the device in the order they come, without sorting or "
        "merging them: the usual choice for SSDs, NVMe and loop devices, which do their own "
        "ordering. (Older kernels called it 'noop'; since Linux 5.0 every disk uses the "
        "multi-queue block layer, where it is 'none'.) So nothing between InnoDB and the "
        "device holds its page writes back: how fast they go is io_capacity's and the disk's "
        "business."
    ),
    "mq-deadline": (
        "'mq-deadline' sorts writes by position and gives every request a deadline, so reads "
        "are not starved by a flood of page writes."
    ),
    "bfq": "'bfq' shares the disk fairly between processes, at some cost in CPU.",
    "kyber": "'kyber' keeps reads and writes within target latencies.",
}


def scheduler_words(directory: Path) -> tuple[str, str]:
    """The I/O scheduler of the device under ``directory`` and what it means, in words."""
    node, active = block_device(directory)
    if node is None:
        return active, "The device under the data directory could not be found."
    words = f"The data directory is on {node.name}, whose I/O scheduler is {active!r}"
    backing = node / "loop" / "backing_file"
    if backing.exists():
        file = backing.read_text().strip()
        under, under_active = block_device(Path(file).parent)
        words += (
            f"; {node.name} is a loop device: its writes become writes to the file {file}, "
            "which the kernel then passes to the disk that file is on"
        )
        if under is not None:
            words += f" ({under.name}, scheduler {under_active!r})"
    meaning = MEANINGS.get(active, "")
    if active != "none":
        meaning += (
            " (A loop device, such as the power-cut exercise's, has 'none': it hands the "
            "writes on in the order they come and leaves the ordering to the disk under it.)"
        )
    return active, f"{words}. {meaning}".strip()


def measured_rate(lab: Lab) -> tuple[int, str]:
    """The disk's page writes per second under the datadir, and how it was measured."""
    transport = LocalTransport()
    try:
        probe = probe_disk(transport, str(lab.server.datadir), seconds=1.0, mib=8)
    except InnoTuneError as exc:
        return FALLBACK, f"the disk probe failed ({exc.problem}); {FALLBACK} assumed"
    finally:
        transport.close()
    if not probe.page_writes_per_s:
        return FALLBACK, f"the disk probe gave no page rate; {FALLBACK} assumed"
    rate = max(200, int(round(probe.page_writes_per_s, -2)))
    return rate, (
        f"{probe.page_writes_per_s:.0f} page writes a second (measured with "
        f"{probe.page_method or probe.method}, {probe.page_queue_depth} writes in flight)"
    )


def measure(
    lab: Lab, settings: Settings, capacity: int, *, rows: int, rate: float, seconds: int, tail: int
) -> FlushRun:
    """Write out every dirty page, then a steady load for ``seconds`` and ``tail`` more idle."""
    settings.set("innodb_io_capacity_max", max(2000, 2 * capacity))
    settings.set("innodb_io_capacity", capacity)
    sock = str(lab.server.socket_path)
    session = burst.connect(sock)
    try:
        write_out(session, TABLE)  # start from a clean pool
    finally:
        session.close()
    lab.say(f"io_capacity {capacity}: {rate:.0f} transactions a second for {seconds} s …")
    with Sampler(sock, [DIRTY, TOTAL], interval=1.0) as sampler:
        Workload(sock, TABLE, rows).run(seconds=seconds, rate=rate)
        lab.say(f"io_capacity {capacity}: load stopped; watching for {tail} s more …")
        lab.check()
        sampler.wait_for(seconds + tail)
    dirty = [100 * s[DIRTY] / s[TOTAL] if s[TOTAL] else 0.0 for _, s in sampler.samples[1:]]
    found = FlushRun(capacity, dirty[: seconds + tail], seconds)
    lab.say(f"io_capacity {capacity}: {found.level:.1f} % of the pool dirty as the load ended.")
    return found


def run(
    lab: Lab,
    *,
    rows: int = 30000,
    rate: float = 100.0,
    seconds: int = 12,
    tail: int = 6,
) -> ExerciseResult:
    """Measure the disk, then the same steady load at io_capacity 100 and at its rate."""
    lab.server.start()
    restore_leftovers(lab)
    session = burst.connect(str(lab.server.socket_path))
    try:
        server = server_words(session)
    finally:
        session.close()
    scheduler, scheduler_text = scheduler_words(lab.server.datadir)
    lab.say("Measuring how many page writes a second the disk takes …")
    disk_rate, how = measured_rate(lab)
    lab.say(f"The disk: {how}.")
    settings = Settings(lab)
    runs: list[FlushRun] = []
    try:
        settings.set("innodb_flush_log_at_trx_commit", 2)
        settings.set("innodb_max_dirty_pages_pct_lwm", LOW_WATER)
        load_table(lab, TABLE, rows)
        for capacity in (100, disk_rate):
            lab.check()
            runs.append(
                measure(lab, settings, capacity, rows=rows, rate=rate, seconds=seconds, tail=tail)
            )
    finally:
        lab.say("Putting io_capacity and the other settings back …")
        settings.restore()
        drop_table(lab, TABLE)
    low, fit = runs
    word, _ = judge(low.steady, fit.steady, higher_is_better=False)
    figures = {
        "server": server,
        "disk_rate": disk_rate,
        "how": how,
        "scheduler": scheduler,
        "scheduler_text": scheduler_text,
        "rate": rate,
        "seconds": seconds,
        "level_low": low.level,
        "level_fit": fit.level,
        "verdict": word,
        "settle_sentence": " ".join(_settled(r) for r in runs),
        "verdict_sentence": _verdict_sentence(word, low, fit),
        "runs": [
            {
                "io_capacity": r.io_capacity,
                "dirty_percent": r.dirty,
                "level": r.level,
                "settled_after": r.settled_after,
                "drained_after": r.drained_after,
            }
            for r in runs
        ],
    }
    length = max(len(r.dirty) for r in runs)
    return ExerciseResult(
        exercise="flushing",
        headers=[
            "io_capacity",
            "dirty pages under the load",
            "settled after",
            "back under 5 % after the load",
        ],
        rows=[
            [
                str(r.io_capacity),
                f"{r.level:.1f} %",
                f"{r.settled_after} s" if r.settled_after else "did not settle",
                f"{r.drained_after} s" if r.drained_after else f"not within {tail} s",
            ]
            for r in runs
        ],
        chart=Chart(
            title=f"Dirty pages, once a second (the load stops after {seconds} s)",
            categories=[f"{i + 1} s" for i in range(length)],
            series={
                f"io_capacity {r.io_capacity}": [round(v, 1) for v in r.dirty]
                + [0.0] * (length - len(r.dirty))
                for r in runs
            },
            y_label="% of the buffer pool dirty",
        ),
        explanation=text_for("flushing").explain(figures),
        figures=figures,
    )


def _settled(r: FlushRun) -> str:
    if r.settled_after is None:
        return (
            f"At io_capacity {r.io_capacity} the dirty share was still moving when the load "
            f"stopped ({r.level:.1f} % at the end)."
        )
    return (
        f"At io_capacity {r.io_capacity} it settled after {r.settled_after} s, at about "
        f"{r.level:.1f} % of the pool."
    )


def _verdict_sentence(word: str, low: FlushRun, fit: FlushRun) -> str:
    if word == "better":
        return (
            f"At the disk's rate the page cleaner kept up: {fit.level:.1f} % dirty instead of "
            f"{low.level:.1f} %."
        )
    if word == "worse":
        return (
            f"Here more pages stayed dirty at the disk's rate ({fit.level:.1f} % against "
            f"{low.level:.1f} %): the machine was probably busy with something else."
        )
    return (
        "No clear difference between the two: the load was light enough for both "
        f"({low.level:.1f} % and {fit.level:.1f} % dirty)."
    )
