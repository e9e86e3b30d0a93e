"""The rules of the six sliders: facts + positions → changes, each with the fact behind it.

Every rule either proposes a change (through ``Ctx.server_change`` or ``Ctx.propose``) or
says why it leaves a knob alone. Rules run in slider order and read each other's results
only through ``Ctx.final``. One module per family of rules; RULES is the order they run in.
"""

from __future__ import annotations

from app.planner.rules import (
    container,
    disks,
    durability,
    memory,
    myisam,
    obsolete,
    operating_system,
    redo,
    reported,
)

#: The rules in the order they run: slider by slider (the binary log first: slider 1 asks
#: whether it stays; MyISAM before memory: the key buffer takes from the pool's room), then
#: the knobs no slider drives.
RULES = (
    durability.binlog,
    durability.crash_loss,
    myisam.myisam,
    memory.memory,
    redo.redo,
    durability.doublewrite,
    disks.fit_disks,
    operating_system.fit_os,
    reported.reported,
    obsolete.obsolete_lines,
    container.not_in_place,
)
