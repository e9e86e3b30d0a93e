"""The one memory arithmetic: RAM less each part kept for the rest is what the pool may take.

Every sentence about the buffer pool's memory (the slider's note, the plan's sentence, the
reasons and risks, the starting point's why) takes its figures from a :class:`MemorySum`,
so the figures a person reads add up to the total each sentence names, within the
rounding they are shown with (:func:`app.domain.words.size_text`):

    total - parts = room;  room = fits + bookkeeping(fits)
    total - parts - pool - bookkeeping(pool) = free

Pure functions; no facts are read here (:mod:`app.planner.budget` builds the sum).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.words import size_text

#: InnoDB keeps its own bookkeeping beside the pool (about 5% of it).
POOL_OVERHEAD = 1.05


@dataclass(frozen=True)
class Part:
    """One share of memory kept for something other than the buffer pool.

    Attributes:
        words: what it is kept for, as the sentence names it ("the OS").
        size: bytes.
        detail: words after the figure inside its parentheses (": key buffer 8 MiB, ...").
    """

    words: str
    size: int
    detail: str = ""

    def text(self) -> str:
        """The part as the sentence shows it: "the OS (2.4 GiB)"."""
        return f"{self.words} ({size_text(self.size)}{self.detail})"


@dataclass(frozen=True)
class MemorySum:
    """The total, the parts kept for the rest, and what is left for the pool.

    Attributes:
        total: the host's RAM, or the memory limit of the server's container when that binds.
        parts: what is kept for the rest, part by part.
        container: True when ``total`` is the container's limit.
        cap: at most this for the pool and its bookkeeping (the job refuses a pool above
            90% of a container's limit); None: no cap beyond the parts.
    """

    total: int
    parts: tuple[Part, ...]
    container: bool = False
    cap: int | None = None

    @property
    def reserved(self) -> int:
        """All the parts together."""
        return sum(p.size for p in self.parts)

    @property
    def left(self) -> int:
        """The total less the parts (can be negative)."""
        return self.total - self.reserved

    @property
    def room(self) -> int:
        """What the pool and its bookkeeping may take together (never negative)."""
        room = max(0, self.left)
        return room if self.cap is None else min(room, self.cap)

    @property
    def capped(self) -> bool:
        """True when the cap, not the parts, limits the room."""
        return self.cap is not None and self.cap < self.left

    @property
    def fits(self) -> int:
        """The largest pool whose bookkeeping fits in the room with it."""
        return int(self.room / POOL_OVERHEAD)

    @staticmethod
    def bookkeeping(pool: int) -> int:
        """What InnoDB keeps beside a pool of this size."""
        return int(pool * POOL_OVERHEAD) - pool

    def free(self, pool: int) -> int:
        """What stays free with this pool and everything else in use (can be negative)."""
        return self.left - pool - self.bookkeeping(pool)

    # -- the words ---------------------------------------------------------------------------

    def _of(self) -> str:
        if self.container:
            return f"the {size_text(self.total)} the server's container may use"
        return f"the {size_text(self.total)} of RAM"

    def _list(self) -> str:
        texts = [p.text() for p in self.parts if p.size or p.detail]
        if not texts:
            return "nothing"
        return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]

    def fits_words(self) -> str:
        """The budget in one clause, every figure adding up to the total it starts from."""
        head = f"of {self._of()}, room is kept for {self._list()}, "
        if self.left < 0:
            return head + f"which is {size_text(-self.left)} more than there is, so no pool fits"
        head += f"which leaves {size_text(self.left)}"
        if self.capped and self.cap is not None:
            head += (
                f", and the pool with its bookkeeping may take at most {size_text(self.cap)} "
                "of it (a tenth of the container's limit stays free: the job refuses more)"
            )
        fits = self.fits
        return (
            f"{head}; the pool needs about 5% more for its bookkeeping, so at most "
            f"{size_text(fits)} fits (with {size_text(self.bookkeeping(fits))} of bookkeeping)"
        )

    def free_sum(self, pool: int) -> str:
        """How the free memory comes about, figure by figure (in parentheses after it)."""
        kept = "kept for the connections and the server's other memory"
        if not self.container:
            kept = (
                "kept for the OS, the other processes, the connections and the server's other "
                "memory"
            )
            if any(p.words.startswith("the other database servers") for p in self.parts):
                kept = (
                    "kept for the OS, the other processes and database servers, the connections "
                    "and the server's other memory"
                )
        return (
            f"{self._of()} less {size_text(self.reserved)} {kept}, less the "
            f"{size_text(pool)} pool and its {size_text(self.bookkeeping(pool))} of bookkeeping"
        )

    def free_words(self, pool: int, thin: int) -> str:
        """What stays free with this pool, said plainly, with the sum that gives it.

        Args:
            pool: the buffer pool.
            thin: below this, what stays free is called thin.
        """
        free = self.free(pool)
        how = self.free_sum(pool)
        if free < 0:
            return (
                f"with every connection busy the server needs {size_text(-free)} more than there "
                f"is ({how}), so Linux may swap or its OOM killer may end the server"
            )
        risk = (
            "thin, so a memory-hungry process or a burst of connections can make Linux swap "
            "or its OOM killer end the server"
        )
        if free < 1024 * 1024:
            return f"with every connection busy nothing stays free ({how}): {risk}"
        if free < thin:
            return f"with every connection busy only {size_text(free)} stay free ({how}): {risk}"
        return (
            f"with every connection busy {size_text(free)} stay free ({how}), so the OOM killer "
            "should not need to end the server"
        )


def share_text(pool: int, ram: int) -> str:
    """The pool's own share of RAM as a person reads it: "55%", "0.4%", "under 0.1%"."""
    share = pool * 100 / ram
    if share >= 1:
        return f"{round(share)}%"
    if share >= 0.05:
        return f"{share:.1f}%"
    return "under 0.1%"
