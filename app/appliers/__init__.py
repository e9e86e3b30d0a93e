"""The appliers: one module per kind of target, each with ``describe(...)``.

Appliers only describe (:class:`app.appliers.actions.Action`); the preview is rendered from
those Actions and the job on the target (:mod:`app.targetjob`), built from the same ones,
is the only code that changes a server.
"""
