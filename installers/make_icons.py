"""Render resources/icons/innotune.svg to the PNG sizes, the Windows .ico and the macOS .icns.

Run from the checkout (``make icons``); the results are committed, so a build needs no drawing
tools. Qt renders the SVG; the .ico and .icns containers hold PNG images and are written here
byte by byte (both formats allow PNG entries: Windows Vista+, macOS 10.7+).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size (the @2x types share sizes).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),
    (b"icp6", 64),
    (b"ic12", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic13", 256),
    (b"ic09", 512),
    (b"ic14", 512),
)


def render(size: int) -> bytes:
    """The SVG drawn at ``size`` x ``size`` pixels, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ICONS / "innotune.svg"))
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNG images."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = 6 + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        blobs += png
        offset += len(png)
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file whose elements are PNG images."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    """Write every icon file next to the SVG."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    pngs = {size: render(size) for size in PNG_SIZES}
    for size, png in pngs.items():
        (ICONS / f"innotune-{size}.png").write_bytes(png)
    (ICONS / "innotune.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (ICONS / "innotune.icns").write_bytes(icns(pngs))
    del app
    print(f"wrote {len(pngs)} PNGs, innotune.ico and innotune.icns in {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
