"""Where InnoTune keeps its files on this computer: the places of :mod:`app.places`.

They are the directories Qt's QStandardPaths names for the wizard (checked against Qt by
``tests/ui/test_platform_places.py``), found without loading Qt, so the command line and
the wizard always agree, e.g. on the practice server's directory.
"""

from __future__ import annotations

from app.places import app_data_dir, default_practice_dir, known_hosts_file

__all__ = ["app_data_dir", "default_practice_dir", "known_hosts_file"]
