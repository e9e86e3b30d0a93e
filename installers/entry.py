"""The frozen program's entry point (PyInstaller runs this as ``__main__``)."""

import os
import sys

# A windowed Windows build has no console: print() and argparse would fail on None streams.
if sys.stdout is None:
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
if sys.stderr is None:
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115

from app.main import main  # noqa: E402

raise SystemExit(main())
