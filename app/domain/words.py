"""Counts and sentences in plain words: "1 server instance", "2 other queries", one period.

Every count a person reads (the window, the command line, the doctor) goes through
:func:`count`, so none reads "1 change(s)" or "1 other queries". The job on the target
cannot import this module (it is standard library only): ``app.targetjob.formats.count``
is its copy, and a test keeps the two the same.
"""

from __future__ import annotations

_VOWELS = "aeiou"


def plural(noun: str) -> str:
    """The plural of an English ``noun`` as InnoTune uses them (the last word changes).

    >>> plural("other query"), plural("change"), plural("process"), plural("key")
    ('other queries', 'changes', 'processes', 'keys')
    """
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def count(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and the noun, singular for one: "1 change", "0 changes", "3 other queries".

    ``many`` is the plural when :func:`plural` would get it wrong ("3 data" for "datum").
    """
    return f"{n} {noun if n == 1 else (many or plural(noun))}"


def sentence(text: str) -> str:
    """``text`` ending in exactly one full stop (a question or exclamation mark stays).

    Error texts often end in their own period already; "…failed: {problem}." would then
    read "..". An ellipsis is kept as it is.
    """
    text = text.rstrip()
    if not text or text.endswith(("…", "...", "?", "!")):
        return text
    return text.rstrip(".") + "."


def size_text(n: float | None) -> str:
    """Bytes for people: 1.5 GiB, 96 MiB, 512 KiB."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{value:.0f} B"
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - the loop returns at TiB
