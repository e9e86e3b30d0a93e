"""The appliers: one module per kind of target, each with ``apply(..., dry_run=)``.

A dry run describes exactly what a real apply does (:class:`app.appliers.actions.Action`);
the preview is built from those descriptions only.
"""
