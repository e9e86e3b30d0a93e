"""Slider 6: the key buffer where MyISAM tables hold data, and the advice to convert them."""

from __future__ import annotations

from app.domain.words import count
from app.planner.context import Ctx
from app.planner.values import MIB, round_up, size_text


def myisam(ctx: Ctx) -> None:
    """key_buffer_size only where MyISAM tables hold data, and the advice to convert them."""
    name = "key_buffer_size"
    used = [e for e in ctx.server.engines if e.engine.lower() == "myisam" and e.tables > 0]
    if not used or not any(e.data_bytes + e.index_bytes for e in used):
        ctx.leave(
            name,
            "myisam",
            "No MyISAM table holds data, so the key buffer does not matter for writes.",
        )
        return
    tables = sum(e.tables for e in used)
    index = sum(e.index_bytes for e in used)
    data = sum(e.data_bytes for e in used)
    hold = "holds" if tables == 1 else "hold"
    ctx.warn(
        f"{count(tables, 'MyISAM table')} {hold} {size_text(data + index)}: MyISAM has no "
        "transactions and no crash recovery, so a crash can lose or corrupt recent changes "
        "whatever slider 1 says. Convert them: ALTER TABLE db.tbl ENGINE=InnoDB;"
    )
    if not ctx.positions.myisam:
        ctx.leave(name, "myisam", "The MyISAM slider is off: the key buffer stays as it is.")
        return
    proposed = max(8 * MIB, round_up(index * 1.2, MIB))
    current = ctx.num(name)
    if current is not None and abs(proposed - current) <= current // 10:
        ctx.leave(name, "myisam", f"It is {size_text(current)}, about the MyISAM index size.")
        return
    ctx.server_change(
        name,
        str(proposed),
        f"{count(tables, 'MyISAM table')} {hold} {size_text(index)} of indexes, so the key "
        "buffer holds them all with a fifth to spare (at least 8 MiB).",
        "myisam",
        risk="Memory given to the key buffer is taken from the buffer pool's room; MyISAM itself "
        "still loses or corrupts recent changes in a crash.",
    )
