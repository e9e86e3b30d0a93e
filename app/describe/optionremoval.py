"""Obsolete option lines removed from the files that hold them (``option_remove`` changes)."""

from __future__ import annotations

from collections.abc import Sequence

from app.describe.actions import ApplyError, Host, read_file_or_none, stat_files
from app.domain.plan import Change
from app.optionfiles import holds_secrets, parse, remove_option_line, render


def line_of(change: Change) -> int:
    """The line number an ``option_remove`` change is about (its id ends in ``:LINE``)."""
    try:
        return int(change.id.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise ApplyError(f"{change.id}: no line number in a line removal.") from None


def remove_lines(
    removals: Sequence[Change], host: Host
) -> tuple[dict[str, tuple[bytes, bytes, tuple[str, str]]], list[str], list[Change]]:
    """Each file's bytes before and after removing the lines; what could not be removed.

    Returns:
        path -> (before, after, (mode, owner)); the reasons for lines left in place; the
        removals done.
    """
    edits: dict[str, tuple[bytes, bytes, tuple[str, str]]] = {}
    unsupported: list[str] = []
    done: list[Change] = []
    by_path: dict[str, list[Change]] = {}
    for change in removals:
        by_path.setdefault(change.path or "", []).append(change)
    for path, group in by_path.items():
        if not path.startswith("/"):
            unsupported.extend(f"{c.id}: no option file named." for c in group)
            continue
        before = read_file_or_none(host, path)
        if before is None:
            unsupported.extend(
                f"{c.id}: {path} no longer exists; nothing to remove." for c in group
            )
            continue
        option_file = parse(before, path)
        if holds_secrets(option_file):
            unsupported.extend(
                f"{path} holds a password, so InnoTune does not rewrite it: delete line "
                f"{line_of(c)} ({c.current}) yourself."
                for c in group
            )
            continue
        # From the last line up, so the line numbers of the others stay as read.
        for change in sorted(group, key=line_of, reverse=True):
            try:
                option_file = remove_option_line(option_file, line_of(change), change.key)
            except ValueError as exc:
                unsupported.append(f"{exc}; the file changed since the inspection: plan again.")
                continue
            done.append(change)
        after = render(option_file)
        if after != before:
            stats = stat_files(host, [path])
            edits[path] = (before, after, stats.get(path, ("0644", "")))
    return edits, unsupported, done
