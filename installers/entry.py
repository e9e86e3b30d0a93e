"""The frozen program's entry point (PyInstaller runs this as ``__main__``)."""

from app.main import main

raise SystemExit(main())
