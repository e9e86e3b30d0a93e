"""The Qt wizard (the only package that imports Qt)."""
