"""The job as one zipapp, built in memory from this package's source files.

``python3 job.pyz DIR`` runs ``__main__.py``, which runs :func:`app.targetjob.main.main`
from the package inside the archive (relative imports keep it working under either
name). Entries carry a fixed date, so the same sources always give the same bytes (and
the same checksum: the tool on the target is replaced only when it differs).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
NAME = "targetjob"
NOT_SHIPPED = ("pack.py",)  # builds the archive on this computer
MAIN = b"import sys\n\nfrom targetjob.main import main\n\nsys.exit(main(sys.argv))\n"
_DATE = (2020, 1, 1, 0, 0, 0)


def sources() -> list[Path]:
    """The package's modules that travel to the target, in name order."""
    return sorted(p for p in PACKAGE.glob("*.py") if p.name not in NOT_SHIPPED)


def zipapp() -> bytes:
    """The zipapp's bytes: ``__main__.py`` and ``targetjob/*.py`` as source."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        entries = [("__main__.py", MAIN)]
        entries += [(f"{NAME}/{p.name}", p.read_bytes()) for p in sources()]
        for name, data in entries:
            info = zipfile.ZipInfo(name, _DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return out.getvalue()
