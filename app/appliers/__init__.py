"""The appliers: one module per kind of change, each with ``describe(changes, host)``.

Appliers only describe (:class:`app.appliers.actions.Action`); :mod:`app.appliers.registry`
finds each kind's describer. The preview is rendered from those Actions, the job on the
target (:mod:`app.targetjob`), built from the same ones, is the only code that changes a
server, and the export (:mod:`app.export`) writes the same Actions for a fleet.
"""
