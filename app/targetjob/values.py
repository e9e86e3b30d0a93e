"""Values as servers and kernels print them: the one "same value" test, SQL and sysfs spelling.

The job gets typed values (name, value, kind) and spells the SQL for them here; nothing on
the target reads SQL text back.

The planner (is a change needed?), the describers (does a later file beat ours?) and the job
(are the settings in force the planned ones?) all compare values with :func:`same_value`.
Standard library only, Python 3.7+: this module runs on the target too.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import re
from typing import Any

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtpe]?)b?\s*$", re.IGNORECASE)
_TRUE = {"on", "1", "true", "yes"}
_FALSE = {"off", "0", "false", "no"}
_PLAIN_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
# The buffer pool is rounded UP to a multiple of chunk size x instances (128 MiB x up to 8
# on MySQL 8): at most this much above the wanted size.
_POOL_ROUNDING = 1073741824


def parse_int(text: str | None) -> int | None:
    """An integer, with the option-file suffixes K, M, G, T, P, E; None if not one."""
    if text is None:
        return None
    match = _SIZE.match(text)
    if match is None:
        return None
    power = " kmgtpe".index(match.group(2).lower() or " ")
    return int(match.group(1)) * int(1024**power)


def parse_bool(text: str | None) -> bool | None:
    """ON/OFF, 1/0, TRUE/FALSE, YES/NO (any case); None if not a boolean."""
    if text is None:
        return None
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None


def parse_float(text: str | None) -> float | None:
    """A plain decimal number; None if not one."""
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def normalise(value: str | None, kind: str) -> str | None:
    """The canonical spelling for comparisons: sizes in bytes, ON/OFF, enums case-folded.

    Args:
        value: as the server (SHOW VARIABLES), the kernel or the planner spells it.
        kind: the catalogue type: bool, int, size, float, enum.
    """
    if value is None:
        return None
    if kind == "bool":
        flag = parse_bool(value)
        return value.strip().lower() if flag is None else ("ON" if flag else "OFF")
    if kind in ("int", "size"):
        number = parse_int(value)
        return value.strip().lower() if number is None else str(number)
    if kind == "float":
        number_f = parse_float(value)
        return value.strip().lower() if number_f is None else repr(number_f)
    return value.strip().casefold()


def same_value(
    actual: str | None, wanted: str | None, kind: str = "", key: str = "", rounded: bool = False
) -> bool:
    """True when two spellings mean the same value (``1`` and ``ON``, ``128M`` and bytes).

    Args:
        actual: the value as the server, the kernel or an option file has it.
        wanted: the value planned.
        kind: the catalogue type (bool, int, size, float, enum) when known; without it
            both sides are read as booleans, then sizes, then numbers, else as words.
        key: the variable's name (for ``rounded``).
        rounded: also allow the server's own rounding of a number it was given: the
            buffer pool UP to a chunk multiple (within 1 GiB), other numbers to a block
            size (within 2 %, or 1 MiB for values of 16 MiB and more).
    """
    if actual is None or wanted is None:
        return False
    if kind:
        if normalise(actual, kind) == normalise(wanted, kind):
            return True
    elif actual.strip().casefold() == wanted.strip().casefold():
        return True
    else:
        for parse in (parse_bool, parse_int, parse_float):
            a, w = parse(actual), parse(wanted)
            if a is not None and w is not None:
                if a == w:
                    return True
                break
    if not rounded:
        return False
    fa, fw = parse_int(actual), parse_int(wanted)
    na = float(fa) if fa is not None else parse_float(actual)
    nw = float(fw) if fw is not None else parse_float(wanted)
    if na is None or nw is None:
        return False
    if key == "innodb_buffer_pool_size":
        return nw <= na <= nw + _POOL_ROUNDING
    return abs(na - nw) <= max(abs(nw) * 0.02, 1048576.0 if nw >= 16777216 else 0.0)


def sql_literal(value: str) -> str:
    """A value for SET GLOBAL: a plain number as it is, anything else quoted and escaped."""
    if _PLAIN_NUMBER.match(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


_VARIABLE = re.compile(r"^[a-z][a-z0-9_]*$")


def _variable(key: str) -> str:
    if not _VARIABLE.match(key):
        raise ValueError("not a server variable name: %r" % key)
    return key


def set_global(key: str, value: str) -> str:
    """The ``SET GLOBAL`` the job sends for a typed value (the preview shows the same text).

    Raises:
        ValueError: ``key`` is not a server variable name.
    """
    return "SET GLOBAL %s = %s" % (_variable(key), sql_literal(value))


def persist_sql(key: str, value: str, how: str) -> str:
    """What keeps mysqld-auto.cnf from undoing the option files (MySQL's SET PERSIST).

    ``how`` is ``reset`` (``RESET PERSIST IF EXISTS``: the option file then wins) or
    ``persist`` (``SET PERSIST_ONLY`` InnoTune's value; the live value is set apart).

    Raises:
        ValueError: not a variable name, or an unknown ``how``.
    """
    if how == "reset":
        return "RESET PERSIST IF EXISTS %s" % _variable(key)
    if how == "persist":
        return "SET PERSIST_ONLY %s = %s" % (_variable(key), sql_literal(value))
    raise ValueError("unknown way to treat a persisted value: %r" % how)


def sysctl_path(key: str) -> str:
    """``vm.swappiness`` → ``/proc/sys/vm/swappiness`` (the file the job writes)."""
    return "/proc/sys/" + key.replace(".", "/")


def active_value(text: str) -> str:
    """The value as set: the bracketed entry of ``none [mq-deadline] bfq``, else the text."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


def live_write(kind: str, key: str, value: str, path: str | None) -> tuple[str, str]:
    """Where the job writes a live sysfs/sysctl value, and the line that says so."""
    where = sysctl_path(key) if kind == "sysctl" else str(path or "")
    return where, "write %s to %s" % (value, where)


#: Pairs (low, high) of dynamic variables the server keeps as low <= high. MySQL clamps a
#: SET GLOBAL that would break it (innodb_io_capacity_update() and
#: innodb_io_capacity_max_update() in ha_innodb.cc: "Setting innodb_io_capacity to ...");
#: MariaDB 10.11 moves the other value instead. Either way the pair must change in an order
#: where every single statement keeps low <= high.
ORDERED_PAIRS = (("innodb_io_capacity", "innodb_io_capacity_max"),)


def _number(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def ordered_settings(
    items: list[Any], key_of: Any, value_of: Any, now: dict[str, Any]
) -> list[Any]:
    """``items`` (values to set or saved values) in an order the server takes without clamping.

    For each pair in :data:`ORDERED_PAIRS` that both change: when ``low`` rises above its
    value ``now`` the ``high`` one goes first (it makes room), otherwise ``low`` goes first
    (it gets out of the way). Every statement then keeps low <= high, given that the final
    values do. Items outside the pairs keep their places.
    """
    items = list(items)
    for low, high in ORDERED_PAIRS:
        spots = {key_of(item): i for i, item in enumerate(items)}
        if low not in spots or high not in spots:
            continue
        i, j = sorted((spots[low], spots[high]))
        new_low, old_low = _number(value_of(items[spots[low]])), _number(now.get(low))
        raising = new_low is not None and old_low is not None and new_low > old_low
        first, second = (high, low) if raising else (low, high)
        pair = {low: items[spots[low]], high: items[spots[high]]}
        items[i], items[j] = pair[first], pair[second]
    return items
