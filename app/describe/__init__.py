"""The describers: one module per kind of change, each with ``describe(changes, host)``.

They only describe (:class:`app.describe.actions.Action`) and never write;
:mod:`app.describe.registry` finds each kind's describer. The preview is rendered from those
Actions, the job on the target (:mod:`app.targetjob`, shipped by :mod:`app.jobs`), built from
the same ones, is the only code that changes a server, and the export (:mod:`app.export`)
writes the same Actions for a fleet.
"""
