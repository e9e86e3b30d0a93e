"""The Apply page's snapshot list: one heading per instance, and what a restore undoes.

The list shows the snapshots on the server grouped by instance, this server's marked; a
restore chosen in it (or the Roll back of the job just followed) asks first when it is not
the plain undo of this server's last change. The page asks the question and runs the restore.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QMessageBox, QWidget

from app.flows import snapshots
from app.ui.pages.apply_tasks import SnapshotListing

#: Asks whether to restore: the choice (None when the snapshot is not in the listing) and its id.
Ask = Callable[[snapshots.RollbackChoice | None, str], bool]


def show_listing(view: QListWidget, listing: SnapshotListing) -> None:
    """One heading per instance (this server's marked), its snapshots newest first."""
    chosen = view.currentItem()
    keep = chosen.data(256) if chosen is not None else None
    view.clear()
    bold = QFont()
    bold.setBold(True)
    for doc, group in snapshots.by_instance(listing.records):
        mine = bool(doc.get("key")) and doc.get("key") == listing.current_key
        heading = QListWidgetItem(
            ("This server: " if mine else "Instance ")
            + snapshots.describe_instance(doc)
            + f" — {sum(1 for r in group if r.in_force)} of {len(group)} in force"
        )
        heading.setFlags(Qt.ItemFlag.NoItemFlags)  # a heading, not a choice
        heading.setFont(bold)
        view.addItem(heading)
        for record in group:
            entry = QListWidgetItem("    " + record.line())
            entry.setData(256, record.id)
            entry.setData(257, record.state)
            entry.setToolTip(record.snapshot.summary())
            view.addItem(entry)
            if record.id == keep:
                view.setCurrentItem(entry)


def chosen_id(view: QListWidget) -> str | None:
    """The id of the snapshot chosen in the list (None: none, or a heading)."""
    item = view.currentItem()
    return str(item.data(256)) if item is not None and item.data(256) is not None else None


@dataclass(frozen=True)
class RestoreAnswer:
    """Restore, undoing ``undo`` (None: not known from a listing); or, ``refused``, why not."""

    undo: tuple[str, ...] | None = None
    refused: str = ""


def choose_restore(
    listing: SnapshotListing | None,
    snapshot_id: str,
    ask: Ask,
    own: bool = False,
    always_ask: bool = False,
) -> RestoreAnswer:
    """Whether to restore, asking first when it is not the plain undo of this server's last change.

    ``own``: the snapshot of the job this page followed (it belongs to the server it changed).
    ``always_ask``: a snapshot chosen in the list is restored only after a Yes, since the
    restore may restart the server.
    """
    not_restored = RestoreAnswer(
        refused=f"Snapshot {snapshot_id} was not restored; nothing was changed."
    )
    listed = listing is not None and any(r.id == snapshot_id for r in listing.records)
    if always_ask and not listed and not ask(None, snapshot_id):
        return not_restored
    if listing is None or not listed:
        return RestoreAnswer()
    try:
        choice = snapshots.choose_rollback(
            listing.records, None if own else listing.current_key, snapshot_id
        )
    except snapshots.RollbackRefused as exc:
        return RestoreAnswer(refused=f"{exc.problem} {exc.window_fix}".strip())
    asking = always_ask or choice.caveats or choice.undo
    if asking and not ask(choice, snapshot_id):
        return not_restored
    return RestoreAnswer(undo=tuple(r.id for r in choice.undo))


def restore_question(
    choice: snapshots.RollbackChoice | None, snapshot_id: str, argv: list[str] | None
) -> str:
    """The question before a restore: what comes back, what it undoes, and the restart.

    Another instance's snapshot, one already rolled back or superseded, or an older one
    whose restore also undoes newer changes: the question says which and why.
    """
    restart = "The server restarts if the restored settings need it" + (
        f" ({shlex.join(argv)})." if argv else "."
    )
    about = (
        [*choice.caveats, snapshots.rollback_text(choice)]
        if choice is not None
        else [f"Snapshot {snapshot_id}: its option files and values come back."]
    )
    return "\n\n".join([*about, restart, "Restore it?"])


def ask_before_restore(
    parent: QWidget,
    choice: snapshots.RollbackChoice | None,
    snapshot_id: str,
    argv: list[str] | None,
) -> bool:
    """Ask before a restore (it may restart the server); True only for Yes, No the default."""
    answer = QMessageBox.question(
        parent,
        "Restore this snapshot?",
        restore_question(choice, snapshot_id, argv),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes
