"""The write path drawn as boxes: directory → filesystem → volumes → physical disks."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.domain.facts import VIRTUAL_TRANSPORTS, BlockDevice, WritePath

BOX_W, BOX_H, GAP = 250, 58, 26


def device_caption(d: BlockDevice) -> tuple[str, str]:
    """Title and detail line of a device box."""
    kind = {"disk": "disk", "partition": "partition", "dm": "volume", "md": "RAID", "loop": "loop"}
    title = f"{d.name} — {kind.get(d.kind, d.kind)}"
    if d.md_level:
        title += f" {d.md_level}"
    if d.dm_target and d.dm_target not in ("other", "partition"):
        title += f" ({d.dm_target})"
    bits = []
    if d.transport:
        bits.append(d.transport)
    if d.transport in VIRTUAL_TRANSPORTS or d.rotational is None:
        # What a virtual disk reports says nothing of the disk behind it (as the text says).
        bits.append("spins: not known")
    else:
        bits.append("spinning" if d.rotational else "SSD/flash")
    if d.scheduler:
        bits.append(f"sched {d.scheduler}")
    return title, ", ".join(bits) or "details unknown"


def path_boxes(path: WritePath) -> list[tuple[str, str]]:
    """The boxes to draw for ``path``, top first (pure, so tests can read them)."""
    boxes = [(path.directory, "data written here")]
    data_mode = path.option("data")
    fs_detail = ",".join(o for o in path.mount_options if o in ("noatime", "relatime", "ro", "rw"))
    if data_mode:
        fs_detail += f", data={data_mode}"
    boxes.append(
        (f"{path.fs_type or '?'} at {path.mount_point or '?'}", fs_detail or "options unknown")
    )
    boxes += [device_caption(d) for d in path.devices]
    return boxes


class WritePathView(QWidget):
    """Draws one or more write paths side by side, each as a column of boxes."""

    def __init__(self) -> None:
        super().__init__()
        self.columns: list[list[tuple[str, str]]] = []
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("write path picture")

    def set_paths(self, paths: list[WritePath]) -> None:
        """Show these paths (duplicates by mount point shown once)."""
        seen: set[str | None] = set()
        self.columns = []
        for p in paths:
            if p.mount_point in seen and p.mount_point is not None:
                continue
            seen.add(p.mount_point)
            self.columns.append(path_boxes(p))
        self.setAccessibleDescription(
            " | ".join(" → ".join(t for t, _ in col) for col in self.columns)
        )
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        rows = max((len(c) for c in self.columns), default=1)
        return QSize(len(self.columns) * (BOX_W + GAP) + GAP, rows * (BOX_H + GAP) + GAP)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.sizeHint()

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        fm = QFontMetrics(self.font())
        for ci, column in enumerate(self.columns):
            x = GAP + ci * (BOX_W + GAP)
            for ri, (title, detail) in enumerate(column):
                y = GAP / 2 + ri * (BOX_H + GAP)
                rect = QRectF(x, y, BOX_W, BOX_H)
                painter.setPen(QPen(pal.color(QPalette.ColorRole.Mid), 1.2))
                painter.setBrush(pal.color(QPalette.ColorRole.AlternateBase))
                painter.drawRoundedRect(rect, 8, 8)
                painter.setPen(pal.color(QPalette.ColorRole.Text))
                inner = rect.adjusted(8, 6, -8, -6)
                painter.drawText(
                    inner.adjusted(0, 0, 0, -BOX_H / 2),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    fm.elidedText(title, Qt.TextElideMode.ElideMiddle, int(inner.width())),
                )
                painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
                painter.drawText(
                    inner.adjusted(0, BOX_H / 2 - 6, 0, 0),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    fm.elidedText(detail, Qt.TextElideMode.ElideRight, int(inner.width())),
                )
                if ri + 1 < len(column):
                    self._arrow(painter, QPointF(x + BOX_W / 2, y + BOX_H), GAP)
        painter.end()

    def _arrow(self, painter: QPainter, start: QPointF, length: float) -> None:
        end = QPointF(start.x(), start.y() + length - 4)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1.5))
        painter.drawLine(start, end)
        head = QPainterPath()
        head.moveTo(end)
        head.lineTo(end.x() - 5, end.y() - 7)
        head.lineTo(end.x() + 5, end.y() - 7)
        head.closeSubpath()
        painter.fillPath(head, self.palette().color(QPalette.ColorRole.Mid))
