"""The job machinery on this side: ship a job to the target, follow and answer it, keep its record.

:mod:`app.jobs.runner` builds the bundle from the describers' Actions (:mod:`app.describe`),
starts the job (:mod:`app.targetjob`) on the target and follows it; :mod:`app.jobs.snapshot`
reads and keeps the snapshot it takes first; :mod:`app.jobs.history` lists what was applied
per server instance and chooses what a rollback restores.
"""
